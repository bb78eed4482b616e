"""Intervals and paired differences per summary row, from ``records.jsonl`` records. The resampling
unit is the episode when several questions share one and there are several (LoCoMo's conversations);
else the question (OrgMemBench: one episode; LongMemEval_S: one per question)."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from typing import Any

from judges.aggregate import OVERALL, OVERALL_ALL, UNCATEGORIZED, natural_key
from harness.stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, Interval, bootstrap_mean
from harness.stats.paired import PairedResult, paired_difference

Record = dict[str, Any]


def value_of(record: Record, metric: str) -> float:
    value = (record.get("metrics") or {}).get(metric)
    if value is None:
        return math.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def unit_of(records: Sequence[Record]) -> tuple[str, list[Any] | None]:
    """The resampling unit's name and each record's cluster label (None: one question each)."""
    episodes = [r.get("episode") for r in records]
    distinct = len(set(episodes))
    if None in episodes or distinct <= 1 or distinct >= len(records):
        return "question", None
    return "conversation" if all(str(e).startswith("conv-") for e in episodes) else "episode", episodes


def row_groups(records: Sequence[Record], exclude_from_overall: Collection[str] = ()) -> dict[str, list[Record]]:
    """Records per summary row: each category, ``overall`` (without the excluded), ``overall (all)``."""
    excluded = {str(c) for c in exclude_from_overall}
    by_category: dict[str, list[Record]] = {}
    for record in records:
        category = record.get("category")
        by_category.setdefault(UNCATEGORIZED if category is None else str(category), []).append(record)
    rows = {name: by_category[name] for name in sorted(by_category, key=natural_key)}
    kept = [r for r in records if str(r.get("category")) not in excluded]
    rows[OVERALL] = kept
    if len(kept) < len(records):
        rows[OVERALL_ALL] = list(records)
    return rows


def category_intervals(records: Sequence[Record], metric: str, exclude_from_overall: Collection[str] = (),
                       n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> dict[str, Interval]:
    """Each summary row's mean of ``metric`` with its bootstrap interval."""
    out: dict[str, Interval] = {}
    for row, group in row_groups(records, exclude_from_overall).items():
        unit, clusters = unit_of(group)
        out[row] = bootstrap_mean([value_of(r, metric) for r in group], clusters, unit, n_resamples, seed)
    return out


def paired_by_category(records_a: Sequence[Record], records_b: Sequence[Record], metric: str,
                       exclude_from_overall: Collection[str] = (), n_resamples: int = DEFAULT_RESAMPLES,
                       seed: int = DEFAULT_SEED, metric_b: str | None = None) -> dict[str, PairedResult]:
    """A minus B per summary row, over the questions both runs hold (joined by ``qid``)."""
    by_qid = {r["qid"]: r for r in records_b}
    shared = [r for r in records_a if r["qid"] in by_qid]
    if not shared:
        raise ValueError("the two runs share no question id: they are not on the same questions")
    out: dict[str, PairedResult] = {}
    for row, group in row_groups(shared, exclude_from_overall).items():
        unit, clusters = unit_of(group)
        a = [value_of(r, metric) for r in group]
        b = [value_of(by_qid[r["qid"]], metric_b or metric) for r in group]
        out[row] = paired_difference(a, b, clusters, unit, n_resamples, seed)
    return out
