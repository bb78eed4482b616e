"""The run's table as the console prints it: the headline metrics per category, at most
``CONSOLE_WIDTH`` characters a line (summary.md / summary.csv keep every column; ``print=full``
prints them all).

A LongMemEval_S summary holds 44 metric columns (turn and session families at six cut-offs), about
800 characters a line; the console shows, in this order of priority, the judge's metric (its mean
over parsed grades, spread over judge runs, the paper-comparable mean) and the benchmark's extra
answer metrics when there is an answerer, then the headline retrieval columns (the sweep table's
``SWEEP_COLUMNS`` and ``ndcg@10``). Columns that would push a line past the width are left out,
lowest priority first; the columns kept stay in the summary's order. A run that retrieves ``k`` rows
shows no cut-off past the first one at or above ``k`` (a k=5 run: recall_any@10, not @50, which
could only repeat it).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from judges.aggregate import format_table
from judges.metrics.registry import SWEEP_COLUMNS

CONSOLE_WIDTH = 120
ALWAYS = ("n", "n_scored")
RETRIEVAL_HEADLINE = (*SWEEP_COLUMNS[:2], "ndcg@10", *SWEEP_COLUMNS[2:])  # recall_any@10, @50, ndcg@10, in-budget


@dataclass(frozen=True)
class ConsoleTable:
    """The printed title and table, and how many of the summary's metric columns it shows."""

    text: str
    shown: tuple[str, ...]
    total: int


def _retrieval_fallback(columns: Sequence[str], family: str, wanted: Sequence[int]) -> list[str]:
    """``family@k`` for the wanted cut-offs present; when none is (a dataset with other ks), the
    smallest and largest k it has."""
    present = [c for c in columns if c.startswith(f"{family}@") and c.rpartition("@")[2].isdigit()]
    chosen = [f"{family}@{k}" for k in wanted if f"{family}@{k}" in present]
    if chosen or not present:
        return chosen
    by_k = sorted(present, key=lambda c: int(c.rpartition("@")[2]))
    return list(dict.fromkeys([by_k[0], by_k[-1]]))


def cut_off(column: str) -> int | None:
    """The k of a ``family@k`` column (None for ``@all`` and columns without a cut-off)."""
    tail = column.rpartition("@")[2] if "@" in column else ""
    return int(tail) if tail.isdigit() else None


def within_reach(columns: Sequence[str], system_k: int | None) -> list[str]:
    """``columns`` without the cut-offs a run retrieving ``system_k`` rows cannot tell apart: per
    family, every cut-off up to ``system_k`` and the first one at or above it are kept."""
    if system_k is None:
        return list(columns)
    first_above: dict[str, int] = {}
    for column in columns:
        k = cut_off(column)
        if k is not None and k >= system_k:
            family = column.rpartition("@")[0]
            first_above[family] = min(k, first_above.get(family, k))
    return [c for c in columns if cut_off(c) is None or cut_off(c) <= first_above.get(c.rpartition("@")[0], cut_off(c))]


def headline_columns(columns: Sequence[str], judge_metric: str | None, extra_metrics: Sequence[str] = (),
                     system_k: int | None = None) -> list[str]:
    """The summary's columns worth a console line, highest priority first (for a run retrieving
    ``system_k`` rows, none past the first cut-off at or above it)."""
    columns = within_reach(columns, system_k)
    wanted: list[str] = []
    if judge_metric is not None:
        wanted += [judge_metric, f"{judge_metric}_std", f"{judge_metric}_paper", *extra_metrics]
    wanted += _retrieval_fallback(columns, "recall_any", (10, 50))
    wanted += _retrieval_fallback(columns, "ndcg", (10,))
    wanted += [c for c in RETRIEVAL_HEADLINE if "@" not in c]
    return [c for c in dict.fromkeys(wanted) if c in columns]


def _width(table: str) -> int:
    return max((len(line) for line in table.splitlines()), default=0)


def console_table(summary: pd.DataFrame, title: str, judge_metric: str | None = None,
                  extra_metrics: Sequence[str] = (), width: int = CONSOLE_WIDTH,
                  system_k: int | None = None) -> ConsoleTable:
    """The headline columns of ``summary`` that fit in ``width`` characters, under ``title`` (wrapped
    at ``width``), with a line saying where the rest is; ``system_k``: the rows the run retrieved."""
    base = [c for c in ALWAYS if c in summary.columns]
    metrics = [c for c in summary.columns if c not in ALWAYS]
    kept: list[str] = []
    for column in headline_columns(metrics, judge_metric, extra_metrics, system_k):
        trial = [c for c in summary.columns if c in base or c in kept or c == column]
        if _width(format_table(summary[trial])) <= width:
            kept.append(column)
    order = [c for c in summary.columns if c in base or c in kept]
    lines = textwrap.wrap(title, width=width, break_long_words=False, break_on_hyphens=False) or [""]
    note = (f"({len(kept)} of {len(metrics)} metric columns; every column: summary.md / summary.csv "
            f"in the run folder, or print=full)")
    text = "\n".join([*lines, "", format_table(summary[order])])
    if len(kept) < len(metrics):
        text += "\n" + "\n".join(textwrap.wrap(note, width=width))
    return ConsoleTable(text, tuple(kept), len(metrics))
