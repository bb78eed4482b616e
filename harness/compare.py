"""Two runs on the same questions, compared per category: the lines ``scripts/compare.py`` prints."""

from __future__ import annotations

import math

from harness.run_data import CliError, RunData
from harness.stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED
from harness.stats.paired import PairedResult
from harness.stats.records import paired_by_category

WIDTH = 120


def _p(value: float | None) -> str:
    if value is None or math.isnan(value):
        return "—"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def _digits(metric: str) -> int:
    """Judge scores are 0-100 (one decimal), retrieval shares 0-1 (three)."""
    return 1 if metric.startswith("llm_judge") or metric in ("accuracy", "score") else 3


def compare_runs(a: RunData, b: RunData, metric: str | None = None, n_resamples: int = DEFAULT_RESAMPLES,
                 seed: int = DEFAULT_SEED) -> tuple[str, dict[str, PairedResult]]:
    if a.dataset != b.dataset:
        raise CliError(f"the runs are on different datasets ({a.dataset}, {b.dataset}): nothing to pair")
    metric = metric or (a.headline() if a.headline() == b.headline() else "recall_any@10")
    for run in (a, b):
        if not any((r.get("metrics") or {}).get(metric) is not None for r in run.records):
            raise CliError(f"{run.folder} has no {metric!r} in its records")
    try:
        results = paired_by_category(a.records, b.records, metric, a.excluded(), n_resamples, seed)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    return metric, results


def lines(a: RunData, b: RunData, metric: str, results: dict[str, PairedResult]) -> list[str]:
    digits = _digits(metric)
    overall = results["overall"]
    out = [f"{a.system} - {b.system} on {a.dataset}, {metric}, paired by question ({overall.n:,} questions both scored)"[:WIDTH],
           f"{'category':<14}{'n':>6}{'A':>9}{'B':>9}  {'A-B [95% interval]':<28}{'p':>8}{'McNemar':>9}{'MDE':>8}"]
    for row, r in results.items():
        if r.n == 0:
            continue
        diff = r.difference
        text = f"{diff.estimate:+.{digits}f} [{diff.low:+.{digits}f}, {diff.high:+.{digits}f}]"
        mark = "" if (diff.low > 0 or diff.high < 0) else " ns"
        out.append(f"{row[:14]:<14}{r.n:>6}{r.mean_a:>9.{digits}f}{r.mean_b:>9.{digits}f}  {text + mark:<28}"
                   f"{_p(r.p_value):>8}{_p(r.mcnemar_p):>9}{r.mde:>8.{digits}f}")
    out.append(f"p: {overall.test} over {overall.difference.clusters} units; ns: the interval holds 0")
    out.append(f"interval: {overall.difference.method}")
    out.append("MDE: smallest true difference found 80% of the time at 5% (2.8 bootstrap SE); McNemar: exact, "
               "per question"[:WIDTH])
    return out
