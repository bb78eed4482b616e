"""The one reader of a run folder (reports, explain, the statistics scripts, ...): its config, its
per-question records, its metrics, what its benchmark says about rows; and the scripts' ``key=value``
options (a CliError is one line, exit 2)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.safe_write import HalfWrittenRun, check_run_folder

RETRIEVAL_DEFAULT = "recall_any@10"


class CliError(Exception):
    pass


def parse_options(items: Sequence[str], known: Sequence[str]) -> dict[str, str]:
    """``["dataset.errata=locomo-audit"]`` -> ``{"dataset.errata": "locomo-audit"}``; unknown keys refused."""
    options: dict[str, str] = {}
    for item in items:
        key, sep, value = item.lstrip("+").partition("=")
        if not sep:
            raise CliError(f"expected key=value, got {item!r} (keys: {', '.join(known)})")
        if key not in known:
            raise CliError(f"unknown option {key!r} (keys: {', '.join(known)})")
        options[key] = value
    return options


def int_option(options: dict[str, str], key: str, default: int) -> int:
    try:
        return int(options.get(key, default))
    except ValueError:
        raise CliError(f"{key} must be an integer, got {options[key]!r}") from None


def run_script(doc: str, argv: list[str], body: Callable[[list[str]], list[str]], min_args: int = 1) -> int:
    """``--help`` (or too few arguments) prints ``doc``; ``body(argv)`` returns the lines to print."""
    if len(argv) < min_args or argv[0] in ("-h", "--help"):
        print(doc)
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    try:
        lines = body(argv)
    except CliError as exc:
        print(exc, file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


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
    def summary(self) -> dict[str, dict[str, Any]]:
        return self.metrics.get("summary") or {}

    @property
    def provenance(self) -> dict[str, Any]:
        return self.metrics.get("provenance") or {}

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
    """A JSON file of the folder ({} when it is absent)."""
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise CliError(f"{path}: unreadable ({exc})") from None


def _records(path: Path) -> list[dict[str, Any]]:
    """Each non-blank line of records.jsonl (none when it is absent); a line that is not JSON is a CliError."""
    if not path.is_file():
        return []
    records = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            try:
                records += [json.loads(line)] if line.strip() else []
            except json.JSONDecodeError as exc:
                raise CliError(f"{path} line {number}: not JSON ({exc.msg})") from None
    return records


def load_run(folder: str | Path, need: Sequence[str] = ("config.json", "records.jsonl"),
             sealed: bool | Sequence[str] = False) -> RunData:
    """A run folder's config.json, records.jsonl and metrics.json; those not in ``need`` may be absent
    (read as empty). ``sealed`` first checks the folder is whole (``check_run_folder``: True hashes every
    file, a list of names only those). A folder that is not a (whole) run is a one-line CliError."""
    folder = Path(folder)
    missing = [name for name in need if not (folder / name).is_file()]
    if missing:
        raise CliError(f"{folder} is not a run folder (it has no {' or '.join(missing)})")
    if sealed is not False:
        try:
            check_run_folder(folder, hashed=None if sealed is True else sealed)
        except HalfWrittenRun as exc:
            raise CliError(str(exc)) from None
    return RunData(folder, _json(folder / "config.json"), _records(folder / "records.jsonl"), _json(folder / "metrics.json"))
