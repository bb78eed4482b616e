"""Per-category summaries of per-question metric records: per-question (micro) means, NaN ignored, as
LongMemEval's ``run_retrieval.py`` averages after dropping the questions it skips; and a table formatter."""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Sequence
from typing import Any

import numpy as np
import pandas as pd

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


def _format_cell(value: Any, floatfmt: str) -> str:
    if isinstance(value, (bool, np.bool_)):
        return str(value)
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return "nan" if math.isnan(value) else format(float(value), floatfmt)
    return str(value)


def format_table(df: pd.DataFrame, floatfmt: str = ".3f") -> str:
    """Render ``df`` (index as the first column) as a padded Markdown pipe table.

    Integers print as integers, floats with ``floatfmt``, NaN as ``nan``; numeric columns are
    right-aligned (``---:``). Needs no ``tabulate``.
    """
    header = [str(df.index.name or ""), *[str(c) for c in df.columns]]
    numeric = [False, *[pd.api.types.is_numeric_dtype(df[c]) for c in df.columns]]
    body = [
        [str(index), *[_format_cell(v, floatfmt) for v in row]]
        for index, row in zip(df.index, df.itertuples(index=False, name=None))
    ]
    widths = [max(3, len(h), *(len(r[j]) for r in body)) for j, h in enumerate(header)]

    def line(cells: Sequence[str]) -> str:
        padded = [c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, numeric)]
        return "| " + " | ".join(padded) + " |"

    rule = "|" + "|".join(
        ("-" * (w + 1) + ":") if num else ("-" * (w + 2)) for w, num in zip(widths, numeric)
    ) + "|"
    return "\n".join([line(header), rule, *(line(r) for r in body)])
