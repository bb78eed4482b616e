"""Mem++ in process: non-destructive rows, lexical, tag and vector legs fused by weighted RRF, the
top k with a recency reserve (paper §3; ``search`` is the library's name for ``retrieve``), and what
both backends (in process and Postgres) share: settings, encoder, clock, ``add`` and the ingest plan
(empty texts, exact repeats, NUL characters)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime

import numpy as np

from memplusplus.ann import AnnIndex, make_index
from memplusplus.encoder import CachedEncoder, Encoder
from memplusplus.english_tsearch import tsvector_positions
from memplusplus.lexical import BM25Index, PositionIndex, any_of, or_lexemes
from memplusplus.ranking import Diagnosis, FusedRow, diagnosis, end_of_day, select_top_k, weighted_rrf
from memplusplus.settings import MemPPConfig, tag_source
from memplusplus.store import RowStore
from memplusplus.text import content_terms, positional_stems
from memplusplus.websearch_query import websearch_query
from memory_protocol import Document, Hit, StoreSize


NUL = "\x00"


def without_nul(text: str) -> str:
    """``text`` without NUL (Postgres text holds none); dropped, not replaced: MiniLM drops them too,
    and text decoded from UTF-16 by mistake reads as its words again."""
    return text.replace(NUL, "") if NUL in text else text


def storable(doc: Document) -> Document:
    """``doc`` without NUL in text, author and thread; a NUL id is refused (ids match gold evidence)."""
    if NUL in doc.doc_id:
        raise ValueError(f"document id {doc.doc_id!r} holds a NUL character; ids must be plain text")
    fields = {"text": doc.text, "author": doc.author, "thread": doc.thread}
    if not any(value and NUL in value for value in fields.values()):
        return doc
    return replace(doc, **{name: value and without_nul(value) for name, value in fields.items()})


@dataclass
class IngestPlan:
    """Each document's row id (None: empty text), the new rows (batch position, document) and the
    repeats as aliases (doc_id, the row it repeats)."""

    row_ids: list[str | None]
    new_rows: list[tuple[int, Document]] = field(default_factory=list)
    aliases: list[tuple[str, str]] = field(default_factory=list)


def plan_ingest(docs: Sequence[Document], dedup: bool, active_repeat: Callable[[Document], str | None]) -> IngestPlan:
    """With ``dedup``, a repeat of an active row (``active_repeat``) or of an earlier document of the
    batch by the same author becomes an alias; empty texts add nothing; the rest get rows."""
    docs = [storable(doc) for doc in docs]  # the same text in both backends, refused before any row
    plan = IngestPlan([None] * len(docs))
    earlier: dict[tuple[str | None, str], str] = {}
    for index, doc in enumerate(docs):
        if not doc.text.strip():
            continue
        if dedup:
            target = active_repeat(doc) or earlier.get((doc.author, doc.text))
            if target is not None:
                plan.aliases.append((doc.doc_id, target))
                plan.row_ids[index] = target
                continue
            earlier[(doc.author, doc.text)] = doc.doc_id
        plan.new_rows.append((index, doc))
    return plan


class MemoryFacade:

    name = "mempp"

    def __init__(
        self,
        config: MemPPConfig = MemPPConfig(),
        encoder: CachedEncoder | None = None,
        clock: Callable[[], datetime] = datetime.now,
    ) -> None:
        self.config = config
        self.encoder = encoder if encoder is not None else Encoder()
        self.clock = clock
        self._open()

    def _open(self) -> None:
        """Set up the backend's own storage (the last step of ``__init__``)."""

    def ingest(self, documents: Iterable[Document], show_progress: bool = False) -> list[str | None]:
        raise NotImplementedError

    def leg_weights(self, legs: list[str]) -> dict[str, float]:
        return {leg: self.config.weight(leg) for leg in legs}

    def fuse(self, rankings: dict[str, list[int]]) -> list[FusedRow]:
        return weighted_rrf(rankings, self.leg_weights(list(rankings)), self.config.gamma)

    def _stored_ids(self) -> int:
        raise NotImplementedError

    def add(self, text: str, author: str | None = None, date: datetime | None = None, doc_id: str | None = None,
            thread: str | None = None) -> str | None:
        """Store one document (``author`` as its author); the id of the row holding it, None for empty text."""
        auto_id = f"row-{self._stored_ids()}"
        return self.ingest([Document(doc_id or auto_id, text, author, date, thread)])[0]



