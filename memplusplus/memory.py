"""Mem++: non-destructive memory with lexical, tag and vector legs fused by weighted RRF.

Write: a document is stored whole with its date and author; empty texts and exact repeats of an
active row by the same author add no row; no generative model runs. Read: the active rows dated
up to the question's as-of day (archived rows never; superseded rows still) are ranked by each
leg (at most C candidates each), fused by weighted RRF, and the top k are the k - reserve best
fused rows followed by the ``reserve`` latest-dated remaining matched rows (short of matched
rows, the most recently ingested unmatched ones).

Library use: ``add``/``search`` (``search`` is the library's name for ``retrieve``, the name the
harness's MemorySystem protocol uses) and ``memplusplus.render`` for the evidence text.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime

import numpy as np

from memplusplus.ann import make_index
from memplusplus.diagnosis import Diagnosis, diagnosis
from memplusplus.facade import MemoryFacade, plan_ingest, without_nul
from memplusplus.fusion import FusedRow, weighted_rrf
from memplusplus.legs import tag_leg, vector_leg
from memplusplus.lexical import BM25Index, EnglishTextIndex, any_of, authors_or_terms, authors_query_words
from memplusplus.settings import MemPPConfig, tag_source
from memplusplus.scope import end_of_day
from memplusplus.store import Row, RowStore
from memplusplus.text import content_terms
from memplusplus.websearch_query import websearch_query
from memory_protocol.documents import Document, Hit


class MemPlusPlus(MemoryFacade):
    """The memory. ``add``/``search`` for agents; ``ingest``/``retrieve`` for harnesses."""

    def _open(self) -> None:
        self.store = RowStore(self.encoder.dimension)
        self._ann = make_index(self.config, self.encoder.dimension)
        self._bm25 = BM25Index()  # the bm25 lexical ranker's index, built at its first use
        self._english = EnglishTextIndex()  # the authors' lexical legs' index, built at its first use

    # ----- write ---------------------------------------------------------------------------
    def _stored_ids(self) -> int:
        return len(self.store) + len(self.store.aliases)

    def tag_of(self, doc: Document) -> str | None:
        """The text the tag leg indexes for ``doc`` under ``config.tags`` (None: the row has no tag)."""
        return tag_source(doc, self.config.tags)

    def ingest(self, documents: Iterable[Document], show_progress: bool = False) -> list[str | None]:
        """Store documents in order; embeds all new texts in one batch. Returns each one's row id."""
        plan = plan_ingest(list(documents), self.config.dedup, self._active_repeat)
        for doc_id, target in plan.aliases:
            self.store.add_alias(doc_id, target)
        vectors = self.encoder.encode([doc.text for _, doc in plan.new_rows], show_progress=show_progress)
        now = self.clock()
        for (index, doc), vector in zip(plan.new_rows, vectors):
            self.store.append(
                doc.doc_id, doc.text, doc.author, doc.date, doc.thread, now, vector,
                tag=self.tag_of(doc), evidence=doc.evidence,
            )
            plan.row_ids[index] = doc.doc_id
        return plan.row_ids

    def _active_repeat(self, doc: Document) -> str | None:
        row = self.store.active_duplicate(doc.author, doc.text)
        return None if row is None else row.doc_id

    def _seq(self, doc_id: str) -> int:
        row_id = self.store.aliases.get(doc_id, doc_id)
        if row_id not in self.store.by_doc_id:
            raise KeyError(f"no row holds document {doc_id!r}")
        return self.store.by_doc_id[row_id]

    def archive(self, doc_id: str) -> None:
        """Take a row out of every scope without deleting it (the only way a row leaves scope)."""
        self.store.archive(self._seq(doc_id))

    def supersede(self, old_doc_id: str, new_doc_id: str) -> None:
        """Link ``old`` to ``new`` as superseded by it. The old row stays active and retrievable
        with its own date (paper §3.3: the scope ignores supersession links)."""
        self.store.supersede(self._seq(old_doc_id), self.store.rows[self._seq(new_doc_id)].doc_id)

    # ----- read ----------------------------------------------------------------------------
    def scope_mask(self, as_of: date | datetime | None) -> np.ndarray:
        """S_theta as a boolean mask over row seqs: active rows dated up to the end of the as-of day.

        Supersession links are ignored here: a superseded row is still active, so still in scope.
        """
        theta = None if as_of is None else end_of_day(as_of)
        return self.store.scope_mask(theta)

    def leg_rankings(self, query: str, scope: np.ndarray) -> dict[str, list[int]]:
        """Each enabled leg's ranking (row seqs, best first, at most C) over the scoped rows."""
        cfg = self.config
        query = without_nul(query)  # as the Postgres backend must send it
        terms = content_terms(query, cfg.min_term_chars, cfg.max_query_terms)
        rankings: dict[str, list[int]] = {}
        if cfg.weight("lexical") > 0:
            rankings["lexical"] = self.paper_lexical_leg(query, terms, scope)
        if cfg.weight("tag") > 0:
            rankings["tag"] = tag_leg(self.store, terms, scope, cfg.candidates)
        if cfg.weight("vector") > 0:
            query_vector = self.encoder.encode_one(query)
            rankings["vector"] = vector_leg(self.store, query_vector, scope, cfg.candidates, self._ann)
        return rankings

    def paper_lexical_leg(self, query: str, terms: list[str], scope: np.ndarray) -> list[int]:
        """The paper's lexical leg (``memplusplus.lexical``): by cover density, the authors' OR of
        question words (disjunctive) or ``websearch_to_tsquery`` of the question; else BM25 over
        our content stems ``terms``."""
        cfg = self.config
        if cfg.lexical_ranker == "bm25":
            return self._bm25.leg(self.store, terms, cfg.conjunctive, scope, cfg.candidates)
        if cfg.conjunctive or not authors_query_words(query, cfg.min_term_chars, cfg.max_query_terms):
            node = websearch_query(query).root
        else:
            node = any_of(authors_or_terms(query, cfg.min_term_chars, cfg.max_query_terms))
        return self._english.leg(self.store, node, scope, cfg.candidates)

    def retrieve(self, query: str, as_of: date | datetime | None = None, k: int | None = None) -> list[Hit]:
        """Top-k hits for ``query`` among rows visible at ``as_of``, in rank order."""
        k = self.config.k if k is None else k
        if len(self.store) == 0 or k <= 0:
            return []
        scope = self.scope_mask(as_of)
        _, fused = self.ranked_lists(query, as_of, scope)
        return self._select(fused, scope, k)

    def ranked_lists(
        self, query: str, as_of: date | datetime | None, scope: np.ndarray
    ) -> tuple[dict[str, list[int]], list[FusedRow]]:
        """Each leg's ranking and the fused list the top k is taken from: what ``retrieve`` selects
        from and ``diagnose`` reports on (a read path with more steps overrides this one method)."""
        rankings = self.leg_rankings(query, scope)
        return rankings, weighted_rrf(rankings, {leg: self.config.weight(leg) for leg in rankings}, self.config.gamma)

    # The library's name (README, package docstring); ``retrieve`` is the MemorySystem protocol's.
    search = retrieve

    def diagnose(self, query: str, as_of: date | datetime | None, doc_ids: Iterable[str], depth: int) -> Diagnosis:
        """Where each of ``doc_ids`` stood for ``query``: its 1-based rank in every leg and in the
        fused list down to ``depth`` (None below it), from the rankings ``retrieve`` fuses, and how
        many rows each leg returned. Changes nothing ``retrieve`` returns."""
        wanted = list(doc_ids)
        seq_of = {}
        for doc_id in wanted:
            row_id = self.store.aliases.get(doc_id, doc_id)
            if row_id in self.store.by_doc_id:
                seq_of[doc_id] = self.store.by_doc_id[row_id]
        scope = self.scope_mask(as_of)
        rankings, fused = self.ranked_lists(query, as_of, scope) if len(self.store) else ({}, [])
        return diagnosis(wanted, seq_of, {seq: bool(scope[seq]) for seq in seq_of.values()}, rankings, fused, depth)

    def _select(self, fused: list[FusedRow], scope: np.ndarray, k: int) -> list[Hit]:
        """Top-k: fused rows first, then the recency reserve, then a fill up to k.

        The candidate order is the matched rows by fused score followed by the unmatched rows of
        the recency pool (the C most recently ingested in-scope rows), newest first, so a query
        that matches fewer than k rows still returns k rows when the scope has them. The first
        k - reserve candidates are taken; the reserve then holds the latest-dated remaining
        matched rows (undated rows by ingest time) or, short of those, the most recently
        ingested remaining unmatched ones; any slot still free takes the next candidates.

        The paper states the k - 3 fused + 3 latest-dated split; taking unmatched rows from the C
        most recently ingested in-scope rows to fill a short list, and ordering undated rows by
        ingest time, are our choices where it is silent. Rows of equal date keep their fused
        order (a stable sort by date), as the authors' reserve does (AIDAChip-Inc/mem-plus-plus,
        memory/store.py, ``_recall_scoped``: the matched leftovers, in fused order, are sorted by
        date with Python's stable sort).
        """
        rows = self.store.rows
        reserve_size = min(self.config.recency_reserve, k)
        matched = {f.seq for f in fused}
        recent_pool = np.flatnonzero(scope)[::-1][: self.config.candidates]
        unmatched = [FusedRow(int(seq), 0.0) for seq in recent_pool if int(seq) not in matched]
        ordered = fused + unmatched
        head, leftovers = ordered[: k - reserve_size], ordered[k - reserve_size :]
        # A stable sort: rows of equal date keep their fused order, as in the authors' reserve.
        pool = sorted((f for f in leftovers if f.seq in matched), key=lambda f: rows[f.seq].recency, reverse=True)
        pool += [f for f in leftovers if f.seq not in matched]  # already newest first
        reserve = pool[:reserve_size]
        chosen = {f.seq for f in head} | {f.seq for f in reserve}
        fill = [f for f in leftovers if f.seq not in chosen][: max(k - len(head) - len(reserve), 0)]
        return (
            [self._hit(f.seq, f.score, f.leg_ranks, False) for f in head]
            + [self._hit(f.seq, f.score, f.leg_ranks, True) for f in reserve]
            + [self._hit(f.seq, f.score, f.leg_ranks, False) for f in fill]
        )

    def _hit(self, seq: int, score: float, leg_ranks: dict[str, int], reserve: bool) -> Hit:
        row: Row = self.store.rows[seq]
        return Hit(
            doc_id=row.doc_id,
            text=row.text,
            date=row.date,
            author=row.author,
            score=score,
            leg_ranks=dict(leg_ranks),
            reserve=reserve,
            thread=row.thread,
            evidence=row.evidence,
        )


__all__ = ["MemPlusPlus", "MemPPConfig"]
