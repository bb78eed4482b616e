"""Per-category summaries of per-question metric records: per-question (micro) means, NaN ignored, as
LongMemEval's ``run_retrieval.py`` averages after dropping the questions it skips; the one pipe-table
writer every table uses; and a run's table as the console prints it (the headline columns that fit in
``CONSOLE_WIDTH`` characters: summary.md / summary.csv and ``print=full`` keep every column)."""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import tabulate as tabulate_module

from judges.metrics.ranking import SWEEP_COLUMNS

OVERALL = "overall"
OVERALL_ALL = "overall (all)"
UNCATEGORIZED = "uncategorized"
CONSOLE_WIDTH = 120
_ALWAYS = ("n", "n_scored")


def natural_key(name: str) -> tuple[Any, ...]:
    """C2 < C10: digit runs compare as numbers."""
    parts = re.split(r"(\d+)", name)
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p.lower()) for p in parts)


def _as_float(value: Any) -> float:
    if value is None:
        return math.nan
    try:
        return float(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"metric value {value!r} is not a number") from exc


def _category(record: dict[str, Any], category_key: str) -> str:
    value = record.get(category_key)
    return UNCATEGORIZED if value is None else str(value)


def _row(records: Sequence[dict[str, Any]], metric_keys: Sequence[str]) -> dict[str, Any]:
    """``n`` (every question), ``n_scored`` (a defined first metric) and each metric's mean."""
    values = np.array([[_as_float(r.get(key)) for key in metric_keys] for r in records],
                      dtype=float).reshape(len(records), len(metric_keys))
    defined = ~np.isnan(values)
    row: dict[str, Any] = {"n": len(records), "n_scored": int(defined[:, 0].sum()) if metric_keys else len(records)}
    for j, key in enumerate(metric_keys):
        column = values[defined[:, j], j]
        row[key] = float(column.mean()) if column.size else math.nan
    return row


def summarize(records: list[dict[str, Any]], metric_keys: list[str], category_key: str = "category",
              exclude_from_overall: Collection[str] = ()) -> pd.DataFrame:
    """One row per category (natural order), ``overall`` (without ``exclude_from_overall``), and
    ``overall (all)`` when some question was excluded; columns ``n``, ``n_scored``, ``metric_keys``."""
    excluded = {str(c) for c in exclude_from_overall}
    by_category: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        by_category.setdefault(_category(record, category_key), []).append(record)

    rows = {name: _row(by_category[name], metric_keys) for name in sorted(by_category, key=natural_key)}
    kept = [r for r in records if _category(r, category_key) not in excluded]
    rows[OVERALL] = _row(kept, metric_keys)
    if len(kept) < len(records):
        rows[OVERALL_ALL] = _row(records, metric_keys)

    frame = pd.DataFrame.from_dict(rows, orient="index", columns=["n", "n_scored", *metric_keys])
    frame = frame.astype({"n": int, "n_scored": int})
    frame.index.name = category_key
    return frame


def format_table(df: pd.DataFrame, floatfmt: str = ".3f", index: bool = True, missing: str = "",
                 numbers: bool = True, align: Sequence[str] | None = None, header_pad: int = 0) -> str:
    """The one Markdown pipe-table writer (tabulate): ``index`` as the first column, numbers right-aligned
    with ``floatfmt`` (``numbers=False``: every cell as given), None as ``missing``, ``align`` per column."""
    # tabulate widens each column by MIN_PADDING (2) over its header and takes no argument for it;
    # the console fits its columns to 120 characters without it (0), the report files keep it (2).
    saved, tabulate_module.MIN_PADDING = tabulate_module.MIN_PADDING, header_pad
    try:
        return tabulate_module.tabulate(df.astype(object), headers="keys", tablefmt="pipe", showindex=index,
                                        floatfmt=floatfmt, numalign="right", missingval=missing,
                                        disable_numparse=not numbers, colalign=align)
    finally:
        tabulate_module.MIN_PADDING = saved


