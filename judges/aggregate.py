"""Per-category summaries of per-question metric records: per-question (micro) means, NaN ignored, as
LongMemEval's ``run_retrieval.py`` averages after dropping the questions it skips; and the one pipe-table
writer every table uses."""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Sequence
from typing import Any

import numpy as np
import pandas as pd
import tabulate as tabulate_module

OVERALL = "overall"
OVERALL_ALL = "overall (all)"
UNCATEGORIZED = "uncategorized"

__all__ = ["OVERALL", "OVERALL_ALL", "natural_key", "summarize", "format_table"]


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
