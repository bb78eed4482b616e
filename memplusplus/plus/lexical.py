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

from memplusplus.legs import BM25Index, lexical_leg
from memplusplus.store import RowStore


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
