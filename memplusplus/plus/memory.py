"""Mem++ plus: Mem++'s write path (no generative call), a read path over the same as-of scope:
legs (vector and tag as Mem++'s, with views; an any-term lexical leg; a date leg), weighted RRF,
thread expansion, Mem++'s top k with its recency reserve, then packing for the budget. ``retrieve``
sees the question and its as-of day only, as every memory does.

Thread expansion: a taken row's other in-scope thread rows follow it (an OrgMemBench event is told
by a few artefacts, a LoCoMo or LongMemEval session is the thread of a turn, and a question usually
needs several of them). Packing orders the rows so the budget holds the most evidence."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import date, datetime

import numpy as np

from memplusplus.encoder import CachedEncoder
from memplusplus.evidence import BLOCK_SEPARATOR, block
from memplusplus.lexical import BM25Index, any_of
from memplusplus.memory import MemPlusPlus, MemPPConfig, tag_leg, vector_leg
from memplusplus.plus.dates import date_leg, named_periods
from memplusplus.plus.options import PlusOptions
from memplusplus.plus.views import SentenceViews, best_view_leg, clauses
from memplusplus.ranking import FusedRow
from memplusplus.store import RowStore
from memplusplus.text import content_terms
from memory_protocol import Document, Hit

THREAD_MARK = "thread"  # leg_ranks key of a row that followed a taken row: the leader's fused rank


def thread_members(store: RowStore) -> dict[str, list[int]]:
    """thread -> its row seqs in ingest order (rows without a thread are left out)."""
    members: dict[str, list[int]] = {}
    for row in store.rows:
        if row.thread is not None:
            members.setdefault(row.thread, []).append(row.seq)
    return members


def followers(seq: int, members: Sequence[int], scope: np.ndarray, window: int | None) -> list[int]:
    """The in-scope siblings of ``seq``: within ``window``, nearest first; else the thread in order."""
    others = [m for m in members if m != seq and scope[m]]
    if window is not None:
        position = {m: i for i, m in enumerate(members)}
        here = position[seq]
        others = [m for m in others if abs(position[m] - here) <= window]
        others.sort(key=lambda m: (abs(position[m] - here), position[m]))
    return others


def expand(
    order: Sequence[int],
    store: RowStore,
    scope: np.ndarray,
    window: int | None,
    limit: int,
    members: dict[str, list[int]],
) -> list[tuple[int, int | None]]:
    """``order`` with each row's followers right after it, each row once, as (seq, leader) pairs
    (leader None for a row of ``order`` itself)."""
    placed: set[int] = set()
    result: list[tuple[int, int | None]] = []
    for seq in order:
        if seq in placed:
            continue
        placed.add(seq)
        result.append((seq, None))
        thread = store.rows[seq].thread
        if thread is None or limit == 0:
            continue
        fresh = [other for other in followers(seq, members[thread], scope, window) if other not in placed]
        for other in fresh[:limit]:
            placed.add(other)
            result.append((other, seq))
    return result


def by_thread_score(
    order: Sequence[int],
    scores: Sequence[float],
    store: RowStore,
    scope: np.ndarray,
    limit: int,
    members: dict[str, list[int]],
) -> list[tuple[int, int | None]]:
    """Whole threads by the sum of their ranked rows' scores (a threadless row alone): the ranked
    rows in rank order, then up to ``limit`` other in-scope rows; (seq, leader) pairs as ``expand``."""
    groups: dict[str, list[int]] = {}
    totals: dict[str, float] = {}
    first: dict[str, int] = {}
    for rank, (seq, score) in enumerate(zip(order, scores)):
        key = store.rows[seq].thread or f"\x00{seq}"
        groups.setdefault(key, []).append(seq)
        totals[key] = totals.get(key, 0.0) + score
        first.setdefault(key, rank)
    result: list[tuple[int, int | None]] = []
    for key in sorted(groups, key=lambda key: (-totals[key], first[key])):
        ranked = groups[key]
        result += [(seq, None) for seq in ranked]
        if key.startswith("\x00") or limit == 0:
            continue
        taken = set(ranked)
        rest = [seq for seq in members[key] if seq not in taken and scope[seq]]
        result += [(seq, ranked[0]) for seq in rest[:limit]]
    return result


def block_cost(hit: Hit, rank: int, first: bool) -> int:
    """Characters the hit's block takes at 1-based ``rank``, with the separator before it."""
    return len(block(hit, rank)) + (0 if first else len(BLOCK_SEPARATOR))


def split_near_duplicates(vectors: np.ndarray, threshold: float) -> tuple[list[int], list[int]]:
    """(kept, repeats) indices; a repeat has cosine >= ``threshold`` with a kept row before it."""
    kept: list[int] = []
    repeats: list[int] = []
    for index in range(len(vectors)):
        if kept and float(np.max(vectors[kept] @ vectors[index])) >= threshold:
            repeats.append(index)
        else:
            kept.append(index)
    return kept, repeats


def fit_first(hits: Sequence[Hit], budget: int, lookahead: int) -> list[int]:
    """Indices of ``hits`` in render order: rank order, except that when the next row no longer fits
    whole, the first of the next ``lookahead`` rows that does fit goes before it."""
    queue = list(range(len(hits)))
    order: list[int] = []
    used = 0
    while queue and used < budget:
        rank = len(order) + 1
        left = budget - used
        head_cost = block_cost(hits[queue[0]], rank, not order)
        pick = 0
        if head_cost > left:
            for position in range(1, min(lookahead + 1, len(queue))):
                if block_cost(hits[queue[position]], rank, not order) <= left:
                    pick = position
                    break
        index = queue.pop(pick)
        used += block_cost(hits[index], rank, not order)
        order.append(index)
    return order + queue


def pack(
    hits: Sequence[Hit],
    vectors: np.ndarray | None,
    budget: int | None,
    near_duplicate: float | None,
    lookahead: int,
) -> list[Hit]:
    """``hits`` reordered for ``budget`` characters: near-duplicates (cosine >= ``near_duplicate`` to a
    row before) last, then ``fit_first``; rows are never cut or rewritten, and without a budget nothing moves."""
    if budget is None:
        return list(hits)
    indices = list(range(len(hits)))
    if vectors is not None and len(hits) > 1 and near_duplicate is not None:
        kept, repeats = split_near_duplicates(vectors, near_duplicate)
        indices = kept + repeats
    ordered = [hits[i] for i in indices]
    return [ordered[i] for i in fit_first(ordered, budget, lookahead)]



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
            rankings["lexical"] = self._bm25.leg(self.store, self._stems, terms, False, scope, cfg.candidates)
        elif opt.lexical_weight > 0:  # ts_rank_cd over our stems
            rankings["lexical"] = self._stems.update(self.store).leg(any_of(terms), scope, cfg.candidates)
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

    def _select(self, fused: list[FusedRow], scope: np.ndarray, k: int) -> list[Hit]:
        """Mem++'s top k, then packed for the budget."""
        hits = super()._select(fused, scope, k)
        opt = self.options
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
        fused = self.fuse(rankings)
        if opt.date_scope and opt.date_weight > 0:
            periods = named_periods(query, as_of)
            if periods:
                prior = {f.seq: f.score for f in fused}
                rankings["date"] = date_leg(self.store, periods, scope, opt.date_window_days, prior, self.config.candidates)
                fused = self.fuse(rankings)
        if opt.thread_expansion:
            fused = self._expand(fused, scope)
        return rankings, fused

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
