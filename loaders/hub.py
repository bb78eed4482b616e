"""One file of a Hugging Face hub dataset, fetched through huggingface_hub into the data folder.

huggingface_hub keeps the download in its own cache (HF_HUB_CACHE, else HF_HOME/hub) and asks
HF_ENDPOINT; the file is then placed (hard link, else copy) through a ``.part`` file. No sha256 is
pinned, so the hash of what arrived is recorded beside it (``<file>.fetched.json``): a later fetch that
finds the file matching its record sends nothing. Offline it fails at once: with HF_HUB_OFFLINE only
the hub cache is read, otherwise one TCP connection is tried before huggingface_hub's ~40 s of retries.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from loaders.pins import SourceUnreachable, part_path, sha256_of

DEFAULT_ENDPOINT = "https://huggingface.co"
PROBE_SECONDS = 5.0


@dataclass(frozen=True)
class HubFile:
    """One file of a Hugging Face hub dataset at one revision; no hash is known in advance."""

    repo_id: str
    filename: str
    revision: str
    local: str


@dataclass(frozen=True)
class HubFetch:
    source: str
    sha256: str
    size: int
    fetched: bool
    repaired: bool


def record_path(dest: Path) -> Path:
    return dest.with_name(f"{dest.name}.fetched.json")


def _hub_cache_dir() -> str | None:
    if os.environ.get("HF_HUB_CACHE"):
        return os.environ["HF_HUB_CACHE"]
    return str(Path(os.environ["HF_HOME"]) / "hub") if os.environ.get("HF_HOME") else None


def fetch_hub_file(origin: HubFile, data_dir: Path, *, progress: bool = True) -> HubFetch:
    """Make ``data_dir/origin.local`` the file ``origin`` names, downloading only when needed."""
    dest = data_dir / origin.local
    endpoint = os.environ.get("HF_ENDPOINT") or None
    source = f"{endpoint or DEFAULT_ENDPOINT}/datasets/{origin.repo_id} revision {origin.revision}"
    identity = {"repo_id": origin.repo_id, "filename": origin.filename, "revision": origin.revision}
    try:
        record = json.loads(record_path(dest).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        record = None
    repaired = False
    if isinstance(record, dict) and {k: record.get(k) for k in identity} == identity and dest.is_file():
        if sha256_of(dest) == record.get("sha256"):
            return HubFetch(source, record["sha256"], dest.stat().st_size, fetched=False, repaired=False)
        repaired = True  # changed since it was fetched: the hub cache may hold the changed bytes too
    cached = _download(origin, endpoint, force=repaired)
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
    note = part_path(record_path(dest))
    note.write_text(json.dumps({**identity, "sha256": digest, "bytes": dest.stat().st_size, "endpoint": source},
                               indent=2) + "\n", encoding="utf-8")
    os.replace(note, record_path(dest))
    return HubFetch(source, digest, dest.stat().st_size, fetched=True, repaired=repaired)


def hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in ("1", "ON", "YES", "TRUE")


def endpoint_unreachable(url: str, timeout: float = PROBE_SECONDS) -> str | None:
    """Why no TCP connection opens to ``url``'s host and port (None when one does)."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname or "", port), timeout=timeout):
            return None
    except OSError as exc:
        return f"{parts.hostname}:{port} cannot be reached ({type(exc).__name__}: {exc})"


def _download(origin: HubFile, endpoint: str | None, *, force: bool) -> Path:
    from huggingface_hub import hf_hub_download

    where = f"{origin.repo_id}/{origin.filename}"
    args = dict(repo_type="dataset", revision=origin.revision, cache_dir=_hub_cache_dir())
    if hub_offline():  # only the hub cache may serve it
        try:
            return Path(hf_hub_download(origin.repo_id, origin.filename, local_files_only=True, **args)).resolve()
        except Exception:  # noqa: BLE001 - not in the hub cache, in whatever form the library says it
            raise SourceUnreachable(f"{where}: HF_HUB_OFFLINE is set and the file is neither in the data "
                                    "directory nor in the hub cache (unset HF_HUB_OFFLINE to fetch it)") from None
    down = endpoint_unreachable(endpoint or DEFAULT_ENDPOINT)
    if down is not None:
        raise SourceUnreachable(f"{where}: {down}")
    try:
        path = hf_hub_download(origin.repo_id, origin.filename, endpoint=endpoint, force_download=force, **args)
    except Exception as exc:  # connection, HTTP, offline mode, metadata: the hub file cannot be had
        reason = str(exc).splitlines()[0] if str(exc) else ""
        raise SourceUnreachable(f"{where}: {type(exc).__name__}: {reason}") from None
    return Path(path).resolve()
