"""Mem++'s read rules shared by every backend (paper §3.2): the as-of scope S_theta, weighted
reciprocal-rank fusion, the top-k cut with its recency reserve, and where given documents stood
(for explaining a miss).

Fusion: RRF(r) = sum over legs of w_l / (gamma + rank_l(r)), rank 0-based; equal fused scores put
the later-ingested row first. Top k: candidates are the fused rows, then the recency pool's
unmatched rows (the C most recently ingested in-scope rows, newest first). The first k - reserve
are taken; the reserve holds the latest-dated remaining matched rows (undated: ingest time), short
of those the next unmatched pool rows; a free slot takes the next candidate. The paper states the
k-3 + 3 split; the pool fill and the undated order are our choices where it is silent. Equal dates
keep their fused order (a stable sort), as the authors' reserve does (AIDAChip-Inc/mem-plus-plus
memory/store.py, ``_recall_scoped``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import date, datetime, time, timedelta

import numpy as np

_ORIGIN = datetime(1, 1, 1)
_MICROSECOND = timedelta(microseconds=1)
UNDATED = np.iinfo(np.int64).max  # an undated row's key: later than every date, so no dated scope admits it


def date_key(moment: datetime | None) -> int:
    """A naive datetime as int64 microseconds since 0001-01-01 (order-preserving), UNDATED for None."""
    if moment is None:
        return int(UNDATED)
    return (moment.replace(tzinfo=None) - _ORIGIN) // _MICROSECOND


def end_of_day(as_of: date | datetime) -> datetime:
    """theta: the last instant of the as-of day (a datetime is taken for its day)."""
    day = as_of.date() if isinstance(as_of, datetime) else as_of
    return datetime.combine(day, time.max)


def in_scope(row_date: datetime | None, theta: datetime | None) -> bool:
    """No as-of: everything. Dated query: only rows dated up to theta; undated rows fail."""
    if theta is None:
        return True
    return row_date is not None and row_date <= theta


@dataclass
class FusedRow:
    seq: int
    score: float
    leg_ranks: dict[str, int] = field(default_factory=dict)


def weighted_rrf(rankings: Mapping[str, Sequence[int]], weights: Mapping[str, float], gamma: float) -> list[FusedRow]:
    fused: dict[int, FusedRow] = {}
    for leg, ranking in rankings.items():
        weight = weights[leg]
        for rank, seq in enumerate(ranking):
            row = fused.setdefault(seq, FusedRow(seq=seq, score=0.0))
            row.score += weight / (gamma + rank)
            row.leg_ranks[leg] = rank
    return sorted(fused.values(), key=lambda row: (-row.score, -row.seq))


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


@dataclass(frozen=True)
class Placement:

    doc_id: str
    stored: bool
    in_scope: bool
    legs: dict[str, int | None]
    fused: int | None

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Diagnosis:

    leg_sizes: dict[str, int]
    placements: dict[str, Placement]

    def as_dict(self) -> dict:
        return {"leg_sizes": dict(self.leg_sizes),
                "placements": {doc_id: p.as_dict() for doc_id, p in self.placements.items()}}


def _position(ranking: Sequence[int], depth: int) -> dict[int, int]:
    return {seq: rank for rank, seq in enumerate(ranking[:depth], start=1)}


def diagnosis(
    doc_ids: Iterable[str],
    seq_of: Mapping[str, int],
    in_scope: Mapping[int, bool],
    rankings: Mapping[str, Sequence[int]],
    fused: Sequence[FusedRow],
    depth: int,
) -> Diagnosis:
    """Each of ``doc_ids``' 1-based rank in every leg's ranking and the fused list (None below ``depth``)."""
    leg_positions = {leg: _position(ranking, depth) for leg, ranking in rankings.items()}
    fused_positions = _position([row.seq for row in fused], depth)
    found: dict[str, Placement] = {}
    for doc_id in dict.fromkeys(doc_ids):
        seq = seq_of.get(doc_id)
        if seq is None:
            found[doc_id] = Placement(doc_id, False, False, {leg: None for leg in rankings}, None)
            continue
        found[doc_id] = Placement(
            doc_id, True, bool(in_scope.get(seq, False)),
            {leg: positions.get(seq) for leg, positions in leg_positions.items()},
            fused_positions.get(seq),
        )
    return Diagnosis({leg: len(ranking) for leg, ranking in rankings.items()}, found)