def tag_leg(store: RowStore, terms: Sequence[str], scope: np.ndarray, limit: int) -> list[int]:
    """Rows whose author tag shares a term with the question, most shared terms first, ties later
    ingest first (the paper names the leg; scoring by shared terms is our choice where it is silent)."""
    lists = [store.tag_postings[term] for term in set(terms) if term in store.tag_postings]
    if not lists:
        return []
    hits = np.concatenate(lists).astype(np.int64)
    seqs, counts = np.unique(hits[scope[hits]], return_counts=True)
    if seqs.size == 0:
        return []
    order = np.lexsort((-seqs, -counts.astype(np.float64)))
    return seqs[order[:limit]].tolist()


def vector_leg(
    store: RowStore, query_vector: np.ndarray, scope: np.ndarray, limit: int, ann: AnnIndex | None = None
) -> list[int]:
    """Exact cosine (dot product of unit vectors) over in-scope rows, or over the rows an opt-in
    ``ann`` index finds when the scope is large enough; both ordered by ``top_by_similarity``."""
    candidates = np.flatnonzero(scope)
    if candidates.size == 0:
        return []
    vectors = store.vectors
    if ann is not None and candidates.size >= ann.settings.ann_min_rows:
        found = ann.search(vectors, query_vector, scope, int(candidates.size), limit)
        if found is not None:  # rescored exactly, ordered as below
            sims = vectors[found] @ query_vector
            return found[np.lexsort((-found, -sims))[:limit]].tolist()
    if 4 * candidates.size >= len(vectors):  # one product over all rows beats a gather
        sims = (vectors @ query_vector)[candidates]
    else:
        sims = vectors[candidates] @ query_vector
    return top_by_similarity(candidates, sims, limit)


def top_by_similarity(candidates: np.ndarray, sims: np.ndarray, limit: int) -> list[int]:
    """The ``limit`` best row seqs by similarity, equal similarity later ingest first
    (``argpartition`` first, keeping every row tied with the last)."""
    if candidates.size > limit:
        threshold = sims[np.argpartition(-sims, limit - 1)[:limit]].min()
        keep = np.flatnonzero(sims >= threshold)
        candidates, sims = candidates[keep], sims[keep]
    order = np.lexsort((-candidates, -sims))
    return candidates[order[:limit]].tolist()



class MemPlusPlus(MemoryFacade):
    """The memory. ``add``/``search`` for agents; ``ingest``/``retrieve`` for harnesses."""

    def _open(self) -> None:
        self.store = RowStore(self.encoder.dimension)
        self._ann = make_index(self.config, self.encoder.dimension)
        self._bm25 = BM25Index()  # the bm25 lexical ranker's index, built at its first use
        self._english = PositionIndex(tsvector_positions)  # the authors' lexical leg's lexemes
        self._stems = PositionIndex(positional_stems)  # our stems: BM25's matches, plus's any-term leg

    def _stored_ids(self) -> int:
        return len(self.store) + len(self.store.aliases)

    def tag_of(self, doc: Document) -> str | None:
        """The text the tag leg indexes for ``doc`` under ``config.tags`` (None: the row has no tag)."""
        return tag_source(doc, self.config.tags)

    def ingest(self, documents: Iterable[Document], show_progress: bool = False) -> list[str | None]:
        """Store documents in order, embedding new texts in one batch; each one's row id."""
        plan = plan_ingest(list(documents), self.config.dedup, self._active_repeat)
        for doc_id, target in plan.aliases:
            self.store.aliases[doc_id] = target
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
            return self._bm25.leg(self.store, self._stems, terms, cfg.conjunctive, scope, cfg.candidates)
        lexemes = or_lexemes(query, cfg.conjunctive, cfg.min_term_chars, cfg.max_query_terms)
        node = websearch_query(query).root if lexemes is None else any_of(lexemes)
        return self._english.update(self.store).leg(node, scope, cfg.candidates)

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
        return rankings, self.fuse(rankings)

    search = retrieve

    def store_size(self) -> StoreSize:
        """Nothing on disk; in memory its vector, date and state arrays and its rows' texts (UTF-8), not
        Python's object overhead nor its indexes (posting lists, term positions, an ANN index)."""
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
        """Top-k by ``memplusplus.ranking`` (the recency pool: the C most recently ingested in-scope rows)."""
        pool = [int(seq) for seq in np.flatnonzero(scope)[::-1][: self.config.candidates]]
        recency = {f.seq: self.store.rows[f.seq].recency for f in fused}
        chosen = select_top_k(fused, pool, recency, k, self.config.recency_reserve)
        return [self._hit(f.seq, f.score, f.leg_ranks, reserve) for f, reserve in chosen]

    def _hit(self, seq: int, score: float, leg_ranks: dict[str, int], reserve: bool) -> Hit:
        row = self.store.rows[seq]
        return Hit(row.doc_id, row.text, row.date, row.author, score, dict(leg_ranks), reserve, row.thread, evidence=row.evidence)


__all__ = ["MemPlusPlus", "MemPPConfig"]