@dataclass(frozen=True)
class ConsoleTable:
    text: str
    shown: tuple[str, ...]  # the metric columns printed
    total: int  # of this many


def text_width(text: str) -> int:
    return max((len(line) for line in text.splitlines()), default=0)


def _cut_off(column: str) -> int | None:
    """The k of a ``family@k`` column (None for ``@all`` and columns without a cut-off)."""
    tail = column.rpartition("@")[2] if "@" in column else ""
    return int(tail) if tail.isdigit() else None


def _at_ks(columns: Sequence[str], family: str, wanted: Sequence[int]) -> list[str]:
    """``family@k`` for the wanted ks present; when none is (other ks), its smallest and largest k."""
    present = sorted((c for c in columns if _cut_off(c) is not None and c.startswith(f"{family}@")), key=_cut_off)
    chosen = [f"{family}@{k}" for k in wanted if f"{family}@{k}" in present]
    return chosen if chosen or not present else list(dict.fromkeys([present[0], present[-1]]))


def _headline_columns(columns: Sequence[str], judge_metric: str | None, extra_metrics: Sequence[str],
                      system_k: int | None) -> list[str]:
    """The columns worth a console line, highest priority first: the judge's metric (mean, std,
    paper-comparable) and the extra answer metrics, then recall_any@10/@50, ndcg@10 and the sweep
    columns. Per family only the cut-offs up to ``system_k`` and the first above it: a k=5 run shows
    recall_any@10, not @50, which could only repeat it."""
    if system_k is not None:
        first_above: dict[str, int] = {}
        for column in columns:
            k = _cut_off(column)
            if k is not None and k >= system_k:
                family = column.rpartition("@")[0]
                first_above[family] = min(k, first_above.get(family, k))
        columns = [c for c in columns
                   if _cut_off(c) is None or _cut_off(c) <= first_above.get(c.rpartition("@")[0], _cut_off(c))]
    wanted = [judge_metric, f"{judge_metric}_std", f"{judge_metric}_paper", *extra_metrics] if judge_metric else []
    wanted += [*_at_ks(columns, "recall_any", (10, 50)), *_at_ks(columns, "ndcg", (10,))]
    wanted += [c for c in SWEEP_COLUMNS if "@" not in c]
    return [c for c in dict.fromkeys(wanted) if c in columns]


def fit_columns(frame: pd.DataFrame, base: Sequence[str], candidates: Sequence[str], limit: int,
                render=format_table) -> list[str]:
    """``base`` and each candidate, by priority, that keeps ``render(frame[...])`` within ``limit``
    characters a line; in the frame's column order."""
    kept: list[str] = []
    for column in candidates:
        if text_width(render(frame[[c for c in frame.columns if c in base or c in kept or c == column]])) <= limit:
            kept.append(column)
    return [c for c in frame.columns if c in base or c in kept]


def console_table(summary: pd.DataFrame, title: str, judge_metric: str | None = None,
                  extra_metrics: Sequence[str] = (), width: int = CONSOLE_WIDTH,
                  system_k: int | None = None) -> ConsoleTable:
    """``title`` (wrapped) and the headline columns of ``summary`` that fit, with where the rest is;
    ``system_k``: the rows the run retrieved."""
    metrics = [c for c in summary.columns if c not in _ALWAYS]
    order = fit_columns(summary, _ALWAYS, _headline_columns(metrics, judge_metric, extra_metrics, system_k), width)
    lines = textwrap.wrap(title, width=width, break_long_words=False, break_on_hyphens=False) or [""]
    text = "\n".join([*lines, "", format_table(summary[order])])
    shown = tuple(c for c in order if c not in _ALWAYS)
    if len(shown) < len(metrics):
        text += "\n" + "\n".join(textwrap.wrap(f"({len(shown)} of {len(metrics)} metric columns; every column: "
                                               "summary.md / summary.csv in the run folder, or print=full)", width))
    return ConsoleTable(text, shown, len(metrics))
