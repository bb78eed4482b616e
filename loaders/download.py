"""Download one file over HTTP, verify its sha256, and only then put it in place.

The bytes go to a ``.part`` file in the destination's own folder while they are hashed; a file
whose hash differs is removed and reported in one line (file, expected, got), and a good one is
moved over the destination with ``os.replace``. So the destination is either absent, the previous
file, or a verified new one: a killed or failed download never leaves a file that looks valid.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path

import requests
from tqdm import tqdm

from memory_protocol import DatasetError

CHUNK = 1 << 16
TIMEOUT_SECONDS = 60


class SourceUnreachable(Exception):
    """The source could not be reached (no connection, refused, timed out, cut short, HTTP error)."""


class ChecksumMismatch(DatasetError):
    """A file's bytes do not have the pinned sha256."""

    def __init__(self, path: Path | str, expected: str, got: str) -> None:
        super().__init__(str(path), f"sha256 mismatch: expected {expected}, got {got}")


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def part_path(dest: Path) -> Path:
    """The temporary file a download of ``dest`` is written to (same folder, so os.replace is atomic)."""
    return dest.with_name(f"{dest.name}.part")


def download_verified(
    session: requests.Session, url: str, dest: Path, expected: str | None, *, progress: bool = True
) -> str:
    """Fetch ``url`` into ``dest`` when its sha256 is ``expected`` (any, when None); returns the sha256.

    Raises SourceUnreachable when the transfer fails, ChecksumMismatch when the bytes are wrong and
    DatasetError when they cannot be written (a full disk); in each case ``dest`` is untouched and
    no ``.part`` file is left.
    """
    part = part_path(dest)
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        digest = _stream(session, url, part, dest.name, progress)
        if expected is not None and digest != expected:
            raise ChecksumMismatch(dest, expected, digest)
        os.replace(part, dest)
        return digest
    except OSError as exc:  # a full disk, a read-only or foreign folder: one line, not a traceback
        raise DatasetError(str(dest), f"cannot write the download: {exc.strerror or exc}") from None
    finally:
        with contextlib.suppress(OSError):  # absent, or its folder never came to be
            part.unlink()


def _stream(session: requests.Session, url: str, part: Path, label: str, progress: bool) -> str:
    digest = hashlib.sha256()
    try:
        with session.get(url, stream=True, timeout=TIMEOUT_SECONDS) as response:
            response.raise_for_status()
            total = int(response.headers.get("Content-Length", 0)) or None
            with part.open("wb") as out, tqdm(
                total=total, unit="B", unit_scale=True, desc=label, disable=not progress, leave=False
            ) as bar:
                for chunk in response.iter_content(CHUNK):
                    out.write(chunk)
                    digest.update(chunk)
                    bar.update(len(chunk))
    except requests.RequestException as exc:
        raise SourceUnreachable(f"{url}: {_reason(exc)}") from None
    return digest.hexdigest()


def _reason(exc: requests.RequestException) -> str:
    if isinstance(exc, requests.HTTPError) and exc.response is not None:
        return f"HTTP {exc.response.status_code}"
    if isinstance(exc, requests.ConnectionError):
        return "cannot connect"
    return type(exc).__name__
