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

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime

import numpy as np

from memplusplus.ann import AnnSettings, make_index
from memplusplus.encoder import CachedEncoder
from memplusplus.facade import MemoryFacade
from memplusplus.fusion import FusedRow, weighted_rrf
from memplusplus.legs import LEGS, lexical_leg, tag_leg, vector_leg
from memplusplus.scope import end_of_day
from memplusplus.store import Row, RowStore
from memplusplus.text import content_terms
from memplusplus.types import Document, Hit


TAG_SOURCES: tuple[str, ...] = ("none", "author", "speaker")


@dataclass(frozen=True)
class MemPPConfig:
    """Read-time settings; the paper's per-benchmark values (its Table 6) live in the dataset configs.

    ``weights`` maps each leg to its RRF weight; a leg with weight 0 is not run at all (the leg
    ablations). ``candidates`` is C, the most rows any one leg may return. ``min_term_chars`` and
    ``max_query_terms`` restrict which question words the lexical and tag legs use.

    ``tags`` is the tag leg's source (paper §3.2): "author" (the paper's rule) indexes a row's
    author only where its document names one as an author (``Document.author_role``);
    "speaker" also indexes conversational speakers; "none" indexes nothing.

    ``ann`` (none|hnsw|ivf) makes the vector leg approximate through faiss for scopes of at least
    ``ann_min_rows`` rows; the default, none, is the paper's exact search (``memplusplus.ann``).
    """

    weights: Mapping[str, float] = field(default_factory=lambda: {"lexical": 1.0, "tag": 1.0, "vector": 4.0})
    gamma: float = 60.0
    candidates: int = 50
    k: int = 50
    conjunctive: bool = True
    lexical_ranker: str = "cover_density"
    recency_reserve: int = 3
    dedup: bool = True
    min_term_chars: int = 1
    max_query_terms: int | None = None
    tags: str = "author"
    ann: str = "none"
    ann_min_rows: int = 50_000
    ann_m: int = 32
    ann_ef_construction: int = 80
    ann_ef_search: int = 128
    ann_nlist: int = 0
    ann_nprobe: int = 16

    def __post_init__(self) -> None:
        self.ann_settings()  # raises on bad ann values
        unknown = set(self.weights) - set(LEGS)
        if unknown:
            raise ValueError(f"unknown legs {sorted(unknown)}; legs are {list(LEGS)}")
        if any(weight < 0 for weight in self.weights.values()):
            raise ValueError("leg weights must be >= 0")
        if self.candidates < 1 or self.k < 1 or self.recency_reserve < 0:
            raise ValueError("candidates and k must be >= 1 and recency_reserve >= 0")
        if self.lexical_ranker not in ("cover_density", "bm25"):
            raise ValueError(f"unknown lexical_ranker {self.lexical_ranker!r}")
        if self.tags not in TAG_SOURCES:
            raise ValueError(f"unknown tags {self.tags!r}; expected one of {list(TAG_SOURCES)}")

    def weight(self, leg: str) -> float:
        return float(self.weights.get(leg, 0.0))

    def ann_settings(self) -> AnnSettings:
        return AnnSettings(
            self.ann, self.ann_min_rows, self.ann_m, self.ann_ef_construction, self.ann_ef_search,
            self.ann_nlist, self.ann_nprobe,
        )


def tag_source(doc: Document, tags: str) -> str | None:
    """The text the tag leg indexes for ``doc`` under the tag source ``tags`` (paper §3.2): an
    author only where the source names one (``author``), speakers too (``speaker``), or nothing."""
    if doc.author is None or tags == "none":
        return None
    if tags == "author" and doc.author_role != "author":
        return None
    return doc.author


