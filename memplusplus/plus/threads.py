"""Thread expansion: when a row is taken, the other in-scope rows of its thread follow it.

An OrgMemBench event is told by a few artefacts, a LoCoMo or LongMemEval session is the thread of a
turn, and a question usually needs several of them. ``window`` keeps siblings that many rows away
in ingest order; ``limit`` caps the followers per taken row.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memplusplus.store import RowStore


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
    members: dict[str, list[int]] | None = None,
) -> list[tuple[int, int | None]]:
    """``order`` with each row's followers right after it, each row once, as (seq, leader) pairs
    (leader None for a row of ``order`` itself)."""
    members = thread_members(store) if members is None else members
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
    members: dict[str, list[int]] | None = None,
) -> list[tuple[int, int | None]]:
    """Whole threads by the sum of their ranked rows' scores (a threadless row alone): the ranked
    rows in rank order, then up to ``limit`` other in-scope rows; (seq, leader) pairs as ``expand``."""
    members = thread_members(store) if members is None else members
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
