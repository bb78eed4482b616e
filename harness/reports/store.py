"""The results store as one tidy frame: a row per run x summary category x metric, with the run-level
columns and ``config``, the resolved configuration flattened to dotted keys for run selection.
"""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path
from typing import Any

import pandas as pd

from harness.reports.labels import headline_of
from harness.safe_write import check_run_folder, is_staging

log = logging.getLogger(__name__)

DEFAULT_RUNS_DIR = Path("outputs/runs")
RUN_KEYS = ("dataset", "system", "k", "answerer")
RUN_COLUMNS = [
    "dataset", "system", "system_name", "kind", "k", "answerer", "plumbing", "failed", "limit", "categories_filter",
    "default_k", "mean_read_chars", "questions", "all_graded", "wording", "run", "folder", "mtime", "config",
]
TIDY_COLUMNS = [*RUN_COLUMNS, "category", "metric", "value"]
PROVIDER_HOSTS = ("api.openai.com", "api.anthropic.com")


def number(value: Any) -> float:
    if value is None or isinstance(value, bool):
        return math.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def flatten(config: Any, prefix: str = "") -> dict[str, Any]:
    """``{"a": {"b": 1}}`` -> ``{"a.b": 1}``; lists stay values (as JSON text, comparable)."""
    if isinstance(config, dict):
        out: dict[str, Any] = {}
        for key, value in config.items():
            out.update(flatten(value, f"{prefix}{key}."))
        if not config and prefix:
            out[prefix[:-1]] = "{}"
        return out
    if isinstance(config, (list, tuple)):
        return {prefix[:-1]: json.dumps(list(config), sort_keys=True)}
    return {prefix[:-1]: config}


def _answerer_name(value: Any) -> str:
    """The answerer's config name; for ``openai_compatible`` the model it served."""
    if isinstance(value, dict):
        value = value.get("model") if value.get("name") == "openai_compatible" else value.get("name", "none")
    return "none" if value is None else str(value)


def is_plumbing(config: dict[str, Any], stats: dict[str, Any]) -> bool:
    """A local model, or any answerer/judge endpoint that is not a provider's own."""
    specs = [spec for spec in (config.get("answerer"), config.get("judge")) if isinstance(spec, dict)]
    return bool(stats.get("plumbing")) or any(
        spec.get("local") or (spec.get("base_url") and not any(host in str(spec["base_url"]) for host in PROVIDER_HOSTS))
        for spec in specs)


def is_failed(config: dict[str, Any], metrics: dict[str, Any]) -> bool:
    """A run with an answerer whose headline is missing, or whose every answer or judge call failed."""
    if _answerer_name(config.get("answerer")) == "none":
        return False
    stats = metrics.get("stats") or {}
    questions = stats.get("questions") or 0
    if questions and stats.get("answer_failures", 0) >= questions:
        return True
    headline = headline_of(config.get("dataset") or {})
    values = [number((row or {}).get(headline)) for row in (metrics.get("summary") or {}).values()]
    return all(math.isnan(v) for v in values)


GRADE_LOSSES = ("answer_failures", "judge_failures", "judge_unparsed")


def all_graded(stats: dict[str, Any]) -> bool:
    """Every answer was given and every grade parsed (the stats name no loss): then the parsed-only
    mean equals the paper's 100/N number, run by run. False when a loss is counted or unknown."""
    return all(key in stats and stats[key] == 0 for key in GRADE_LOSSES)


def run_info(folder: Path, config: dict[str, Any], metrics: dict[str, Any], root: Path | None = None) -> dict[str, Any]:
    """The run-level columns of one run folder."""
    dataset = config.get("dataset") or {}
    system = config.get("system") or {}
    stats = metrics.get("stats") or {}
    system_name = str(system.get("name", folder.name.rsplit("-", 1)[0]))
    categories = dataset.get("categories")
    return {
        "dataset": str(dataset.get("name", folder.parent.name)),
        "system": str(config.get("run_name") or system_name),
        "system_name": system_name,
        "kind": str(system.get("kind", "")),
        "k": int(system["k"]) if system.get("k") is not None else -1,
        "answerer": _answerer_name(config.get("answerer", "none")),
        "plumbing": is_plumbing(config, stats),
        "failed": is_failed(config, metrics),
        "limit": dataset.get("limit"),
        "categories_filter": ",".join(map(str, categories)) if categories else None,
        "default_k": (dataset.get("mempp") or {}).get("k", 50),  # older runs recorded it; the paper fixes k = 50
        "mean_read_chars": number(stats.get("mean_read_chars")),
        "questions": stats.get("questions"),
        "all_graded": all_graded(stats),
        "wording": None if metrics.get("wording") is None else str(metrics["wording"]),  # None: older run
        "run": str(folder),
        "folder": str(folder.relative_to(root)) if root is not None else folder.name,
        "mtime": folder.stat().st_mtime,
        "config": flatten(config),
    }


def scan_runs(runs_dir: str | Path = DEFAULT_RUNS_DIR) -> pd.DataFrame:
    """Every ``<dataset>/<run>/`` folder with config.json and metrics.json as a tidy frame (others are
    skipped with a warning); a half-written folder raises :class:`~harness.safe_write.HalfWrittenRun`."""
    rows: list[dict[str, Any]] = []
    root = Path(runs_dir)
    for config_path in sorted(root.glob("*/*/config.json")):
        folder = config_path.parent
        if is_staging(folder):
            continue
        metrics_path = folder / "metrics.json"
        if not metrics_path.is_file():
            log.warning("skipping %s: no metrics.json (unfinished run?)", folder)
            continue
        check_run_folder(folder, hashed=("config.json", "metrics.json"))
        try:
            config = json.loads(config_path.read_text(encoding="utf-8"))
            metrics = json.loads(metrics_path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            log.warning("skipping %s: %s", folder, exc)
            continue
        info = run_info(folder, config, metrics, root)
        for category, values in (metrics.get("summary") or {}).items():
            for metric, value in (values or {}).items():
                rows.append({**info, "category": str(category), "metric": str(metric), "value": number(value)})
    return pd.DataFrame(rows, columns=TIDY_COLUMNS)


def runs_of(tidy: pd.DataFrame) -> pd.DataFrame:
    """One row per run (the run-level columns)."""
    return tidy.drop_duplicates("run")[[c for c in RUN_COLUMNS if c in tidy.columns]].reset_index(drop=True)


def latest_runs(tidy: pd.DataFrame) -> pd.DataFrame:
    """Without a preset: only the newest run (folder mtime, then name) per (dataset, system, k, answerer)."""
    if tidy.empty:
        return tidy
    runs = runs_of(tidy).sort_values(["mtime", "run"])
    newest = runs.groupby(list(RUN_KEYS), dropna=False).tail(1)["run"]
    return tidy[tidy["run"].isin(set(newest))].reset_index(drop=True)


class RunView:
    """Fast look-ups into the tidy frame of the selected runs."""

    def __init__(self, tidy: pd.DataFrame):
        self.values: dict[tuple[str, str, str], float] = {
            (r, c, m): v for r, c, m, v in zip(tidy["run"], tidy["category"], tidy["metric"], tidy["value"])
        }

    def value(self, run: str, category: str, metric: str) -> float:
        return self.values.get((run, category, metric), math.nan)

    def has(self, run: str, metric: str) -> bool:
        return any(not math.isnan(v) for (r, _c, m), v in self.values.items() if r == run and m == metric)
