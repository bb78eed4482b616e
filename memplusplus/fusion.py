"""Weighted reciprocal-rank fusion: RRF(r) = sum over legs of w_l / (gamma + rank_l(r)), rank
0-based; equal fused scores put the later-ingested row first."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


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
