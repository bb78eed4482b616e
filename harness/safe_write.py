"""Writes that survive a kill or a full disk, and the check a reader makes before trusting a run folder.

Files replace their target whole (a fsynced temporary renamed over it) and lines are appended whole (a
torn last line set aside in ``<name>.torn``). A run folder is filled as a hidden sibling, sealed with
``manifest.json`` (sizes, sha256) and swapped in by one ``renameat2(RENAME_EXCHANGE)``. A full disk is a
one-line :class:`DiskFullError`.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import json
import mmap
import os
import shutil
import sys
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from memory_protocol import file_sha256

MANIFEST = "manifest.json"
SEALED = ("config.json", "records.jsonl", "summary.csv", "summary.md", "metrics.json")
HISTORY = "history.jsonl"
_DISK_FULL = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}


class DiskFullError(OSError):
    """The disk (or the user's quota) is full: nothing half-written was left at ``path``."""

    def __init__(self, path: str | Path, cause: OSError) -> None:
        self.path = str(path)
        self.message = (f"no space left on the device writing {self.path} ({cause.strerror or cause}); nothing "
                        f"half-written was left there: free some space and re-run (finished steps are cached)")
        super().__init__(cause.errno, self.message)

    def __str__(self) -> str:
        return self.message


class HalfWrittenRun(ValueError):
    """A run folder whose files come from different writes."""


def as_disk_full(exc: OSError, path: str | Path | None = None) -> DiskFullError | None:
    """``exc`` as a :class:`DiskFullError` when it says the disk is full (None otherwise)."""
    if isinstance(exc, DiskFullError):
        return exc
    if exc.errno not in _DISK_FULL:
        return None
    return DiskFullError(path if path is not None else exc.filename or "a file", exc)


@contextmanager
def _naming_full_disk(path: Path) -> Iterator[None]:
    try:
        yield
    except OSError as exc:
        full = as_disk_full(exc, path)
        if full is None or full is exc:
            raise
        raise full from exc


def _fsync(path: Path, best_effort: bool = False) -> None:
    """fsync a file, or (``best_effort``) a folder after a rename: some file systems refuse that."""
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        if not best_effort:
            raise


def _write_all(fd: int, data: bytes) -> None:
    """All of ``data`` to ``fd``; a write that makes no progress is a full disk."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[written:]


def _write_data(data: str | bytes) -> Callable[[Path], None]:
    raw = data.encode("utf-8") if isinstance(data, str) else data

    def write(tmp: Path) -> None:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            _write_all(fd, raw)
        finally:
            os.close(fd)

    return write


def _fill_temporary(path: Path, write: Callable[[Path], None]) -> Path:
    """A sibling of ``path`` no other writer uses (pid, random part, ``.tmp``) filled by ``write`` and
    fsynced; removed again when that fails."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        write(tmp)
        _fsync(tmp)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def atomic_write_with(path: str | Path, write: Callable[[Path], None]) -> Path:
    """``write(tmp)`` fills a temporary sibling of ``path`` that then replaces it (for writers that
    want a file name, as ``DataFrame.to_csv``: give them the format, the name ends in ``.tmp``)."""
    path = Path(path)
    with _naming_full_disk(path):
        tmp = _fill_temporary(path, write)
        try:
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        _fsync(path.parent, best_effort=True)
    return path


def atomic_write(path: str | Path, data: str | bytes) -> Path:
    """``path`` holds ``data`` (text is UTF-8), or -- after a kill or a full disk -- what it held before."""
    return atomic_write_with(path, _write_data(data))


class StagedWrites:
    """Files written together: each to a temporary name, all renamed when the ``with`` block ends
    without error; an error replaces none, so the folder keeps the previous set whole."""

    def __init__(self) -> None:
        self._staged: list[tuple[Path, Path]] = []

    @property
    def paths(self) -> list[Path]:
        return [path for _, path in self._staged]

    def write(self, path: str | Path, data: str | bytes) -> Path:
        path = Path(path)
        with _naming_full_disk(path):
            self._staged.append((_fill_temporary(path, _write_data(data)), path))
        return path

    def __enter__(self) -> StagedWrites:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *rest: object) -> None:
        try:
            for tmp, path in self._staged if exc_type is None else ():
                with _naming_full_disk(path):
                    os.replace(tmp, path)
            for folder in {path.parent for _, path in self._staged} if exc_type is None else ():
                _fsync(folder, best_effort=True)
        finally:
            for tmp, _ in self._staged:
                tmp.unlink(missing_ok=True)
            self._staged.clear()


def _set_aside_torn_tail(fd: int, path: Path) -> int:
    """Move a last line without its newline (``fd``: ``path``, locked) to ``<path>.torn`` and cut it
    off; returns the file's size afterwards."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return size
    with mmap.mmap(fd, size, prot=mmap.PROT_READ) as view:
        end = view.rfind(b"\n") + 1
        fragment = view[end:]
    torn = path.with_name(path.name + ".torn")
    torn_fd = os.open(torn, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:  # kept, one fragment a line, for whoever wants to look
        _write_all(torn_fd, fragment + b"\n")
        os.fsync(torn_fd)
    finally:
        os.close(torn_fd)
    os.ftruncate(fd, end)
    os.fsync(fd)
    print(f"warning: {path}: its last line was cut off by an interrupted write ({len(fragment)} bytes); "
          f"set aside in {torn.name}, the whole lines are kept", file=sys.stderr)
    return end


@contextmanager
def _locked(path: Path, flags: int = os.O_RDWR | os.O_APPEND | os.O_CREAT) -> Iterator[int]:
    """``path`` opened (by default for appending, created if missing) under an exclusive lock."""
    fd = os.open(path, flags, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield fd
    finally:
        os.close(fd)  # releases the lock


def folder_lock(folder: Path) -> AbstractContextManager[int]:
    """One writer at a time for the run folders of ``folder``'s parent (an flock on the parent)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    return _locked(folder.parent, os.O_RDONLY)


