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
from pathlib import Path

import script_common  # noqa: F401 - this checkout on sys.path
from memory_protocol import cache_root
from memplusplus.model_files import derived_models, problem, remove
from model_clients.kvstore import (
    CacheDiskFull,
    EntryReport,
    KVStore,
    ValueCheck,
    adopt_legacy,
    finite_float32_vectors,
    legacy_entries,
)

MODEL_FOLDERS = ("onnx", "static")  # configs/encoder/minilm_onnx.yaml, minilm_static.yaml: model_dir


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


def check_file(path: Path, repair: bool, adopt: bool) -> tuple[list[str], bool]:
    """The lines to print for one file, and whether a problem was left in it."""
    skipped = is_cache_store(path)
    if skipped:
        return [f"{path.name}: skipped, {skipped}"], skipped.startswith("not readable")
    legacy = legacy_entries(path)
    bad: list[EntryReport]
    if legacy is not None and legacy > 0:  # written before checksums: nothing in it can be verified
        head = f"{path.name}: {legacy} entries written before checksums"
        if not adopt:
            return [f"{head}, none verifiable (--adopt checksums them as they stand, or delete the file)"], True
        bad = adopt_legacy(path, value_check_for(path))
        lines = [f"{head}, adopted ({len(bad)} refused and dropped)"]
    else:
        store = KVStore(path, value_check=value_check_for(path))
        entries, bad = len(store), list(store.scan())
        fixed = repair and bool(bad)
        if fixed:
            store.drop(entry.key for entry in bad)
        lines = [f"{path.name}: {entries} entries, {len(bad)} bad{', dropped' if fixed else ''}"]
        if bad and not fixed:
            return lines + [f"  {e.key}: {e.problem}" for e in bad], True
    return lines + [f"  {e.key}: {e.problem}" for e in bad], False


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
            lines, left = check_file(path, args.repair, args.adopt)
        except CacheDiskFull as exc:  # dropping or adopting entries needs room: one line, nothing changed
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print("\n".join(lines))
        failed |= left
    if model_lines:
        print("\n".join(model_lines))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
