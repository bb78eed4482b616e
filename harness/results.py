"""The results store: one folder per run with its config, per-question records and summary.

Files are written to a temporary name and renamed, so a killed run never leaves half a file.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


@dataclass(frozen=True)
class RunPaths:
    root: Path

    @property
    def config(self) -> Path:
        return self.root / "config.json"

    @property
    def records(self) -> Path:
        return self.root / "records.jsonl"

    @property
    def summary_csv(self) -> Path:
        return self.root / "summary.csv"

    @property
    def summary_md(self) -> Path:
        return self.root / "summary.md"

    @property
    def metrics(self) -> Path:
        return self.root / "metrics.json"


def run_folder(results_dir: str | Path, dataset: str, label: str, config_hash: str) -> RunPaths:
    return RunPaths(Path(results_dir) / dataset / f"{label}-{config_hash[:10]}")


def write_run(
    paths: RunPaths,
    config: dict[str, Any],
    records: list[dict[str, Any]],
    summary: pd.DataFrame,
    summary_text: str,
    extra: dict[str, Any],
) -> None:
    _atomic_write(paths.config, json.dumps(config, indent=2, sort_keys=True, default=str))
    _atomic_write(paths.records, "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records))
    _atomic_write(paths.summary_csv, summary.to_csv(index_label="category"))
    _atomic_write(paths.summary_md, summary_text + "\n")
    metrics = {"summary": json.loads(summary.to_json(orient="index")), **extra}
    _atomic_write(paths.metrics, json.dumps(metrics, indent=2, sort_keys=True))


def read_metrics(paths: RunPaths) -> dict[str, Any]:
    return json.loads(paths.metrics.read_text(encoding="utf-8"))
