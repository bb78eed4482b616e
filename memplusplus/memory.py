"""Mem++ in process: non-destructive rows, lexical, tag and vector legs fused by weighted RRF, the
top k with a recency reserve (paper §3; ``search`` is the library's name for ``retrieve``)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime

import numpy as np

from memplusplus.ann import make_index
from memplusplus.diagnosis import Diagnosis, diagnosis
from memplusplus.facade import MemoryFacade, plan_ingest, without_nul
from memplusplus.fusion import FusedRow, weighted_rrf
from memplusplus.legs import tag_leg, vector_leg
from memplusplus.lexical import BM25Index, EnglishTextIndex, any_of, or_lexemes
from memplusplus.settings import MemPPConfig, tag_source
from memplusplus.scope import end_of_day
from memplusplus.store import RowStore
from memplusplus.topk import select_top_k
from memplusplus.text import content_terms
from memplusplus.websearch_query import websearch_query
from memory_protocol import Document, Hit, StoreSize


class MemPlusPlus(MemoryFacade):
    """The memory. ``add``/``search`` for agents; ``ingest``/``retrieve`` for harnesses."""

    def _open(self) -> None:
        self.store = RowStore(self.encoder.dimension)
        self._ann = make_index(self.config, self.encoder.dimension)
        self._bm25 = BM25Index()  # the bm25 lexical ranker's index, built at its first use
        self._english = EnglishTextIndex()  # the authors' lexical legs' index, built at its first use

    def _stored_ids(self) -> int:
        return len(self.store) + len(self.store.aliases)

    def tag_of(self, doc: Document) -> str | None:
        """The text the tag leg indexes for ``doc`` under ``config.tags`` (None: the row has no tag)."""
        return tag_source(doc, self.config.tags)

    def ingest(self, documents: Iterable[Document], show_progress: bool = False) -> list[str | None]:
        """Store documents in order, embedding new texts in one batch; each one's row id."""
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
        """Link ``old`` to ``new``; the old row stays in scope with its own date (paper §3.3)."""
        self.store.supersede(self._seq(old_doc_id), self.store.rows[self._seq(new_doc_id)].doc_id)

    def scope_mask(self, as_of: date | datetime | None) -> np.ndarray:
        """S_theta over row seqs: active rows (superseded ones too) dated up to the end of the as-of day."""
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
        """By cover density, the authors' leg (``memplusplus.lexical``); else BM25 over our stems ``terms``."""
        cfg = self.config
        if cfg.lexical_ranker == "bm25":
            return self._bm25.leg(self.store, terms, cfg.conjunctive, scope, cfg.candidates)
        lexemes = or_lexemes(query, cfg.conjunctive, cfg.min_term_chars, cfg.max_query_terms)
        node = websearch_query(query).root if lexemes is None else any_of(lexemes)
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
        """Each leg's ranking and the fused list ``retrieve`` and ``diagnose`` read (a subclass's hook)."""
        rankings = self.leg_rankings(query, scope)
        return rankings, weighted_rrf(rankings, {leg: self.config.weight(leg) for leg in rankings}, self.config.gamma)

    search = retrieve

    def store_size(self) -> StoreSize:
        """Nothing on disk; in memory its vector, date and state arrays and its rows' texts (UTF-8), not
        Python's object overhead nor its indexes (posting lists, stem streams, an ANN index)."""
        arrays = sum(array.nbytes for array in (self.store.vectors, self.store.dates, self.store.active))
        return StoreSize(0, arrays + sum(len(row.text.encode("utf-8")) for row in self.store.rows))

    def diagnose(self, query: str, as_of: date | datetime | None, doc_ids: Iterable[str], depth: int) -> Diagnosis:
        """Each of ``doc_ids``' 1-based rank in every leg and the fused list, down to ``depth``."""
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
        """Top-k by ``memplusplus.topk`` (the recency pool: the C most recently ingested in-scope rows)."""
        pool = [int(seq) for seq in np.flatnonzero(scope)[::-1][: self.config.candidates]]
        recency = {f.seq: self.store.rows[f.seq].recency for f in fused}
        chosen = select_top_k(fused, pool, recency, k, self.config.recency_reserve)
        return [self._hit(f.seq, f.score, f.leg_ranks, reserve) for f, reserve in chosen]

    def _hit(self, seq: int, score: float, leg_ranks: dict[str, int], reserve: bool) -> Hit:
        row = self.store.rows[seq]
        return Hit(row.doc_id, row.text, row.date, row.author, score, dict(leg_ranks), reserve, row.thread, evidence=row.evidence)


__all__ = ["MemPlusPlus", "MemPPConfig"]