def append_line(path: str | Path, line: str) -> None:
    """Append ``line`` and a newline in one fsynced write; a failed or short write is cut back off."""
    if "\n" in line:
        raise ValueError("append_line takes one line without a newline")
    path = Path(path)
    data = (line + "\n").encode("utf-8")
    with _naming_full_disk(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        with _locked(path) as fd:
            start = _set_aside_torn_tail(fd, path)
            try:
                if os.write(fd, data) != len(data):  # a short write: the disk filled up mid-line
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
                os.fsync(fd)
            except BaseException:
                os.ftruncate(fd, start)
                raise


def read_lines(path: str | Path) -> list[str]:
    """The whole lines of ``path`` (none when it is missing); a torn last line is set aside first."""
    path = Path(path)
    if not path.is_file():
        return []
    with _naming_full_disk(path), _locked(path) as fd:
        size = _set_aside_torn_tail(fd, path)
        data = os.pread(fd, size, 0) if size else b""
    return data.decode("utf-8", errors="replace").splitlines()


def write_run_folder(folder: Path, files: dict[str, str], metrics: dict[str, Any], history: dict[str, Any]) -> None:
    """Replace ``folder`` by ``files`` and ``metrics.json`` as one sealed unit, other files carried over,
    and append ``history`` with ``first_run``; a folder whose metrics hold the same ``summary`` keeps its
    first run's ``stats`` and ``provenance``."""
    with folder_lock(folder):
        try:
            previous = json.loads((folder / "metrics.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            previous = None
        first = not isinstance(previous, dict) or previous.get("summary") != metrics["summary"]
        if not first:
            metrics = {**metrics, **{key: previous[key] for key in ("stats", "provenance") if key in previous}}
        read_lines(folder / HISTORY)  # a torn last line is set aside where it is, before the copy
        with _staged_folder(folder) as stage:
            _carry_over(folder, stage)
            for name, text in {**files, "metrics.json": json.dumps(metrics, indent=2, sort_keys=True)}.items():
                atomic_write(stage / name, text)
            seal(stage)
            append_line(stage / HISTORY, json.dumps({**history, "first_run": first}, sort_keys=True, default=str))
            _swap_in(stage, folder)


def seal(folder: str | Path) -> Path:
    """Write ``folder``'s manifest: the size and sha256 of each of its run files present."""
    folder = Path(folder)
    files = {name: {"bytes": (folder / name).stat().st_size, "sha256": file_sha256(folder / name)}
             for name in SEALED if (folder / name).is_file()}
    return atomic_write(folder / MANIFEST, json.dumps({"format": 1, "files": files}, indent=2, sort_keys=True) + "\n")


@contextmanager
def _staged_folder(folder: Path) -> Iterator[Path]:
    """A new empty hidden sibling of ``folder`` to fill, removed at the end (after a swap it holds the
    previous folder); those a killed writer left go first; a full disk is reported against ``folder``."""
    for stale in folder.parent.glob(f".{folder.name}.*.staging"):
        pid = stale.name[len(folder.name) + 2:].split(".", 1)[0]
        try:
            if pid.isdigit():
                os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(stale, ignore_errors=True)
        except PermissionError:
            pass  # alive, another user's
    stage = folder.with_name(f".{folder.name}.{os.getpid()}.{uuid.uuid4().hex[:12]}.staging")
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


def _carry_over(old: Path, stage: Path) -> None:
    """Copy what ``old`` holds besides its sealed files (history, notes) into ``stage``."""
    for item in old.iterdir() if old.is_dir() else ():
        if item.name in (*SEALED, MANIFEST):
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
    at_cwd, rename_exchange = -100, 2
    if function(at_cwd, os.fsencode(first), at_cwd, os.fsencode(second), rename_exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(second))


def _swap_in(stage: Path, folder: Path) -> None:
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


def is_staging(path: Path) -> bool:
    """A folder a writer is filling (or a killed writer left)."""
    return path.name.startswith(".")


def _refuse(folder: Path, what: str) -> HalfWrittenRun:
    return HalfWrittenRun(f"{folder} is a half-written run folder ({what}): re-run its configuration "
                          "(finished steps are cached) or delete the folder")


def check_run_folder(folder: str | Path, hashed: Iterable[str] | None = None) -> None:
    """Raise :class:`HalfWrittenRun` unless every file of ``folder`` is the one its manifest lists:
    sizes for every file, sha256 for those in ``hashed`` (all when None)."""
    folder = Path(folder)
    if not (folder / MANIFEST).is_file():
        _check_unsealed(folder)
        return
    try:
        files = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))["files"]
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
        if name in wanted and file_sha256(path) != entry.get("sha256"):
            raise _refuse(folder, f"{name} is not the file its {MANIFEST} lists (sha256 differs)")


def _check_unsealed(folder: Path) -> None:
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
