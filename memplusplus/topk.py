"""The top-k cut after fusion (paper §3.2), shared by every Mem++ read path.

Candidates: the fused rows, then the recency pool's unmatched rows (the C most recently ingested
in-scope rows, newest first). The first k - reserve are taken; the reserve holds the latest-dated
remaining matched rows (undated: ingest time), short of those the next unmatched pool rows; a free
slot takes the next candidate. The paper states the k-3 + 3 split; the pool fill and the undated
order are our choices where it is silent. Equal dates keep their fused order (a stable sort), as
the authors' reserve does (AIDAChip-Inc/mem-plus-plus memory/store.py, ``_recall_scoped``).
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
    pool = sorted((row for row in leftovers if row.seq in matched), key=lambda row: recency[row.seq], reverse=True)
    pool += [row for row in leftovers if row.seq not in matched]  # already newest first
    reserved = pool[:reserve_size]
    chosen = {row.seq for row in head} | {row.seq for row in reserved}
    fill = [row for row in leftovers if row.seq not in chosen][: max(k - len(head) - len(reserved), 0)]
    return [(row, False) for row in head] + [(row, True) for row in reserved] + [(row, False) for row in fill]
