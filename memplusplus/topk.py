"""The top-k cut after fusion: k - reserve rows by fused score, then the recency reserve, then fill.

The same rule as the in-process memory (``MemPlusPlus._select``), written over plain inputs so
the Postgres backend and the fact index use it (it needs nothing of Postgres): the fused matched
rows, the recency pool (the C most recently ingested in-scope rows, newest first) and each matched
row's recency (its date, or its ingest time when undated). Candidates are the matched rows by
fused score followed by the pool's unmatched rows; the first k - reserve are taken; the reserve
then holds the latest-dated remaining matched rows (equal dates in fused order) or, short of
those, the next unmatched pool rows; any free slot takes the next candidates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from memplusplus.fusion import FusedRow


def select_top_k(
    fused: Sequence[FusedRow],
    recent_pool: Sequence[int],
    recency: Mapping[int, datetime],
    k: int,
    reserve: int,
) -> list[tuple[FusedRow, bool]]:
    """The chosen rows in rank order, each with True when it entered through the reserve."""
    if k <= 0:
        return []
    reserve_size = min(reserve, k)
    matched = {row.seq for row in fused}
    unmatched = [FusedRow(seq, 0.0) for seq in recent_pool if seq not in matched]
    ordered = list(fused) + unmatched
    head, leftovers = ordered[: k - reserve_size], ordered[k - reserve_size :]
    # Stable: rows of equal recency keep their fused order (the authors' reserve does the same).
    pool = sorted((row for row in leftovers if row.seq in matched), key=lambda row: recency[row.seq], reverse=True)
    pool += [row for row in leftovers if row.seq not in matched]  # already newest first
    reserved = pool[:reserve_size]
    chosen = {row.seq for row in head} | {row.seq for row in reserved}
    fill = [row for row in leftovers if row.seq not in chosen][: max(k - len(head) - len(reserved), 0)]
    return [(row, False) for row in head] + [(row, True) for row in reserved] + [(row, False) for row in fill]
