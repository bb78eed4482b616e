"""Where given documents stood in each leg's ranking and in the fused list (for explaining a miss),
from the rankings ``retrieve`` fuses; ranks are 1-based, None below ``depth`` (or C)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass

from memplusplus.fusion import FusedRow


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
