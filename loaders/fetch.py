"""The benchmarks' pinned sources, their fetch, and the data folder a run reads (fetched into when missing)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests
from tqdm import tqdm

from loaders.hub import HubFile, fetch_hub_file
from loaders.longmemeval import FILE_NAMES as LME_FILES, SUBDIR as LME_DIR
from loaders.pins import GitHubFiles, PinnedFile, SourceUnreachable, fetch_pinned, raw_url, sha256_of
from memory_protocol import DatasetError, cache_root, search_folders

DATA_ENV = "MEMPP_DATA_DIR"
FETCH_COMMAND = "python scripts/fetch_data.py"
MANIFEST_DIR = Path(__file__).resolve().parent / "manifests"


@dataclass(frozen=True)
class BenchmarkSource:
    """Where a benchmark's files come from, and which must exist to run it (a tuple: any one of them).

    A fetch writes the ``required`` files last, so an interrupted fetch never looks complete.
    """

    name: str
    origin: GitHubFiles | HubFile
    licence: str
    required: tuple[str | tuple[str, ...], ...]

    def missing(self, data_dir: Path) -> list[str]:
        groups = ((e,) if isinstance(e, str) else e for e in self.required)
        return [" or ".join(g) for g in groups if not any((data_dir / n).is_file() for n in g)]


def read_manifest(path: Path, local_prefix: str) -> tuple[PinnedFile, ...]:
    """``<sha256>  <path>`` lines (sha256sum's format) -> pins."""
    rows = (line.partition("  ") for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    return tuple(PinnedFile(name, f"{local_prefix}{name}", digest) for digest, _, name in rows)


# Our reference copy of OrgMemBench's pinned commit was transcribed from a public file index, not
# hash-checked upstream (its SOURCE.md): a byte that differs upstream shows as a mismatch here.
ORGMEM_COMMIT = "4d6fb64b8c0a7111fbdf00a5d3c5705872343606"
ORGMEM_MANIFEST = MANIFEST_DIR / "orgmem_medium.sha256"
LOCOMO_COMMIT = "3eb6f2c585f5e1699204e3c3bdf7adc5c28cb376"
LOCOMO_SHA256 = "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4"
# The revision of xiaowu0162/longmemeval-cleaned that several public projects pin (its 2025-09
# release), not confirmed here; no sha256 is pinned: the fetch records the hash it got.
LONGMEMEVAL_REVISION = "98d7416c24c778c2fee6e6f3006e7a073259d48f"


def benchmark_sources() -> dict[str, BenchmarkSource]:
    """Every fetchable benchmark by its dataset name (the names of ``loaders.DATASETS``)."""
    medium = "orgmembench/datasets/helix/medium/"
    return {s.name: s for s in (
        BenchmarkSource("orgmem", GitHubFiles("PandelisZ/OrgMemBench", ORGMEM_COMMIT,
                                              read_manifest(ORGMEM_MANIFEST, "orgmembench/"), ORGMEM_MANIFEST),
                        "CC-BY-4.0 (OrgMemBench by Jack Gardner)",
                        tuple(medium + n for n in ("source_of_truth/events.jsonl", "benchmark_v0.0.jsonl",
                                                   "corpus_index.jsonl"))),
        BenchmarkSource("locomo", GitHubFiles("snap-research/locomo", LOCOMO_COMMIT, (
            PinnedFile("data/locomo10.json", "locomo/locomo10.json", LOCOMO_SHA256),)),
            "CC BY-NC 4.0 (Maharana et al., 2024)", ("locomo/locomo10.json",)),
        # the hub's file; the loader also takes our 499-question rebuild
        BenchmarkSource("longmemeval_s", HubFile("xiaowu0162/longmemeval-cleaned", LME_FILES[0],
                                                 LONGMEMEVAL_REVISION, f"{LME_DIR}/{LME_FILES[0]}"),
                        "MIT (Wu et al., 2025)", (tuple(f"{LME_DIR}/{n}" for n in LME_FILES),)),
    )}


@dataclass(frozen=True)
class FetchReport:
    """What one fetch did. ``digest`` is the file's sha256 (one file) or the manifest's (many)."""

    name: str
    data_dir: Path
    source: str
    files: int
    fetched: int
    repaired: int
    total_bytes: int
    digest: str
    digest_of: str
    licence: str

    def line(self) -> str:
        repaired = f" ({self.repaired} corrupted, replaced)" if self.repaired else ""
        return (f"{self.name}: {self.files} file(s), {self.total_bytes:,} bytes in {self.data_dir}: "
                f"{self.fetched} fetched{repaired}, {self.files - self.fetched} already there, from {self.source}; "
                f"{self.digest_of} sha256 {self.digest}; licence {self.licence}")


def fetch_benchmark(name: str, data_dir: Path, *, progress: bool = True) -> FetchReport:
    """Bring ``name``'s pinned files into ``data_dir`` and verify them (SourceUnreachable, ChecksumMismatch)."""
    sources = benchmark_sources()
    if name not in sources:
        raise DatasetError(name, f"no remote source for {name!r}; fetchable: {sorted(sources)}")
    source = sources[name]
    data_dir.mkdir(parents=True, exist_ok=True)
    origin = source.origin
    if isinstance(origin, HubFile):
        hub = fetch_hub_file(origin, data_dir, progress=progress)
        return FetchReport(name, data_dir, hub.source, 1, int(hub.fetched), int(hub.repaired), hub.size,
                           hub.sha256, origin.local, source.licence)
    entries = {n for e in source.required for n in ((e,) if isinstance(e, str) else e)}
    many = len(origin.files) > 1
    fetched = repaired = total = 0
    with requests.Session() as session, tqdm(total=len(origin.files), unit="file", desc=name,
                                             disable=not (progress and many), leave=False) as bar:
        for pin in sorted(origin.files, key=lambda f: f.local in entries):
            dest = data_dir / pin.local
            got, replaced = fetch_pinned(session, raw_url(origin.repo, origin.commit, pin.remote), dest,
                                         pin.sha256, progress=progress and not many)
            fetched, repaired, total = fetched + got, repaired + replaced, total + dest.stat().st_size
            bar.update()
    if origin.manifest is not None:
        digest, digest_of = sha256_of(origin.manifest), f"manifest {origin.manifest.name}"
    else:
        digest, digest_of = origin.files[0].sha256, origin.files[0].local
    return FetchReport(name, data_dir, raw_url(origin.repo, origin.commit, ""), len(origin.files), fetched,
                       repaired, total, digest, digest_of, source.licence)


# ---------------------------------------------------------------- the data folder


def resolve_data_dir(named: str | os.PathLike[str] | None = None, *, env: Mapping[str, str] | None = None,
                     cwd: Path | None = None, repo_root: Path | None = None) -> Path:
    """The data folder: the setting, else $MEMPP_DATA_DIR (either must exist), else the first existing
    of ./data, <repo>/data, <repo>/../shared/data and <cache root>/data."""
    candidates = search_folders("data", named, DATA_ENV, env=env, cwd=cwd, repo_root=repo_root)
    for path, _ in candidates:  # a named folder is the only candidate
        if path.is_dir():
            return path.resolve()
    tried = "; ".join(f"{p} ({why})" for p, why in candidates)
    if _is_named(named, env):
        raise DatasetError(str(candidates[0][0]), f"data directory does not exist; looked in: {tried}")
    raise DatasetError("data directory", f"no data directory found; looked in: {tried}. "
                                         f"Pass data_dir or set ${DATA_ENV}.")


def _is_named(named: Any, env: Mapping[str, str] | None) -> bool:
    return (named is not None and str(named) != "") or bool((os.environ if env is None else env).get(DATA_ENV))


def prepare_data_dir(name: str, data_dir: str | os.PathLike[str] | None = None,
                     options: Mapping[str, Any] | None = None, *, progress: bool = True,
                     env: Mapping[str, str] | None = None) -> Path:
    """The folder to load ``name`` from; when no candidate holds a fetchable benchmark, its pinned files
    are fetched into the named folder (which must exist), else into <cache root>/data."""
    options = options or {}
    source = benchmark_sources().get(name)
    if source is None or options.get("file") or options.get("tier", "medium") != "medium":
        return resolve_data_dir(data_dir, env=env)
    named = _is_named(data_dir, env)
    if named:
        resolve_data_dir(data_dir, env=env)  # a typo is not a place to fetch into
    candidates = search_folders("data", data_dir, DATA_ENV, env=env)
    for path, _ in candidates:
        if path.is_dir() and not source.missing(path):
            return path.resolve()
    target = candidates[0][0] if named else cache_root(env) / "data"
    try:
        report = fetch_benchmark(name, target, progress=progress)
    except SourceUnreachable as exc:
        if isinstance(source.origin, GitHubFiles):
            missing = [f.local for f in source.origin.files if not (target / f.local).is_file()]
        else:
            missing = source.missing(target)
        shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        raise DatasetError(name, f"{len(missing)} data file(s) missing ({shown}) and the fetch failed ({exc}); "
                                 f"run `{FETCH_COMMAND} {name}` when online, or put the files under {target}") from None
    print(report.line(), file=sys.stderr)
    return target.resolve()
