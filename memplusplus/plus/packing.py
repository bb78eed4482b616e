"""Budget-aware packing: which rows to render first so the ``budget`` characters hold the most evidence.

Rank order is kept, but near-duplicates (cosine >= ``near_duplicate`` to a row before) go to the
end, and when the next row no longer fits whole, the first of the next ``lookahead`` rows that does
fit goes before it. Rows are never cut or rewritten. Without a budget nothing moves.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memplusplus.evidence import BLOCK_SEPARATOR, block
from memory_protocol import Hit


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
    """Indices of ``hits`` in render order (see the module docstring, step 2)."""
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
    """``hits`` reordered for the budget (see the module docstring)."""
    if budget is None:
        return list(hits)
    indices = list(range(len(hits)))
    if vectors is not None and len(hits) > 1 and near_duplicate is not None:
        kept, repeats = split_near_duplicates(vectors, near_duplicate)
        indices = kept + repeats
    ordered = [hits[i] for i in indices]
    return [ordered[i] for i in fit_first(ordered, budget, lookahead)]
