"""Lever 2: thread expansion. When a row is taken, the other rows of its thread follow it.

An OrgMemBench event is told by a few artefacts (an announcement, its thread, a later correction),
and a question about it usually needs all of them; a LoCoMo or LongMemEval session is the thread
of a turn, and the turns next to an evidence turn often carry the rest of the answer. Followers
come right after the row that brought them, in ingest order, only from the rows in scope (the
as-of rule is untouched); ``window`` keeps only siblings that many rows from the taken one in
ingest order, ``limit`` caps the followers per taken row.
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
    """The in-scope siblings of ``seq``: nearest in ingest order first when a window is set
    (only those at most ``window`` rows away), otherwise the whole thread in ingest order."""
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
    """``order`` with each row's followers inserted right after it, each row once.

    Returns (seq, leader) pairs: ``leader`` is the seq of the taken row a follower came with,
    None for a row of ``order`` itself. A row already placed is never placed again.
    """
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
    """Whole threads in the order of their summed fused scores, each row once.

    A thread's score is the sum of its ranked rows' scores (a row without a thread is a thread of
    its own), so an event several of whose artefacts match outranks one matched by a single row.
    Inside a thread: its ranked rows in rank order, then up to ``limit`` of its other in-scope
    rows in ingest order. Returns (seq, leader) pairs as :func:`expand` does.
    """
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
