"""One file of a Hugging Face hub dataset, fetched through huggingface_hub into the data directory.

huggingface_hub keeps the download in its own cache (``HF_HUB_CACHE``, else ``HF_HOME``/hub, else
~/.cache/huggingface/hub) and asks ``HF_ENDPOINT`` (default huggingface.co); both are read when the
fetch runs. The file is then placed in the data directory (a hard link to the cached copy where the
file system allows, else a copy) through a ``.part`` file and ``os.replace``. No sha256 is known in
advance, so the hash of what arrived is recorded beside it (``<file>.fetched.json``); a later fetch
that finds the file matching its record sends nothing, and one that finds it changed fetches again.
Offline it fails at once with one line: with ``HF_HUB_OFFLINE`` set only the hub cache is read, and
otherwise one TCP connection to the endpoint is tried before huggingface_hub's retries.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from loaders.download import SourceUnreachable, part_path, sha256_of
from loaders.sources import HubFile

DEFAULT_ENDPOINT = "https://huggingface.co"
PROBE_SECONDS = 5.0  # one TCP connection to the endpoint before the download (offline: fail at once)


@dataclass(frozen=True)
class HubFetch:
    """The outcome for one hub file: where from, its sha256 and size, and whether it was downloaded."""

    source: str
    sha256: str
    size: int
    fetched: bool
    repaired: bool


def record_path(dest: Path) -> Path:
    return dest.with_name(f"{dest.name}.fetched.json")


def hub_endpoint() -> str | None:
    return os.environ.get("HF_ENDPOINT") or None


def hub_cache_dir() -> str | None:
    """HF_HUB_CACHE, else HF_HOME/hub, as set now (None: huggingface_hub's own default)."""
    if os.environ.get("HF_HUB_CACHE"):
        return os.environ["HF_HUB_CACHE"]
    if os.environ.get("HF_HOME"):
        return str(Path(os.environ["HF_HOME"]) / "hub")
    return None


def fetch_hub_file(origin: HubFile, data_dir: Path, *, progress: bool = True) -> HubFetch:
    """Make ``data_dir/origin.local`` the file ``origin`` names, downloading only when needed."""
    dest = data_dir / origin.local
    source = f"{hub_endpoint() or DEFAULT_ENDPOINT}/datasets/{origin.repo_id} revision {origin.revision}"
    record = _read_record(dest)
    expected = _identity(origin)
    matches = record is not None and {k: record.get(k) for k in expected} == expected
    repaired = False
    if dest.is_file() and matches:
        assert record is not None
        if sha256_of(dest) == record["sha256"]:
            return HubFetch(source, record["sha256"], dest.stat().st_size, fetched=False, repaired=False)
        repaired = True  # the bytes changed since they were fetched: the hub cache may hold them too
    cached = _download(origin, force=repaired, progress=progress)
    digest = _place(cached, dest)
    _write_record(dest, {**expected, "sha256": digest, "bytes": dest.stat().st_size, "endpoint": source})
    return HubFetch(source, digest, dest.stat().st_size, fetched=True, repaired=repaired)


def _identity(origin: HubFile) -> dict[str, str]:
    return {"repo_id": origin.repo_id, "filename": origin.filename, "revision": origin.revision}


def hub_offline() -> bool:
    """HF_HUB_OFFLINE set to a true value, as huggingface_hub reads it."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in ("1", "ON", "YES", "TRUE")


def endpoint_unreachable(url: str, timeout: float = PROBE_SECONDS) -> str | None:
    """Why nothing answers at ``url``'s host and port (None when a TCP connection opens): one quick
    try, where huggingface_hub would retry for about 40 s before giving up."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname or "", port), timeout=timeout):
            return None
    except OSError as exc:
        return f"{parts.hostname}:{port} cannot be reached ({type(exc).__name__}: {exc})"


def _download(origin: HubFile, *, force: bool, progress: bool) -> Path:
    where = f"{origin.repo_id}/{origin.filename}"
    if hub_offline():  # only the hub cache may serve it: fail at once when it does not hold it
        try:
            from huggingface_hub import hf_hub_download

            return Path(hf_hub_download(origin.repo_id, origin.filename, repo_type="dataset",
                                        revision=origin.revision, cache_dir=hub_cache_dir(),
                                        local_files_only=True)).resolve()
        except Exception:  # noqa: BLE001 - not in the hub cache, in whatever form the library says it
            raise SourceUnreachable(f"{where}: HF_HUB_OFFLINE is set and the file is neither in the data "
                                    "directory nor in the hub cache (unset HF_HUB_OFFLINE to fetch it)") from None
    down = endpoint_unreachable(hub_endpoint() or DEFAULT_ENDPOINT)
    if down is not None:
        raise SourceUnreachable(f"{where}: {down}")
    from huggingface_hub import hf_hub_download

    try:
        path = hf_hub_download(
            origin.repo_id, origin.filename, repo_type="dataset", revision=origin.revision,
            cache_dir=hub_cache_dir(), endpoint=hub_endpoint(), force_download=force,
        )
    except Exception as exc:  # connection, HTTP, offline mode, metadata: the hub file cannot be had
        reason = str(exc).splitlines()[0] if str(exc) else ""
        raise SourceUnreachable(f"{origin.repo_id}/{origin.filename}: {type(exc).__name__}: {reason}") from None
    return Path(path).resolve()


def _place(cached: Path, dest: Path) -> str:
    """Put ``cached`` at ``dest`` (hard link, else copy) through a .part file; returns its sha256."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = part_path(dest)
    part.unlink(missing_ok=True)
    try:
        try:
            os.link(cached, part)
        except OSError:
            shutil.copyfile(cached, part)
        digest = sha256_of(part)
        os.replace(part, dest)
    finally:
        part.unlink(missing_ok=True)
    return digest


def _read_record(dest: Path) -> dict[str, Any] | None:
    try:
        record = json.loads(record_path(dest).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def _write_record(dest: Path, record: dict[str, Any]) -> None:
    path = record_path(dest)
    part = part_path(path)
    part.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    os.replace(part, path)
