"""Lever 1: a lexical leg that matches a row sharing ANY query term, ranked by BM25.

The paper's leg on OrgMemBench and LongMemEval_S is conjunctive (every content word of the question
in one row), which long natural-language questions almost never satisfy: on OrgMemBench it matches
no row for any question. Here a row qualifies with one shared stem and BM25 (``bm25s``, over the
same stems and stop words as the paper's leg) orders the matches, so rare, specific words (names,
systems, numbers) weigh most. Cover density over the disjunctive match is kept as an option.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memplusplus.legs import lexical_leg
from memplusplus.store import RowStore


class BM25Index:
    """BM25 over every stored row's stem stream, rebuilt only when rows were added."""

    def __init__(self, k1: float = 1.5, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self._index = None
        self._size = -1

    def scores(self, store: RowStore, terms: Sequence[str]) -> np.ndarray:
        """One BM25 score per row (0 for rows sharing no term)."""
        import bm25s

        if self._index is None or self._size != len(store):
            corpus = [_stem_stream(store, seq) for seq in range(len(store))]
            index = bm25s.BM25(k1=self.k1, b=self.b)
            index.index([tokens or [""] for tokens in corpus], show_progress=False)
            self._index, self._size = index, len(store)
        known = [term for term in dict.fromkeys(terms) if term in self._index.vocab_dict]
        if not known:
            return np.zeros(len(store), dtype=np.float32)
        return np.asarray(self._index.get_scores(known))


def _stem_stream(store: RowStore, seq: int) -> list[str]:
    positions = store.rows[seq].positions
    return [term for _, term in sorted((p, t) for t, ps in positions.items() for p in ps)]


def any_term_leg(
    store: RowStore,
    terms: Sequence[str],
    scope: np.ndarray,
    limit: int,
    ranker: str,
    index: BM25Index,
) -> list[int]:
    """Row seqs in scope sharing at least one of ``terms``, best first, at most ``limit``."""
    if not terms:
        return []
    bm25 = index.scores(store, terms) if ranker == "bm25" else None
    return lexical_leg(store, terms, False, scope, limit, ranker, bm25)
