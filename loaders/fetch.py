"""Fetch a benchmark's pinned files into a data directory, verifying each one.

    from loaders.fetch import fetch_benchmark
    report = fetch_benchmark("locomo", Path("~/.cache/mempp/data").expanduser())
    print(report.line())

A file already in place is kept when its hash is the pinned one and fetched again otherwise, so a
second fetch of a complete directory sends no request, and a corrupted file is repaired.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import requests
from tqdm import tqdm

from loaders.download import download_verified, sha256_of
from loaders.hub import fetch_hub_file
from memory_protocol import DatasetError
from loaders.sources import GITHUB_RAW, MIRROR_ENV, BenchmarkSource, GitHubFiles, PinnedFile, benchmark_sources


@dataclass(frozen=True)
class FetchReport:
    """What one fetch did: files fetched, kept (already verified in place) and their total size.

    ``digest`` is the file's sha256 for a single-file benchmark and the manifest's sha256 for a
    benchmark of many files; ``source`` is where the bytes came from (URL base or hub revision).
    """

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
        kept = self.files - self.fetched
        repaired = f" ({self.repaired} corrupted, replaced)" if self.repaired else ""
        return (
            f"{self.name}: {self.files} file(s), {self.total_bytes:,} bytes in {self.data_dir}: "
            f"{self.fetched} fetched{repaired}, {kept} already there, from {self.source}; "
            f"{self.digest_of} sha256 {self.digest}; licence {self.licence}"
        )


def mirror_base() -> str:
    """Base URL for GitHub raw files: $MEMPP_DATA_MIRROR (same <owner>/<repo>/<commit>/<path> layout) or GitHub."""
    return os.environ.get(MIRROR_ENV) or GITHUB_RAW


def get_source(name: str) -> BenchmarkSource:
    sources = benchmark_sources()
    if name not in sources:
        raise DatasetError(name, f"no remote source for {name!r}; fetchable: {sorted(sources)}")
    return sources[name]


def fetch_benchmark(name: str, data_dir: Path, *, progress: bool = True) -> FetchReport:
    """Bring ``name``'s pinned files into ``data_dir`` (created if needed) and verify them.

    Raises loaders.download.SourceUnreachable when the source cannot be reached and
    loaders.download.ChecksumMismatch when fetched bytes are not the pinned ones.
    """
    source = get_source(name)
    data_dir.mkdir(parents=True, exist_ok=True)
    if isinstance(source.origin, GitHubFiles):
        return _fetch_github(source, source.origin, data_dir, progress)
    hub = fetch_hub_file(source.origin, data_dir, progress=progress)
    return FetchReport(
        name, data_dir, hub.source, 1, int(hub.fetched), int(hub.repaired), hub.size, hub.sha256,
        source.origin.local, source.licence,
    )


def _fetch_github(source: BenchmarkSource, origin: GitHubFiles, data_dir: Path, progress: bool) -> FetchReport:
    base = mirror_base()
    fetched = repaired = total = 0
    many = len(origin.files) > 1
    with requests.Session() as session, tqdm(
        total=len(origin.files), unit="file", desc=source.name, disable=not (progress and many), leave=False
    ) as bar:
        for pinned in _entry_files_last(origin.files, source):
            dest = data_dir / pinned.local
            if dest.is_file():
                if sha256_of(dest) == pinned.sha256:
                    total += dest.stat().st_size
                    bar.update()
                    continue
                repaired += 1
            download_verified(session, origin.url(base, pinned.remote), dest, pinned.sha256,
                              progress=progress and not many)
            fetched += 1
            total += dest.stat().st_size
            bar.update()
    if origin.manifest is not None:
        digest, digest_of = sha256_of(origin.manifest), f"manifest {origin.manifest.name}"
    else:
        digest, digest_of = origin.files[0].sha256, origin.files[0].local
    return FetchReport(source.name, data_dir, origin.url(base, ""), len(origin.files), fetched, repaired,
                       total, digest, digest_of, source.licence)


def _entry_files_last(files: tuple[PinnedFile, ...], source: BenchmarkSource) -> list[PinnedFile]:
    """The files a run checks for come last, so a fetch cut short leaves the benchmark looking absent."""
    entries = {name for entry in source.required for name in ((entry,) if isinstance(entry, str) else entry)}
    return sorted(files, key=lambda f: f.local in entries)
