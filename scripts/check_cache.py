"""Verify every entry of every cache file (digest of key + bytes; embeddings: finite vectors) and the
derived models (``onnx/``, ``static/``) against their sha256 records.

    python scripts/check_cache.py                 # the cache root ($MEMPP_CACHE_DIR, else ~/.cache/mempp)
    python scripts/check_cache.py DIR --repair    # drop bad entries and models (the next run recomputes them)
    python scripts/check_cache.py DIR --adopt     # checksum a pre-checksum cache's entries as they stand

One line per file and per bad entry. Exit 0: all check (or were repaired); 1: bad ones left; 2: no such folder.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memory_protocol.paths import cache_root  # noqa: E402
from memplusplus.model_files import derived_models, problem, remove  # noqa: E402
from model_clients.kvstore import (  # noqa: E402
    CacheDiskFull,
    EntryReport,
    KVStore,
    ValueCheck,
    adopt_legacy,
    finite_float32_vectors,
    legacy_entries,
)

MODEL_FOLDERS = ("onnx", "static")  # configs/encoder/minilm_onnx.yaml, minilm_static.yaml: model_dir


@dataclass
class FileReport:
    name: str
    entries: int = 0
    bad: list[EntryReport] = field(default_factory=list)
    legacy: bool = False  # written before checksums: nothing in it can be verified
    skipped: str = ""  # not a cache store (why)
    fixed: bool = False  # bad entries dropped / legacy entries adopted


def value_check_for(path: Path) -> ValueCheck | None:  # embedding files hold float32 vectors
    return finite_float32_vectors if path.name.endswith("embeddings.sqlite") else None


def is_cache_store(path: Path) -> str:
    """Empty when ``path`` is a KVStore file, else why it is skipped (never creates a table)."""
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=60.0) as conn:
            tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as exc:
        return f"not readable as SQLite ({exc})"
    return "" if "kv" in tables else "no kv table (not a cache store)"


def check_file(path: Path, repair: bool, adopt: bool) -> FileReport:
    report = FileReport(path.name)
    report.skipped = is_cache_store(path)
    if report.skipped:
        return report
    legacy = legacy_entries(path)
    if legacy is not None and legacy > 0:
        report.entries, report.legacy = legacy, True
        if adopt:
            report.bad = adopt_legacy(path, value_check_for(path))
            report.fixed = True
        return report
    store = KVStore(path, value_check=value_check_for(path))
    report.entries = len(store)
    report.bad = list(store.scan())
    if repair and report.bad:
        store.drop(entry.key for entry in report.bad)
        report.fixed = True
    return report


def describe(report: FileReport) -> list[str]:
    if report.skipped:
        return [f"{report.name}: skipped, {report.skipped}"]
    if report.legacy:
        head = f"{report.name}: {report.entries} entries written before checksums"
        if not report.fixed:
            return [f"{head}, none verifiable (--adopt checksums them as they stand, or delete the file)"]
        lines = [f"{head}, adopted ({len(report.bad)} refused and dropped)"]
    else:
        action = ", dropped" if report.fixed else ""
        lines = [f"{report.name}: {report.entries} entries, {len(report.bad)} bad{action}"]
    lines += [f"  {entry.key}: {entry.problem}" for entry in report.bad]
    return lines


def check_models(folder: Path, repair: bool) -> tuple[list[str], bool]:
    """One line per derived model under ``folder``'s model folders; whether a bad one was left."""
    lines, left = [], False
    for model in (m for sub in MODEL_FOLDERS for m in derived_models(folder / sub)):
        wrong = problem(model)
        name = model.relative_to(folder).as_posix()
        if wrong is None:
            lines.append(f"{name}: derived model, sha256 as recorded")
        elif repair:
            remove(model)
            lines.append(f"{name}: derived model, bad ({wrong}), deleted (the next run derives it again)")
        else:
            lines.append(f"{name}: derived model, bad ({wrong}); --repair deletes it")
            left = True
    return lines, left


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("cache_dir", nargs="?", type=Path, default=cache_root())
    parser.add_argument("--repair", action="store_true", help="drop the bad entries (recomputed by the next run)")
    parser.add_argument("--adopt", action="store_true",
                        help="checksum the entries of files written before checksums, as they stand")
    args = parser.parse_args(argv)
    folder = args.cache_dir.expanduser()
    if not folder.is_dir():
        print(f"error: no cache folder {folder}", file=sys.stderr)
        return 2
    files = sorted(folder.glob("*.sqlite"))
    model_lines, failed = check_models(folder, args.repair)
    if not files and not model_lines:
        print(f"{folder}: no *.sqlite files and no derived models")
        return 0
    print(f"cache {folder}")
    for path in files:
        try:
            report = check_file(path, args.repair, args.adopt)
        except CacheDiskFull as exc:  # dropping or adopting entries needs room: one line, nothing changed
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print("\n".join(describe(report)))
        unreadable = report.skipped.startswith("not readable")
        failed |= unreadable or (not report.fixed and (report.legacy or bool(report.bad)))
    if model_lines:
        print("\n".join(model_lines))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
