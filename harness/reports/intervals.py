"""Cell intervals from each run's ``records.jsonl`` (cluster bootstrap, :mod:`harness.stats.records`),
and the rows not significantly different from their column's best (the paired interval of the
difference holds 0: marked ``≈``). A run without per-question values gets neither.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness.run_data import CliError, RunData, load_run
from harness.reports.comparable import paper_metric
from harness.reports.format import fmt, is_missing
from harness.reports.store import RunView
from harness.stats.bootstrap import DEFAULT_SEED, Interval
from harness.stats.records import category_intervals, paired_by_category

RESAMPLES = 2_000  # per cell; the footnote names the count
NOT_SIGNIFICANT = "≈"
OVERALL_INTERVAL = "overall 95%"  # the retrieval blocks' added column


class TableIntervals:
    """Lazily loaded runs and their intervals, cached per (run, metric)."""

    def __init__(self, n_resamples: int = RESAMPLES, seed: int = DEFAULT_SEED) -> None:
        self.n_resamples, self.seed = n_resamples, seed
        self._runs: dict[str, RunData | None] = {}
        self._intervals: dict[tuple[str, str], dict[str, Interval]] = {}
        self.units: set[str] = set()
        self.marked = False

    def _run(self, run: str) -> RunData | None:
        if run not in self._runs:
            try:
                self._runs[run] = load_run(Path(run))
            except CliError:
                self._runs[run] = None
        return self._runs[run]

    def _has(self, data: RunData | None, metric: str) -> bool:
        return data is not None and any((r.get("metrics") or {}).get(metric) is not None for r in data.records)

    def interval(self, run: str, category: str, metric: str) -> Interval | None:
        data = self._run(run)
        if not self._has(data, metric):
            return None
        key = (run, metric)
        if key not in self._intervals:
            self._intervals[key] = category_intervals(data.records, metric, data.excluded(), self.n_resamples, self.seed)
        found = self._intervals[key].get(category)
        if found is None or math.isnan(found.estimate):
            return None
        self.units.add(found.method.split(" over ", 1)[1].split(" ", 1)[0])
        return found

    def bounds(self, run: str, category: str, metric: str) -> str:
        """`` [low, high]`` for a cell, with the metric's own decimals (empty when the run has no
        per-question values)."""
        found = self.interval(run, category, metric)
        if found is None:
            return ""
        return f" [{fmt(found.low, metric)}, {fmt(found.high, metric)}]"

    def not_significant(self, cells: Iterable[tuple[Any, str, float]], category: str, metric: str) -> set[Any]:
        """Of ``cells`` (row key, run, value) in one column, the rows whose paired difference from the
        column's best row has an interval holding 0 (the best row itself is never marked)."""
        usable = [(key, run, value) for key, run, value in cells
                  if not math.isnan(value) and self._has(self._run(run), metric)]
        if len(usable) < 2:
            return set()
        best_key, best_run, _ = max(usable, key=lambda cell: cell[2])
        best = self._run(best_run)
        marked: set[Any] = set()
        for key, run, _value in usable:
            if run == best_run:
                continue
            other = self._run(run)
            try:
                result = paired_by_category(best.records, other.records, metric, best.excluded(), self.n_resamples,
                                            self.seed).get(category)
            except ValueError:  # no shared questions
                continue
            if result is not None and result.n and result.difference.low <= 0 <= result.difference.high:
                marked.add(key)
        self.marked |= bool(marked)
        return marked

    def notes(self) -> list[str]:
        """The footnote naming the method (only when some cell has an interval)."""
        if not self.units:
            return []
        units = " or ".join(sorted(self.units))
        note = (f"[low, high]: 95% percentile bootstrap interval over {units} (a conversation's or episode's "
                f"questions resampled together), {self.n_resamples:,} resamples, seed {self.seed}.")
        if self.marked:
            note += (f" {NOT_SIGNIFICANT}: not significantly different from the best row of its column "
                     f"(paired bootstrap 95% interval of the difference, same questions, holds 0).")
        return [note]


def shown_metric(view: RunView, run: str, category: str, metric: str, headline: str) -> str:
    """The metric a cell prints: for the judge column ``<headline>_paper`` where the run has it."""
    if metric != headline:
        return metric
    return paper_metric(metric) if not is_missing(view.value(run, category, paper_metric(metric))) else metric


def mark_not_significant(out: list[dict], placed: dict, spans: TableIntervals) -> None:
    """Mark (a trailing ``≈``) each cell whose difference from its column's best row is not
    significant. ``placed``: per column group (header, group, category, metric), its cells as
    (row index, run, value)."""
    for (header, _group, category, metric), cells in placed.items():
        for index in spans.not_significant(cells, category, metric):
            out[index][header] += NOT_SIGNIFICANT
