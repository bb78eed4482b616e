"""Mem++ plus: Mem++'s write path (no generative call), a read path over the same as-of scope:
legs (vector and tag as Mem++'s, with views; an any-term lexical leg; a date leg), weighted RRF,
thread expansion, Mem++'s top k with its recency reserve, then packing for the budget. ``retrieve``
sees the question and its as-of day only, as every memory does."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import date, datetime

import numpy as np

from memplusplus.encoder import CachedEncoder
from memplusplus.fusion import FusedRow, weighted_rrf
from memplusplus.legs import tag_leg, vector_leg
from memplusplus.lexical import BM25Index, stem_cover_density_leg
from memplusplus.memory import MemPlusPlus, MemPPConfig
from memplusplus.plus.dates import date_leg, named_periods
from memplusplus.plus.options import PlusOptions
from memplusplus.plus.packing import pack
from memplusplus.plus.views import SentenceViews, best_view_leg, clauses
from memplusplus.plus.threads import by_thread_score, expand, thread_members
from memplusplus.text import content_terms
from memory_protocol import Document, Hit

THREAD_MARK = "thread"  # leg_ranks key of a row that followed a taken row: the leader's fused rank


class PlusMemory(MemPlusPlus):
    """Mem++'s store with the plus read path; every lever is a switch of ``options``."""

    name = "mempp_plus"

    def __init__(
        self,
        config: MemPPConfig = MemPPConfig(),
        options: PlusOptions = PlusOptions(),
        encoder: CachedEncoder | None = None,
        clock: Callable[[], datetime] = datetime.now,
    ):
        super().__init__(config, encoder, clock)
        self.options = options
        self._bm25 = BM25Index(options.bm25_k1, options.bm25_b)
        self._threads: dict[str, list[int]] | None = None
        self._threads_size = -1
        authors = None if options.sentence_authors is None else frozenset(options.sentence_authors)
        self._sentences = SentenceViews(authors, options.sentence_min_words)

    def ingest(self, documents: Iterable[Document], show_progress: bool = False) -> list[str | None]:
        row_ids = super().ingest(documents, show_progress=show_progress)
        if self.options.sentence_views:
            self._sentences.update(self.store, lambda texts: self.encoder.encode(texts, show_progress=show_progress))
        return row_ids

    def leg_rankings(self, query: str, scope: np.ndarray) -> dict[str, list[int]]:
        """Each enabled leg's ranking over the scoped rows (the date leg is added by ``ranked_lists``)."""
        cfg, opt = self.config, self.options
        terms = content_terms(query, cfg.min_term_chars, cfg.max_query_terms)
        rankings: dict[str, list[int]] = {}
        if not opt.any_term_lexical:  # the paper's leg; the other levers stay as they are
            if cfg.weight("lexical") > 0:
                rankings["lexical"] = self.paper_lexical_leg(query, terms, scope)
        elif opt.lexical_weight > 0 and opt.lexical_ranker == "bm25":
            rankings["lexical"] = self._bm25.leg(self.store, terms, False, scope, cfg.candidates)
        elif opt.lexical_weight > 0:
            rankings["lexical"] = stem_cover_density_leg(self.store, terms, scope, cfg.candidates)
        if cfg.weight("tag") > 0:
            rankings["tag"] = tag_leg(self.store, terms, scope, cfg.candidates)
        if cfg.weight("vector") > 0:
            parts = clauses(query, opt.clause_min_words) if opt.clause_views else []
            views = self.encoder.encode_one(query)[None, :]
            if parts:
                views = np.vstack([views, self.encoder.encode(parts)])
            if opt.sentence_views or parts:
                sentences = self._sentences if opt.sentence_views else None
                rankings["vector"] = best_view_leg(self.store, views, scope, cfg.candidates, sentences)
            else:
                rankings["vector"] = vector_leg(self.store, views[0], scope, cfg.candidates, self._ann)
        return rankings

    def leg_weights(self, legs: list[str]) -> dict[str, float]:
        opt = self.options
        own = {"date": opt.date_weight}
        if opt.any_term_lexical:
            own["lexical"] = opt.lexical_weight
        return {leg: own.get(leg, self.config.weight(leg)) for leg in legs}

    def retrieve(self, query: str, as_of: date | datetime | None = None, k: int | None = None) -> list[Hit]:
        k = self.config.k if k is None else k
        if len(self.store) == 0 or k <= 0:
            return []
        opt = self.options
        scope = self.scope_mask(as_of)
        _, fused = self.ranked_lists(query, as_of, scope)
        hits = self._select(fused, scope, k)
        if opt.packing:
            vectors = self.store.vectors[[self.store.by_doc_id[h.doc_id] for h in hits]] if hits else None
            hits = pack(hits, vectors, opt.budget, opt.near_duplicate, opt.lookahead)
        return hits

    def ranked_lists(
        self, query: str, as_of: date | datetime | None, scope: np.ndarray
    ) -> tuple[dict[str, list[int]], list[FusedRow]]:
        """The legs' rankings (with the date leg) and the fused list with threads expanded."""
        opt = self.options
        rankings = self.leg_rankings(query, scope)
        fused = weighted_rrf(rankings, self.leg_weights(list(rankings)), self.config.gamma)
        if opt.date_scope and opt.date_weight > 0:
            periods = named_periods(query, as_of)
            if periods:
                prior = {f.seq: f.score for f in fused}
                rankings["date"] = date_leg(self.store, periods, scope, opt.date_window_days, prior, self.config.candidates)
                fused = weighted_rrf(rankings, self.leg_weights(list(rankings)), self.config.gamma)
        if opt.thread_expansion:
            fused = self._expand(fused, scope)
        return rankings, fused

    search = retrieve

    def _expand(self, fused: list[FusedRow], scope: np.ndarray) -> list[FusedRow]:
        if self._threads is None or self._threads_size != len(self.store):
            self._threads, self._threads_size = thread_members(self.store), len(self.store)
        by_seq = {f.seq: f for f in fused}
        rank_of = {f.seq: rank for rank, f in enumerate(fused)}
        opt = self.options
        result: list[FusedRow] = []
        seqs = [f.seq for f in fused]
        if opt.thread_order == "sum":
            placed = by_thread_score(seqs, [f.score for f in fused], self.store, scope, opt.thread_max, self._threads)
        else:
            placed = expand(seqs, self.store, scope, opt.thread_window, opt.thread_max, self._threads)
        for seq, leader in placed:
            own = by_seq.get(seq)
            if leader is None:
                result.append(own)  # type: ignore[arg-type]
                continue
            ranks = dict(own.leg_ranks) if own else {}
            ranks[THREAD_MARK] = rank_of[leader]
            result.append(FusedRow(seq, own.score if own else 0.0, ranks))
        return result


__all__ = ["PlusMemory", "PlusOptions", "THREAD_MARK"]
