"""The LongMemEval_S held-out split: every question after the first ``LME_TUNED`` by id (mempp_plus's
settings were chosen on the first 100). PLUS.md and the leaderboard both take it from here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from judges.aggregate import OVERALL, summarize

LME_TUNED = 100  # mempp_plus's LongMemEval_S settings were chosen on its first 100 questions by id


def held_out_records(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records after the first ``LME_TUNED`` by ``qid`` (the order of ``records`` does not matter)."""
    return sorted(records, key=lambda record: record["qid"])[LME_TUNED:]


def overall_means(records: Sequence[dict[str, Any]], keys: list[str]) -> dict[str, float]:
    """The summary's overall row (judges.aggregate.summarize: NaN-ignoring means, ``n_scored`` from
    the first key) over ``records``, with ``n_questions`` and ``n_scored``."""
    overall = summarize([record["metrics"] for record in records], keys).loc[OVERALL]
    return {"n_questions": float(overall["n"]), "n_scored": float(overall["n_scored"]),
            **{key: float(overall[key]) for key in keys}}


def held_out_means(records: Sequence[dict[str, Any]], keys: list[str]) -> dict[str, float]:
    """:func:`overall_means` over the held-out questions only."""
    return overall_means(held_out_records(records), keys)
