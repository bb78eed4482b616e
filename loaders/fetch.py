"""One way to fetch and pin a file: GitHub raw files at a commit, each verified against its sha256.

Benchmarks (``scripts/fetch_data.py``, or a run that finds no data), the official evaluation
texts (``scripts/fetch_official.py``) and any other pinned file go through :func:`fetch_pinned`:
bytes stream to a ``.part`` file beside the destination, are hashed, and replace it with
``os.replace`` only when the hash is the pin's, so a killed or failed fetch never leaves a file that
looks valid. A file already in place with the pinned hash is kept and nothing is sent for it.
``$MEMPP_MIRROR`` replaces https://raw.githubusercontent.com (same <owner>/<repo>/<commit>/<path> layout).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests
from tqdm import tqdm

from loaders import longmemeval as lme
from memory_protocol import DatasetError
from memory_protocol.paths import cache_root, search_folders

GITHUB_RAW = "https://raw.githubusercontent.com"
MIRROR_ENV = "MEMPP_MIRROR"
DATA_ENV = "MEMPP_DATA_DIR"
FETCH_COMMAND = "python scripts/fetch_data.py"
MANIFEST_DIR = Path(__file__).resolve().parent / "manifests"
TIMEOUT_SECONDS = 60


class SourceUnreachable(Exception):
    """The source could not be reached (no connection, refused, timed out, cut short, HTTP error)."""


class ChecksumMismatch(DatasetError):
    def __init__(self, path: Path | str, expected: str, got: str) -> None:
        super().__init__(str(path), f"sha256 mismatch: expected {expected}, got {got}")


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def mirror_base() -> str:
    return os.environ.get(MIRROR_ENV) or GITHUB_RAW


def raw_url(repo: str, commit: str, path: str, base: str | None = None) -> str:
    """``<base>/<owner>/<repo>/<commit>/<path>``, GitHub raw's layout (or a mirror's)."""
    return f"{(base or mirror_base()).rstrip('/')}/{repo}/{commit}/{path}"


def part_path(dest: Path) -> Path:
    return dest.with_name(f"{dest.name}.part")


def download_verified(session: requests.Session, url: str, dest: Path, expected: str | None, *,
                      progress: bool = False) -> str:
    """Fetch ``url`` into ``dest`` when its sha256 is ``expected`` (any, when None); returns the sha256.

    SourceUnreachable, ChecksumMismatch, or DatasetError (cannot write); ``dest`` untouched in each case.
    """
    part = part_path(dest)
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256()
        try:
            with session.get(url, stream=True, timeout=TIMEOUT_SECONDS) as response:
                response.raise_for_status()
                total = int(response.headers.get("Content-Length", 0)) or None
                with part.open("wb") as out, tqdm(total=total, unit="B", unit_scale=True, desc=dest.name,
                                                  disable=not progress, leave=False) as bar:
                    for chunk in response.iter_content(1 << 16):
                        out.write(chunk)
                        digest.update(chunk)
                        bar.update(len(chunk))
        except requests.RequestException as exc:
            raise SourceUnreachable(f"{url}: {_reason(exc)}") from None
        if expected is not None and digest.hexdigest() != expected:
            raise ChecksumMismatch(dest, expected, digest.hexdigest())
        os.replace(part, dest)
        return digest.hexdigest()
    except OSError as exc:  # a full disk, a read-only or foreign folder: one line, not a traceback
        raise DatasetError(str(dest), f"cannot write the download: {exc.strerror or exc}") from None
    finally:
        with contextlib.suppress(OSError):
            part.unlink()


def _reason(exc: requests.RequestException) -> str:
    if isinstance(exc, requests.HTTPError) and exc.response is not None:
        return f"HTTP {exc.response.status_code}"
    return "cannot connect" if isinstance(exc, requests.ConnectionError) else type(exc).__name__


def fetch_pinned(session: requests.Session, url: str, dest: Path, sha256: str, *, force: bool = False,
                 progress: bool = False) -> tuple[bool, bool]:
    """Make ``dest`` the pinned file; returns (fetched, replaced: other bytes were there)."""
    present = dest.is_file()
    if present and not force and sha256_of(dest) == sha256:
        return False, False
    download_verified(session, url, dest, sha256, progress=progress)
    return True, present and not force


# ---------------------------------------------------------------- the benchmarks' pins


@dataclass(frozen=True)
class PinnedFile:
    remote: str  # path in the repository
    local: str  # path under the data folder
    sha256: str


@dataclass(frozen=True)
class GitHubFiles:
    repo: str  # owner/name
    commit: str
    files: tuple[PinnedFile, ...]
    manifest: Path | None = None  # the sha256sum-format file the pins were read from


@dataclass(frozen=True)
class HubFile:
    """One file of a Hugging Face hub dataset at one revision; no hash is known in advance."""

    repo_id: str
    filename: str
    revision: str
    local: str


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
        BenchmarkSource("longmemeval_s", HubFile("xiaowu0162/longmemeval-cleaned", lme.FILE_NAMES[0],
                                                 LONGMEMEVAL_REVISION, f"{lme.SUBDIR}/{lme.FILE_NAMES[0]}"),
                        "MIT (Wu et al., 2025)", (tuple(f"{lme.SUBDIR}/{n}" for n in lme.FILE_NAMES),)),
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
        from loaders.hub import fetch_hub_file

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
