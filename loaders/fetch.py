"""One way to fetch and pin a file: the benchmarks here, the official texts (``scripts/fetch_official.py``)
and the errata.

A GitHub raw file at a commit (``$MEMPP_MIRROR`` replaces https://raw.githubusercontent.com, same
<owner>/<repo>/<commit>/<path> layout) streams to a ``.part`` file beside its destination and replaces it
(``os.replace``) only when its sha256 is the pin's, so a killed or failed fetch never leaves a file that
looks valid; a file in place with the pinned hash is kept and nothing is sent for it. A Hugging Face hub
file (no sha256 known in advance) comes through huggingface_hub and its hash is recorded beside it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import requests
from tqdm import tqdm

from loaders.longmemeval import FILE_NAMES as LME_FILES, SUBDIR as LME_DIR
from memory_protocol import DatasetError, cache_root, file_sha256, find_folder

DATA_ENV = "MEMPP_DATA_DIR"
FETCH_COMMAND = "python scripts/fetch_data.py"
GITHUB_RAW = "https://raw.githubusercontent.com"
MIRROR_ENV = "MEMPP_MIRROR"
TIMEOUT_SECONDS = 60
HUB_ENDPOINT = "https://huggingface.co"
PROBE_SECONDS = 5.0
MANIFEST_DIR = Path(__file__).resolve().parent / "manifests"
# Our reference copy of OrgMemBench's pinned commit was transcribed from a public file index, not
# hash-checked upstream (its SOURCE.md): a byte that differs upstream shows as a mismatch here.
ORGMEM_COMMIT = "4d6fb64b8c0a7111fbdf00a5d3c5705872343606"
ORGMEM_MANIFEST = MANIFEST_DIR / "orgmem_medium.sha256"
LOCOMO_COMMIT = "3eb6f2c585f5e1699204e3c3bdf7adc5c28cb376"
LOCOMO_SHA256 = "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4"
# The revision of xiaowu0162/longmemeval-cleaned that several public projects pin (its 2025-09
# release), not confirmed here; no sha256 is pinned: the fetch records the hash it got.
LONGMEMEVAL_REVISION = "98d7416c24c778c2fee6e6f3006e7a073259d48f"
_MEDIUM = "orgmembench/datasets/helix/medium/"
# The files a data folder must hold to run each benchmark: of each group, one. A fetch writes them last,
# so an interrupted fetch never looks complete.
REQUIRED: dict[str, tuple[tuple[str, ...], ...]] = {
    "orgmem": tuple((_MEDIUM + n,) for n in ("source_of_truth/events.jsonl", "benchmark_v0.0.jsonl",
                                             "corpus_index.jsonl")),
    "locomo": (("locomo/locomo10.json",),),
    "longmemeval_s": (tuple(f"{LME_DIR}/{n}" for n in LME_FILES),),
}


class SourceUnreachable(Exception):
    """The source could not be reached (no connection, refused, timed out, cut short, HTTP error)."""


class ChecksumMismatch(DatasetError):
    def __init__(self, path: Path | str, expected: str, got: str) -> None:
        super().__init__(str(path), f"sha256 mismatch: expected {expected}, got {got}")


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
    """One file of a Hugging Face hub dataset at one revision."""

    repo_id: str
    filename: str
    revision: str
    local: str


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
    SourceUnreachable, ChecksumMismatch, or DatasetError (cannot write); ``dest`` untouched in each case."""
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
    if present and not force and file_sha256(dest) == sha256:
        return False, False
    download_verified(session, url, dest, sha256, progress=progress)
    return True, present and not force


