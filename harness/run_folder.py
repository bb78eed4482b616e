"""A run folder written as one unit, and the check every reader makes before trusting one.

The files go to a hidden staging folder, sealed with ``manifest.json`` (each file's size and sha256),
then swapped with the run folder in one ``renameat2(RENAME_EXCHANGE)``; a kill or full disk before the
swap leaves the previous folder whole. Without that call (not Linux, or refused) the old folder is
renamed aside and the new one in. :func:`check_run_folder` refuses a folder whose files do not match
its manifest (older folders: whose metrics count other questions than its records hold).
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harness.safe_write import DiskFullError, as_disk_full, atomic_write

__all__ = ["MANIFEST", "SEALED", "HalfWrittenRun", "check_run_folder", "folder_lock", "is_staging", "seal",
           "staged_folder", "swap_in"]

MANIFEST = "manifest.json"
SEALED = ("config.json", "records.jsonl", "summary.csv", "summary.md", "metrics.json")
STAGING_SUFFIX = ".staging"
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_FIX = "re-run its configuration (finished steps are cached) or delete the folder"


class HalfWrittenRun(ValueError):
    """A run folder whose files come from different writes."""


def is_staging(path: Path) -> bool:
    """A folder a writer is filling (or a killed writer left)."""
    return path.name.startswith(".")


def _sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _refuse(folder: Path, what: str) -> HalfWrittenRun:
    return HalfWrittenRun(f"{folder} is a half-written run folder ({what}): {_FIX}")


def check_run_folder(folder: str | Path, hashed: Iterable[str] | None = None) -> None:
    """Raise :class:`HalfWrittenRun` unless every file of ``folder`` is the one its manifest lists:
    sizes for every file, sha256 for those in ``hashed`` (all when None)."""
    folder = Path(folder)
    manifest_path = folder / MANIFEST
    if not manifest_path.is_file():
        _check_legacy(folder)
        return
    try:
        files = json.loads(manifest_path.read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise _refuse(folder, f"its {MANIFEST} is unreadable: {type(exc).__name__}") from None
    unlisted = [name for name in SEALED if (folder / name).exists() and name not in files]
    if unlisted:
        raise _refuse(folder, f"{unlisted[0]} is not in its {MANIFEST}")
    wanted = set(files) if hashed is None else set(hashed)
    for name, entry in sorted(files.items()):
        path = folder / name
        if not path.is_file():
            raise _refuse(folder, f"{name} is missing")
        if path.stat().st_size != entry.get("bytes"):
            raise _refuse(folder, f"{name} has {path.stat().st_size} bytes, its {MANIFEST} says {entry.get('bytes')}")
        if name in wanted and _sha256(path) != entry.get("sha256"):
            raise _refuse(folder, f"{name} is not the file its {MANIFEST} lists (sha256 differs)")


def _check_legacy(folder: Path) -> None:
    """A folder from before manifests: its metrics must count the questions its records hold."""
    metrics_path, records_path = folder / "metrics.json", folder / "records.jsonl"
    if not (metrics_path.is_file() and records_path.is_file()):
        return
    try:
        questions = (json.loads(metrics_path.read_text(encoding="utf-8")).get("stats") or {}).get("questions")
    except (OSError, ValueError, AttributeError):
        return  # unreadable JSON: the reader's own error says so
    if not isinstance(questions, int) or isinstance(questions, bool):
        return
    with records_path.open("rb") as handle:
        lines = sum(1 for line in handle if line.strip())
    if lines != questions:
        raise _refuse(folder, f"metrics.json counts {questions} questions, records.jsonl holds {lines}")


def seal(folder: str | Path) -> Path:
    """Write ``folder``'s manifest: the size and sha256 of each of its run files present."""
    folder = Path(folder)
    files = {name: {"bytes": (folder / name).stat().st_size, "sha256": _sha256(folder / name)}
             for name in SEALED if (folder / name).is_file()}
    return atomic_write(folder / MANIFEST, json.dumps({"format": 1, "files": files}, indent=2, sort_keys=True) + "\n")


@contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """One writer at a time for the run folders of ``folder``'s parent (an flock on the parent)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder.parent, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def _clear_abandoned(folder: Path) -> None:
    """Staging folders of ``folder`` left by a writer that was killed (its pid is gone)."""
    for stale in folder.parent.glob(f".{folder.name}.*{STAGING_SUFFIX}"):
        pid = stale.name[len(folder.name) + 2:].split(".", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(stale, ignore_errors=True)


@contextmanager
def staged_folder(folder: Path) -> Iterator[Path]:
    """A new empty hidden sibling of ``folder`` to fill, removed at the end (after a swap it holds
    the previous folder); a full disk is reported against ``folder``."""
    _clear_abandoned(folder)
    stage = folder.with_name(f".{folder.name}.{os.getpid()}.{uuid.uuid4().hex[:12]}{STAGING_SUFFIX}")
    try:
        stage.mkdir(parents=True)
        yield stage
    except OSError as exc:
        full = as_disk_full(exc)
        if full is None:
            raise
        written = Path(full.path)  # a file of the staging folder is named as the run folder's own
        if stage in written.parents:
            written = folder / written.name
        elif written == stage or not written.is_absolute():  # the folder itself, or a copy naming no file
            written = folder
        raise DiskFullError(written, OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))) from exc
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def carry_over(old: Path, stage: Path, skip: Iterable[str]) -> None:
    """Copy what ``old`` holds besides the files in ``skip`` (history, notes) into ``stage``."""
    if not old.is_dir():
        return
    skipped = set(skip)
    for item in old.iterdir():
        if item.name in skipped:
            continue
        if item.is_dir():
            shutil.copytree(item, stage / item.name, symlinks=True)
        else:
            shutil.copy2(item, stage / item.name, follow_symlinks=False)


def _exchange(first: Path, second: Path) -> bool:
    """Swap two paths in one system call; False when the system cannot (then nothing changed)."""
    function: Any = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if function is None:
        return False
    done = function(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE)
    if done == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(second))


def swap_in(stage: Path, folder: Path) -> None:
    """Make the filled ``stage`` the run ``folder``; the previous folder, if any, ends up at ``stage``."""
    for path in stage.iterdir():  # every file durable before it becomes visible
        if path.is_file():
            _fsync(path)
    if not folder.exists():
        os.rename(stage, folder)
    elif not _exchange(stage, folder):
        aside = stage.with_name(stage.name + ".old")
        os.rename(folder, aside)
        try:
            os.rename(stage, folder)
        except BaseException:
            os.rename(aside, folder)
            raise
        os.rename(aside, stage)
    _fsync(folder.parent)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
