"""The results store: one folder per run (config, per-question records, summary), written as one
unit (:mod:`harness.run_folder`); every label in a path is reduced to a safe part first. Later runs of
the same configuration keep the first run's cost and timing and append theirs to ``history.jsonl``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from harness.run_folder import MANIFEST, SEALED, carry_over, folder_lock, seal, staged_folder, swap_in
from harness.safe_write import append_line, atomic_write, read_lines

HASH_CHARS = 10
MAX_NAME_CHARS = 120
_UNSAFE = re.compile(r"[^A-Za-z0-9._=,+@-]+")


def safe_part(text: Any, fallback: str = "run") -> str:
    """``text`` as one harmless path component (``../../x`` -> ``x``; ``/abs/path`` -> ``abs_path``)."""
    cleaned = _UNSAFE.sub("_", str(text))
    cleaned = re.sub(r"\.{2,}", "_", cleaned)  # no '..' anywhere
    cleaned = cleaned.strip("._-")
    return cleaned[:MAX_NAME_CHARS] or fallback


@dataclass
class RunResult:
    paths: RunPaths | None
    summary: pd.DataFrame | None
    table: str
    records: list[dict[str, Any]]
    stats: dict[str, Any] = field(default_factory=dict)
    estimates: list[Any] = field(default_factory=list)  # estimate=true: CostEstimate and WriteTimeEstimate
    embedding_estimate: Any = None  # estimate=true: texts still to embed, priced (an EmbeddingEstimate)
    console: str = ""  # the table as the console prints it by default (headline columns, <= 120 characters a line)


class _InRoot:
    def __init__(self, filename: str) -> None:
        self.filename = filename

    def __get__(self, paths: RunPaths, owner: type | None = None) -> Path:
        return paths.root / self.filename


@dataclass(frozen=True)
class RunPaths:
    root: Path

    config = _InRoot("config.json")
    records = _InRoot("records.jsonl")
    summary_csv = _InRoot("summary.csv")
    summary_md = _InRoot("summary.md")
    metrics = _InRoot("metrics.json")
    history = _InRoot("history.jsonl")


# Overrides that say nothing about what was computed (by top-level key), and those the label carries.
_QUIET_ROOTS = ("progress", "estimate", "cache_only", "run_name", "store", "hydra", "print", "batch")
_IN_LABEL = ("system", "answerer")


def readable_suffix(overrides: list[str] | None) -> str:
    """The overrides that changed the run, as a folder-name part (``progress=false`` etc. left out)."""
    kept = []
    for item in overrides or []:
        item = item.lstrip("+~")
        key = item.split("=", 1)[0]
        if key.split(".", 1)[0] in _QUIET_ROOTS or key in _IN_LABEL:
            continue
        kept.append(item)
    return safe_part(",".join(kept), fallback="") if kept else ""


def run_folder(results_dir: str | Path, dataset: str, label: str, config_hash: str,
               overrides: list[str] | None = None) -> RunPaths:
    """``<results_dir>/<dataset>/<label>[__<overrides>]-<hash>``; an existing folder with the same
    dataset and hash is reused whatever its name (the same configuration reached another way)."""
    parent = Path(results_dir) / safe_part(dataset, "dataset")
    short = config_hash[:HASH_CHARS]
    if parent.is_dir():
        existing = sorted(p for p in parent.glob(f"*-{short}") if p.is_dir())
        if existing:
            return RunPaths(existing[0])
    name = safe_part(label)
    suffix = readable_suffix(overrides)
    if suffix:
        name = f"{name}__{suffix}"[:MAX_NAME_CHARS]
    return RunPaths(parent / f"{name}-{short}")


def write_run(
    paths: RunPaths,
    config: dict[str, Any],
    records: list[dict[str, Any]],
    summary: pd.DataFrame,
    summary_text: str,
    extra: dict[str, Any],
) -> None:
    """Write the run as one unit, the history line included. ``extra``: ``stats`` and ``provenance``;
    a folder already holding the same summary keeps its first run's, this run goes to history only."""
    summary_json = json.loads(summary.to_json(orient="index"))
    metrics = {"summary": summary_json, **extra}
    with folder_lock(paths.root):
        previous = _read_json(paths.metrics)
        first = previous is None or previous.get("summary") != summary_json
        if not first:
            for key in ("stats", "provenance"):
                if key in previous:
                    metrics[key] = previous[key]
        read_lines(paths.history)  # a torn last line is set aside where it is, before the copy
        with staged_folder(paths.root) as stage:
            new = RunPaths(stage)
            carry_over(paths.root, stage, skip=(*SEALED, MANIFEST))
            atomic_write(new.config, json.dumps(config, indent=2, sort_keys=True, default=str))
            atomic_write(new.records, "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records))
            atomic_write(new.summary_csv, summary.to_csv(index_label="category"))
            atomic_write(new.summary_md, summary_text + "\n")
            atomic_write(new.metrics, json.dumps(metrics, indent=2, sort_keys=True))
            seal(stage)
            append_line(new.history, json.dumps({**extra, "first_run": first}, sort_keys=True, default=str))
            swap_in(stage, paths.root)


def append_history(paths: RunPaths, entry: dict[str, Any]) -> None:
    """One line per run of this folder, appended whole (a torn line is set aside first)."""
    with folder_lock(paths.root):
        append_line(paths.history, json.dumps(entry, sort_keys=True, default=str))


def read_history(paths: RunPaths) -> list[dict[str, Any]]:
    """The runs recorded in ``history.jsonl``, oldest first."""
    return [json.loads(line) for line in read_lines(paths.history) if line.strip()]


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
