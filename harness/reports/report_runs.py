"""The run folders an HTML report reads, and what tells several apart: the config keys that differ,
the kind of comparison (k sweep, leg ablation), the headline metric, short labels and the order.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.reports.labels import FALLBACK_METRICS, headline_of
from harness.reports.store import flatten
from harness.run_data import RunData as StoredRun, load_run as read_run

# Config roots that say how a run was executed, not what was measured: never a reason to compare.
_NOT_MEASURED = ("store", "progress", "estimate", "cache_only", "run_name", "official_dir")
# Leg weights and leg lists (a system's own, or the dataset's Mem++ defaults), and the system's name
# that an ablation preset changes with them.
_LEG_KEY = re.compile(r"^(system\.params\.(weights|legs)|dataset\.mempp\.weights)(\.|$)|^system\.name$")
_NUMBER = re.compile(r"(-?\d+(?:\.\d+)?)")


@dataclass
class RunData(StoredRun):
    """One run folder as the report reads it, with its label on the page."""

    label: str = ""

    @property
    def ks(self) -> list[int]:
        return [int(k) for k in self.config.get("dataset", {}).get("ks") or []]

    @property
    def system_k(self) -> int | None:
        k = self.config.get("system", {}).get("k")
        return int(k) if isinstance(k, (int, float)) else None


def load_run(root: str | Path) -> RunData:
    """A whole run folder (config.json, metrics.json, records.jsonl) as the report reads it."""
    run = read_run(root, need=("config.json", "metrics.json", "records.jsonl"), sealed=True)
    return RunData(run.folder, run.config, run.records, run.metrics, label=run.folder.name)


def differing_keys(runs: Sequence[RunData]) -> list[str]:
    """The config keys whose values are not the same in every run (execution settings left out)."""
    flats = [{k: v for k, v in flatten(run.config).items() if k.split(".")[0] not in _NOT_MEASURED} for run in runs]
    keys = sorted(set().union(*flats)) if flats else []
    return [key for key in keys if len({json.dumps(flat.get(key), sort_keys=True) for flat in flats}) > 1]


def comparison_kind(runs: Sequence[RunData]) -> str | None:
    """``"k_sweep"`` when the runs differ only in ``system.k``; ``"legs"`` when they differ only in leg
    weights or legs (and the system's name); None otherwise or for a single run."""
    if len(runs) < 2:
        return None
    keys = differing_keys(runs)
    if keys == ["system.k"]:
        return "k_sweep"
    if keys and all(_LEG_KEY.search(key) for key in keys) and any(key != "system.name" for key in keys):
        return "legs"
    return None


def has_metric(summary: Mapping[str, Mapping[str, Any]], metric: str) -> bool:
    return any(as_number(row.get(metric)) is not None for row in summary.values())


def headline_metric(runs: Sequence[RunData]) -> str:
    """The benchmark's headline metric when every run has it (an answered run), else the first of
    the retrieval fallbacks every run has."""
    first = runs[0]
    candidates = [headline_of(first.config.get("dataset", {})), *FALLBACK_METRICS]
    for metric in candidates:
        if all(has_metric(run.summary, metric) for run in runs):
            return metric
    return next(iter(next(iter(first.summary.values()), {})), "n")


def as_number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return None if math.isnan(value) else float(value)


def categories(runs: Sequence[RunData]) -> list[str]:
    """Every summary category, ``overall`` rows last."""
    return sorted({name for run in runs for name in run.summary}, key=lambda name: (name.startswith("overall"), name))


def short_labels(runs: Sequence[RunData]) -> list[str]:
    """A label per run for the legends: the system's name for one run; for several, what tells them
    apart (``k=10``, ``name=mempp_no_vector, vector=0``); the folder names when that is long or not unique."""
    if len(runs) == 1:
        return [str(runs[0].config.get("system", {}).get("name") or runs[0].label)]
    keys = differing_keys(runs)
    labels = []
    for run in runs:
        flat = flatten(run.config)
        labels.append(", ".join(f"{key.split('.')[-1]}={_short(flat.get(key))}" for key in keys))
    if keys and len(set(labels)) == len(labels) and all(len(label) <= 48 for label in labels):
        return labels
    labels = [str(run.config.get("system", {}).get("name")) + (f", k={run.system_k}" if "system.k" in keys else "")
              for run in runs]
    if len(set(labels)) == len(labels):
        return labels
    folders = [run.folder.name for run in runs]
    if len(set(folders)) < len(folders):
        folders = [f"{run.folder.parent.name}/{run.folder.name}" for run in runs]
    return folders


def _short(value: Any) -> str:
    if isinstance(value, str) and value.startswith("["):  # a list, as flatten writes it
        with contextlib.suppress(ValueError):
            return "+".join(str(v) for v in json.loads(value))
    return "none" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def natural_key(text: str) -> tuple[tuple[int, float, str], ...]:
    """A sort key that compares the numbers in ``text`` as numbers ("k=5" < "k=10" < "k=100")."""
    return tuple((0, float(part), "") if _NUMBER.fullmatch(part) else (1, 0.0, part)
                 for part in _NUMBER.split(text) if part)


def ordered(runs: Sequence[RunData]) -> list[RunData]:
    """The runs in the order a report shows them: a k sweep by k, other comparisons by label with
    numbers compared as numbers; a leg ablation keeps the given order (its first run is the baseline
    the changes are measured from)."""
    kind = comparison_kind(runs)
    if kind == "legs":
        return list(runs)
    if kind == "k_sweep":
        return sorted(runs, key=lambda run: run.system_k or 0)
    return sorted(runs, key=lambda run: natural_key(run.label))
