"""The data directory a run reads, fetching the benchmark first when no directory holds it.

The usual search order comes first (the ``data_dir`` setting, else $MEMPP_DATA_DIR, else ./data,
<repo>/data, <repo>/../shared/data, then the user data cache ~/.cache/mempp/data): the first of these
that holds the benchmark's files is used as it is, with no network. When none does, the pinned files
are fetched into the directory the loaders will then read: the named one (which must exist), else
the user cache.
Offline, that ends in one line naming the missing files, the fetch command and the directory.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from loaders.datadir import Candidate, explicit_data_dir, fallback_candidates, resolve_data_dir, user_data_dir
from loaders.download import SourceUnreachable
from loaders.fetch import fetch_benchmark
from memory_protocol import DatasetError
from loaders.sources import BenchmarkSource, GitHubFiles, benchmark_sources

FETCH_COMMAND = "python scripts/fetch_data.py"


def fetchable(name: str, options: Mapping[str, Any]) -> BenchmarkSource | None:
    """The remote source of the files this run would read, or None (another tier, a file of one's own)."""
    source = benchmark_sources().get(name)
    if source is None or options.get("file") or options.get("tier", "medium") != "medium":
        return None
    return source


def prepare_data_dir(
    name: str,
    data_dir: str | os.PathLike[str] | None = None,
    options: Mapping[str, Any] | None = None,
    *,
    progress: bool = True,
    env: Mapping[str, str] | None = None,
) -> Path:
    """The directory to load ``name`` from, fetched into when the benchmark is nowhere on disk."""
    env = os.environ if env is None else env
    source = fetchable(name, options or {})
    if source is None:
        return resolve_data_dir(data_dir, env=env)
    named = explicit_data_dir(data_dir, env)
    if named is not None:
        resolve_data_dir(data_dir, env=env)  # a named directory must exist: a typo is not a place to fetch into
    candidates: list[Candidate] = [named] if named is not None else fallback_candidates()
    for candidate in candidates:
        if candidate.path.is_dir() and not source.missing(candidate.path):
            return candidate.path.resolve()
    target = named.path if named is not None else user_data_dir()
    try:
        report = fetch_benchmark(name, target, progress=progress)
    except SourceUnreachable as exc:
        raise DatasetError(name, _offline_message(source, target, exc)) from None
    print(report.line(), file=sys.stderr)
    return target.resolve()


def _missing_files(source: BenchmarkSource, target: Path) -> list[str]:
    """Every pinned file absent from ``target`` (for the hub file: the names the loader would take)."""
    if isinstance(source.origin, GitHubFiles):
        return [f.local for f in source.origin.files if not (target / f.local).is_file()]
    return source.missing(target)


def _offline_message(source: BenchmarkSource, target: Path, exc: SourceUnreachable) -> str:
    missing = _missing_files(source, target)
    shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
    return (
        f"{len(missing)} data file(s) missing ({shown}) and the fetch failed ({exc}); "
        f"run `{FETCH_COMMAND} {source.name}` when online, or put the files under {target}"
    )
