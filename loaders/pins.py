"""One way to fetch and pin a file: GitHub raw files at a commit, each verified against its sha256.

Benchmarks (``loaders.fetch``), the official evaluation texts (``scripts/fetch_official.py``) and the
errata use these pins and :func:`fetch_pinned`: bytes stream to a ``.part`` file beside the
destination, are hashed, and replace it with ``os.replace`` only when the hash is the pin's, so a
killed or failed fetch never leaves a file that looks valid; a file in place with the pinned hash is
kept and nothing is sent for it. ``$MEMPP_MIRROR`` replaces https://raw.githubusercontent.com (same
<owner>/<repo>/<commit>/<path> layout).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import requests
from tqdm import tqdm

from memory_protocol import DatasetError

GITHUB_RAW = "https://raw.githubusercontent.com"
MIRROR_ENV = "MEMPP_MIRROR"
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
