"""A run's table as the console prints it: the headline columns that fit in ``CONSOLE_WIDTH`` characters.

A LongMemEval_S summary holds 44 metric columns (about 800 characters a line); summary.md / summary.csv
keep them all, ``print=full`` prints them. Priority: the judge's metric (mean, std, paper-comparable)
and the extra answer metrics, then ``SWEEP_COLUMNS`` and ``ndcg@10``; kept columns stay in summary order.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from judges.aggregate import format_table
from judges.metrics.ranking import SWEEP_COLUMNS

CONSOLE_WIDTH = 120
ALWAYS = ("n", "n_scored")


@dataclass(frozen=True)
class ConsoleTable:
    text: str
    shown: tuple[str, ...]  # the metric columns printed
    total: int  # of this many


def width(text: str) -> int:
    return max((len(line) for line in text.splitlines()), default=0)


def _at_ks(columns: Sequence[str], family: str, wanted: Sequence[int]) -> list[str]:
    """``family@k`` for the wanted ks present; when none is (other ks), its smallest and largest k."""
    present = sorted((c for c in columns if cut_off(c) is not None and c.startswith(f"{family}@")), key=cut_off)
    chosen = [f"{family}@{k}" for k in wanted if f"{family}@{k}" in present]
    return chosen if chosen or not present else list(dict.fromkeys([present[0], present[-1]]))


def cut_off(column: str) -> int | None:
    """The k of a ``family@k`` column (None for ``@all`` and columns without a cut-off)."""
    tail = column.rpartition("@")[2] if "@" in column else ""
    return int(tail) if tail.isdigit() else None


def within_reach(columns: Sequence[str], system_k: int | None) -> list[str]:
    """Per family, the cut-offs up to ``system_k`` and the first at or above it: a k=5 run shows
    recall_any@10, not @50, which could only repeat it."""
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
    """The columns worth a console line, highest priority first."""
    columns = within_reach(columns, system_k)
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
        if width(render(frame[[c for c in frame.columns if c in base or c in kept or c == column]])) <= limit:
            kept.append(column)
    return [c for c in frame.columns if c in base or c in kept]


def console_table(summary: pd.DataFrame, title: str, judge_metric: str | None = None,
                  extra_metrics: Sequence[str] = (), width: int = CONSOLE_WIDTH,
                  system_k: int | None = None) -> ConsoleTable:
    """``title`` (wrapped) and the headline columns of ``summary`` that fit, with where the rest is;
    ``system_k``: the rows the run retrieved."""
    metrics = [c for c in summary.columns if c not in ALWAYS]
    order = fit_columns(summary, ALWAYS, headline_columns(metrics, judge_metric, extra_metrics, system_k), width)
    kept = [c for c in order if c not in ALWAYS]
    lines = textwrap.wrap(title, width=width, break_long_words=False, break_on_hyphens=False) or [""]
    text = "\n".join([*lines, "", format_table(summary[order])])
    if len(kept) < len(metrics):
        text += "\n" + "\n".join(textwrap.wrap(f"({len(kept)} of {len(metrics)} metric columns; every column: "
                                               "summary.md / summary.csv in the run folder, or print=full)", width))
    return ConsoleTable(text, tuple(kept), len(metrics))