class MemPlusPlus(MemoryFacade):
    """The memory. ``add``/``search`` for agents; ``ingest``/``retrieve`` for harnesses."""

    def __init__(
        self,
        config: MemPPConfig = MemPPConfig(),
        encoder: CachedEncoder | None = None,
        clock: Callable[[], datetime] = datetime.now,
    ):
        super().__init__(config, encoder, clock)
        self.store = RowStore(self.encoder.dimension)
        self._ann = make_index(config.ann_settings(), self.encoder.dimension)
        self._bm25 = None
        self._bm25_size = -1

    # ----- write ---------------------------------------------------------------------------
    def _stored_ids(self) -> int:
        return len(self.store) + len(self.store.aliases)

    def tag_of(self, doc: Document) -> str | None:
        """The text the tag leg indexes for ``doc`` under ``config.tags`` (None: the row has no tag)."""
        return tag_source(doc, self.config.tags)

    def ingest(self, documents: Iterable[Document], show_progress: bool = False) -> list[str | None]:
        """Store documents in order; embeds all new texts in one batch. Returns each one's row id."""
        docs = list(documents)
        result: list[str | None] = [None] * len(docs)
        pending: list[tuple[int, Document]] = []
        pending_keys: dict[tuple[str | None, str], str] = {}
        for index, doc in enumerate(docs):
            if not doc.text.strip():
                continue
            if self.config.dedup:
                existing = self.store.active_duplicate(doc.author, doc.text)
                earlier = pending_keys.get((doc.author, doc.text))
                if existing is not None:
                    self.store.add_alias(doc.doc_id, existing)
                    result[index] = existing.doc_id
                    continue
                if earlier is not None:
                    self.store.aliases[doc.doc_id] = earlier
                    result[index] = earlier
                    continue
                pending_keys[(doc.author, doc.text)] = doc.doc_id
            pending.append((index, doc))
        vectors = self.encoder.encode([doc.text for _, doc in pending], show_progress=show_progress)
        now = self.clock()
        for (index, doc), vector in zip(pending, vectors):
            self.store.append(
                doc.doc_id, doc.text, doc.author, doc.date, doc.thread, now, vector,
                tag=self.tag_of(doc), evidence=doc.evidence,
            )
            result[index] = doc.doc_id
        return result

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
        terms = content_terms(query, cfg.min_term_chars, cfg.max_query_terms)
        rankings: dict[str, list[int]] = {}
        if cfg.weight("lexical") > 0:
            bm25 = self._bm25_scores(terms) if cfg.lexical_ranker == "bm25" else None
            rankings["lexical"] = lexical_leg(
                self.store, terms, cfg.conjunctive, scope, cfg.candidates, cfg.lexical_ranker, bm25
            )
        if cfg.weight("tag") > 0:
            rankings["tag"] = tag_leg(self.store, terms, scope, cfg.candidates)
        if cfg.weight("vector") > 0:
            query_vector = self.encoder.encode_one(query)
            rankings["vector"] = vector_leg(self.store, query_vector, scope, cfg.candidates, self._ann)
        return rankings

    def retrieve(self, query: str, as_of: date | datetime | None = None, k: int | None = None) -> list[Hit]:
        """Top-k hits for ``query`` among rows visible at ``as_of``, in rank order."""
        k = self.config.k if k is None else k
        if len(self.store) == 0 or k <= 0:
            return []
        scope = self.scope_mask(as_of)
        rankings = self.leg_rankings(query, scope)
        fused = weighted_rrf(rankings, {leg: self.config.weight(leg) for leg in rankings}, self.config.gamma)
        return self._select(fused, scope, k)

    # The library's name (README, package docstring); ``retrieve`` is the MemorySystem protocol's.
    search = retrieve

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
        ingest time, are our choices where it is silent.
        """
        rows = self.store.rows
        reserve_size = min(self.config.recency_reserve, k)
        matched = {f.seq for f in fused}
        recent_pool = np.flatnonzero(scope)[::-1][: self.config.candidates]
        unmatched = [FusedRow(int(seq), 0.0) for seq in recent_pool if int(seq) not in matched]
        ordered = fused + unmatched
        head, leftovers = ordered[: k - reserve_size], ordered[k - reserve_size :]
        pool = sorted((f for f in leftovers if f.seq in matched), key=lambda f: (rows[f.seq].recency, f.seq), reverse=True)
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

    # ----- BM25 alternative lexical ranker --------------------------------------------------
    def _bm25_scores(self, terms: list[str]) -> np.ndarray:
        import bm25s

        if self._bm25 is None or self._bm25_size != len(self.store):
            corpus = [self._stem_sequence(row.positions) for row in self.store.rows]
            index = bm25s.BM25()
            index.index([tokens or [""] for tokens in corpus], show_progress=False)
            self._bm25, self._bm25_size = index, len(self.store)
        known = [term for term in terms if term in self._bm25.vocab_dict]
        if not known:
            return np.zeros(len(self.store), dtype=np.float32)
        return self._bm25.get_scores(known)

    @staticmethod
    def _stem_sequence(positions: dict[str, list[int]]) -> list[str]:
        return [term for _, term in sorted((p, t) for t, ps in positions.items() for p in ps)]


__all__ = ["MemPlusPlus", "MemPPConfig"]
