"""Files the harness writes for people to read: whole or not at all, and one line on a full disk.

``atomic_write`` renames a fsynced temporary sibling over the target; ``StagedWrites`` renames a set
of files together only when all were written; ``append_line`` appends one whole line under a lock
and sets a torn last line aside in ``<name>.torn`` instead of joining it to the next. A full disk
(ENOSPC or EDQUOT) is raised as :class:`DiskFullError`, which the command line prints as one line.
"""

from __future__ import annotations

import errno
import fcntl
import os
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

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
    except DiskFullError:
        raise
    except OSError as exc:
        if exc.errno in _DISK_FULL:
            raise DiskFullError(path, exc) from exc
        raise


def _temporary_name(path: Path) -> Path:
    """A sibling no other writer uses (pid and a random part), ending in ``.tmp``."""
    return path.with_name(f"{path.name}.{os.getpid()}.{uuid.uuid4().hex[:12]}.tmp")


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


def atomic_write_with(path: str | Path, write: Callable[[Path], None]) -> Path:
    """``write(tmp)`` fills a temporary sibling of ``path`` that then replaces it (for writers that
    want a file name, as ``DataFrame.to_csv``: give them the format, the name ends in ``.tmp``)."""
    path = Path(path)
    with _naming_full_disk(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = _temporary_name(path)
        try:
            write(tmp)
            _fsync(tmp)
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

    def write_with(self, path: str | Path, write: Callable[[Path], None]) -> Path:
        path = Path(path)
        with _naming_full_disk(path):
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = _temporary_name(path)
            self._staged.append((tmp, path))  # before writing: a failed write is discarded too
            write(tmp)
            _fsync(tmp)
        return path

    def write(self, path: str | Path, data: str | bytes) -> Path:
        return self.write_with(path, _write_data(data))

    def discard(self) -> None:
        for tmp, _ in self._staged:
            tmp.unlink(missing_ok=True)
        self._staged.clear()

    def commit(self) -> list[Path]:
        done = []
        try:
            for tmp, path in self._staged:
                with _naming_full_disk(path):
                    os.replace(tmp, path)
                done.append(path)
            for folder in {path.parent for path in done}:
                _fsync(folder, best_effort=True)
        finally:
            self.discard()
        return done

    def __enter__(self) -> StagedWrites:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *rest: object) -> None:
        self.commit() if exc_type is None else self.discard()


def _set_aside_torn_tail(fd: int, path: Path) -> int:
    """Move a last line without its newline (``fd``: ``path``, locked) to ``<path>.torn`` and cut it
    off; returns the file's size afterwards."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return size
    end = size
    while end > 0:  # the last newline, read backwards in blocks
        start = max(0, end - (1 << 16))
        found = os.pread(fd, end - start, start).rfind(b"\n")
        if found >= 0:
            end = start + found + 1
            break
        end = start
    fragment = os.pread(fd, size - end, end)
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
def _locked(path: Path) -> Iterator[int]:
    """``path`` opened for appending (created if missing) under an exclusive lock."""
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield fd
    finally:
        os.close(fd)  # releases the lock


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