def fetch_hub_file(origin: HubFile, data_dir: Path) -> tuple[str, str, bool, bool]:
    """Make ``data_dir/origin.local`` the hub file, placed (hard link, else copy) from huggingface_hub's own
    cache through a ``.part`` file, its hash recorded in ``<file>.fetched.json``; a file matching its record
    is kept and nothing is sent. Returns (source, sha256, fetched, repaired)."""
    dest, record_path = data_dir / origin.local, data_dir / f"{origin.local}.fetched.json"
    endpoint = os.environ.get("HF_ENDPOINT") or None
    source = f"{endpoint or HUB_ENDPOINT}/datasets/{origin.repo_id} revision {origin.revision}"
    identity = {"repo_id": origin.repo_id, "filename": origin.filename, "revision": origin.revision}
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        record = None
    repaired = False
    if isinstance(record, dict) and {k: record.get(k) for k in identity} == identity and dest.is_file():
        if file_sha256(dest) == record.get("sha256"):
            return source, record["sha256"], False, False
        repaired = True  # changed since it was fetched: the hub cache may hold the changed bytes too
    cached = _hub_download(origin, endpoint, force=repaired)
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = part_path(dest)
    part.unlink(missing_ok=True)
    try:
        try:
            os.link(cached, part)
        except OSError:
            shutil.copyfile(cached, part)
        digest = file_sha256(part)
        os.replace(part, dest)
    finally:
        part.unlink(missing_ok=True)
    note = part_path(record_path)
    note.write_text(json.dumps({**identity, "sha256": digest, "bytes": dest.stat().st_size, "endpoint": source},
                               indent=2) + "\n", encoding="utf-8")
    os.replace(note, record_path)
    return source, digest, True, repaired


def _hub_download(origin: HubFile, endpoint: str | None, *, force: bool) -> Path:
    """The file in huggingface_hub's cache (HF_HUB_CACHE, else HF_HOME/hub). Offline it fails at once: with
    HF_HUB_OFFLINE only that cache is read, else one TCP connection is tried before the library's ~40 s of retries."""
    from huggingface_hub import hf_hub_download

    where = f"{origin.repo_id}/{origin.filename}"
    cache = os.environ.get("HF_HUB_CACHE") or (str(Path(os.environ["HF_HOME"]) / "hub")
                                               if os.environ.get("HF_HOME") else None)
    args = dict(repo_type="dataset", revision=origin.revision, cache_dir=cache)
    if os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in ("1", "ON", "YES", "TRUE"):
        try:
            return Path(hf_hub_download(origin.repo_id, origin.filename, local_files_only=True, **args)).resolve()
        except Exception:  # noqa: BLE001 - not in the hub cache, in whatever form the library says it
            raise SourceUnreachable(f"{where}: HF_HUB_OFFLINE is set and the file is neither in the data "
                                    "directory nor in the hub cache (unset HF_HUB_OFFLINE to fetch it)") from None
    parts = urlsplit(endpoint or HUB_ENDPOINT)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        socket.create_connection((parts.hostname or "", port), timeout=PROBE_SECONDS).close()
    except OSError as exc:
        raise SourceUnreachable(f"{where}: {parts.hostname}:{port} cannot be reached "
                                f"({type(exc).__name__}: {exc})") from None
    try:
        path = hf_hub_download(origin.repo_id, origin.filename, endpoint=endpoint, force_download=force, **args)
    except Exception as exc:  # connection, HTTP, offline mode, metadata: the hub file cannot be had
        reason = str(exc).splitlines()[0] if str(exc) else ""
        raise SourceUnreachable(f"{where}: {type(exc).__name__}: {reason}") from None
    return Path(path).resolve()


@dataclass(frozen=True)
class BenchmarkSource:
    name: str
    origin: GitHubFiles | HubFile
    licence: str


