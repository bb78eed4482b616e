"""One run folder read back for statistics: its config, its per-question records, and what its
benchmark says about rows (which categories stay out of ``overall``, its judge metric)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.cli_options import CliError

RETRIEVAL_DEFAULT = "recall_any@10"


@dataclass
class RunData:
    folder: Path
    config: dict[str, Any]
    records: list[dict[str, Any]]
    metrics: dict[str, Any]

    @property
    def dataset(self) -> str:
        return str((self.config.get("dataset") or {}).get("name", self.folder.parent.name))

    @property
    def system(self) -> str:
        return str(self.config.get("run_name") or (self.config.get("system") or {}).get("name", self.folder.name))

    @property
    def answered(self) -> bool:
        answerer = self.config.get("answerer")
        name = answerer.get("name") if isinstance(answerer, dict) else answerer
        return name not in (None, "none")

    def benchmark(self):
        from harness.benchmarks import benchmark_path, load_benchmark

        return load_benchmark(benchmark_path(self.config.get("dataset") or {}))

    def excluded(self) -> list[str]:
        """The rows this run's ``overall`` leaves out."""
        try:
            return self.benchmark().overall_excludes(answered=self.answered)
        except Exception:  # a benchmark module that no longer imports: every category counts
            return []

    def headline(self) -> str:
        """The judge metric when the run was answered, else recall_any@10."""
        if self.answered:
            try:
                return self.benchmark().headline
            except Exception:
                pass
        return RETRIEVAL_DEFAULT


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise CliError(f"{path}: unreadable ({exc})") from None


def load_run(folder: Path) -> RunData:
    """A run folder (config.json, records.jsonl, metrics.json); one-line CliError when it is not one."""
    folder = Path(folder)
    if not (folder / "records.jsonl").is_file() or not (folder / "config.json").is_file():
        raise CliError(f"{folder} is not a run folder (it needs config.json and records.jsonl)")
    records = []
    with open(folder / "records.jsonl", encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise CliError(f"{folder / 'records.jsonl'} line {number}: not JSON ({exc.msg})") from None
    metrics = _json(folder / "metrics.json") if (folder / "metrics.json").is_file() else {}
    return RunData(folder, _json(folder / "config.json"), records, metrics)