def benchmark_sources() -> dict[str, BenchmarkSource]:
    """Every fetchable benchmark by its dataset name (the names of ``loaders.DATASETS``); the OrgMemBench
    pins are read from its manifest (``<sha256>  <path>`` lines, sha256sum's format)."""
    rows = (line.partition("  ") for line in ORGMEM_MANIFEST.read_text(encoding="utf-8").splitlines() if line.strip())
    orgmem = tuple(PinnedFile(name, f"orgmembench/{name}", digest) for digest, _, name in rows)
    return {s.name: s for s in (
        BenchmarkSource("orgmem", GitHubFiles("PandelisZ/OrgMemBench", ORGMEM_COMMIT, orgmem, ORGMEM_MANIFEST),
                        "CC-BY-4.0 (OrgMemBench by Jack Gardner)"),
        BenchmarkSource("locomo", GitHubFiles("snap-research/locomo", LOCOMO_COMMIT, (
            PinnedFile("data/locomo10.json", "locomo/locomo10.json", LOCOMO_SHA256),)),
            "CC BY-NC 4.0 (Maharana et al., 2024)"),
        # the hub's file; the loader also takes our 499-question rebuild
        BenchmarkSource("longmemeval_s", HubFile("xiaowu0162/longmemeval-cleaned", LME_FILES[0],
                                                 LONGMEMEVAL_REVISION, f"{LME_DIR}/{LME_FILES[0]}"),
                        "MIT (Wu et al., 2025)"),
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
        hub_source, digest, fetched, repaired = fetch_hub_file(origin, data_dir)
        return FetchReport(name, data_dir, hub_source, 1, int(fetched), int(repaired),
                           (data_dir / origin.local).stat().st_size, digest, origin.local, source.licence)
    required = {n for group in REQUIRED[name] for n in group}
    many = len(origin.files) > 1
    fetched = repaired = total = 0
    with requests.Session() as session, tqdm(total=len(origin.files), unit="file", desc=name,
                                             disable=not (progress and many), leave=False) as bar:
        for pin in sorted(origin.files, key=lambda f: f.local in required):
            dest = data_dir / pin.local
            got, replaced = fetch_pinned(session, raw_url(origin.repo, origin.commit, pin.remote), dest,
                                         pin.sha256, progress=progress and not many)
            fetched, repaired, total = fetched + got, repaired + replaced, total + dest.stat().st_size
            bar.update()
    if origin.manifest is not None:
        digest, digest_of = file_sha256(origin.manifest), f"manifest {origin.manifest.name}"
    else:
        digest, digest_of = origin.files[0].sha256, origin.files[0].local
    return FetchReport(name, data_dir, raw_url(origin.repo, origin.commit, ""), len(origin.files), fetched,
                       repaired, total, digest, digest_of, source.licence)


def fetch_missing(name: str, target: Path, *, progress: bool = True) -> Path:
    """Fetch ``name`` into ``target`` for a run whose data folders lack it (the report on stderr); offline, one
    DatasetError naming the missing files and how to bring them."""
    try:
        report = fetch_benchmark(name, target, progress=progress)
    except SourceUnreachable as exc:
        origin = benchmark_sources()[name].origin
        if isinstance(origin, GitHubFiles):
            missing = [f.local for f in origin.files if not (target / f.local).is_file()]
        else:
            missing = [" or ".join(g) for g in REQUIRED[name] if not any((target / n).is_file() for n in g)]
        shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        raise DatasetError(name, f"{len(missing)} data file(s) missing ({shown}) and the fetch failed ({exc}); "
                                 f"run `{FETCH_COMMAND} {name}` when online, or put the files under {target}") from None
    print(report.line(), file=sys.stderr)
    return target.resolve()


# Corrected golds (loaders.published.load_errata) by the name ``dataset.errata`` takes: locomo-audit's
# errors.json (github.com/dial481/locomo-audit, CC BY-NC 4.0), and the benchmark (loader) each corrects.
ERRATA: dict[str, GitHubFiles] = {
    "locomo-audit": GitHubFiles("dial481/locomo-audit", "9493fb4b", (PinnedFile(
        "errors.json", "published/audit/errors.json", "f298ef46263fada20688a1d672be37d4f488c6da3b19343eea55ae5c1b5fe55e"),)),
}
ERRATA_FOR = {"locomo-audit": "locomo"}


def errata_source(name: str) -> tuple[GitHubFiles, PinnedFile]:
    if name not in ERRATA:
        raise DatasetError("dataset.errata", f"unknown errata {name!r}; known: {sorted(ERRATA)}")
    return ERRATA[name], ERRATA[name].files[0]


def fetch_errata(name: str, root: Path | None, data_dir: str | None = None) -> Path:
    """The errata file: under ``root`` (the run's data folder), else, unless that folder was named
    (``data_dir``: ``dataset.data_dir``; or ``$MEMPP_DATA_DIR``), in another data folder; else fetched
    (pinned) into the named folder or ``<cache root>/data``. One-line DatasetError when offline."""
    source, pin = errata_source(name)
    named = bool(data_dir) or bool(os.environ.get(DATA_ENV))
    if root is not None and (root / pin.local).is_file():
        return root / pin.local
    found = None if named else find_folder("data", None, DATA_ENV, holds=((pin.local,),))[0]
    if found is not None:
        return found / pin.local
    target = (root if named and root is not None else cache_root() / "data") / pin.local
    try:
        with requests.Session() as session:
            fetch_pinned(session, raw_url(source.repo, source.commit, pin.remote), target, pin.sha256)
    except SourceUnreachable as exc:
        raise DatasetError(str(target), f"errata {name!r} missing and the fetch failed ({exc}); put {pin.remote} "
                                        f"of github.com/{source.repo}@{source.commit} there") from None
    return target
