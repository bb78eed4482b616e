"""Every file the harness writes for people to read: whole or not at all, and one line on a full disk.

- :func:`atomic_write` / :func:`atomic_write_with`: the content goes to a temporary name unique to the
  writer (pid and a random part), is flushed to disk and renamed over the target, so a kill or a full
  disk leaves the old file or the new one, never a prefix, and never the temporary file.
- :class:`StagedWrites`: several files that belong together (the tables of one ``make_tables`` run)
  are all written to temporary names first and renamed together at the end; a failure while writing
  any of them replaces none.
- :func:`append_line`: one whole line appended with a single write and fsync, under a lock. A
  failed write is cut back off, so no fragment stays; a fragment left by an older writer or a crash
  (a last line without its newline) is set aside in ``<name>.torn`` with a one-line warning, never
  joined to the next line. :func:`read_lines` sets such a fragment aside too before reading.

A full disk (ENOSPC, or a quota: EDQUOT) is raised as :class:`DiskFullError`, one sentence naming
the file; the command line prints it as one line and exits with code 2.
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

__all__ = ["DiskFullError", "as_disk_full", "StagedWrites", "append_line", "atomic_write", "atomic_write_with", "read_lines",
           "TORN_SUFFIX"]

TORN_SUFFIX = ".torn"
_DISK_FULL = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}


class DiskFullError(OSError):
    """The disk (or the user's quota) is full: nothing half-written was left at ``path``."""

    def __init__(self, path: str | Path, cause: OSError) -> None:
        self.path = str(path)
        message = (f"no space left on the device writing {self.path} ({cause.strerror or cause}); nothing "
                   f"half-written was left there: free some space and re-run (finished steps are cached)")
        super().__init__(cause.errno, message)
        self.message = message

    def __str__(self) -> str:
        return self.message


def _disk_full(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in _DISK_FULL


def as_disk_full(exc: OSError, path: str | Path | None = None) -> DiskFullError | None:
    """``exc`` as a :class:`DiskFullError` when it says the disk is full (None otherwise)."""
    if isinstance(exc, DiskFullError):
        return exc
    if not _disk_full(exc):
        return None
    return DiskFullError(path if path is not None else exc.filename or "a file", exc)


@contextmanager
def _naming_full_disk(path: Path) -> Iterator[None]:
    """Re-raise a full-disk OSError as :class:`DiskFullError` naming ``path``."""
    try:
        yield
    except DiskFullError:
        raise
    except OSError as exc:
        if _disk_full(exc):
            raise DiskFullError(path, exc) from exc
        raise


def temporary_name(path: Path) -> Path:
    """A sibling name no other writer uses (its pid and a random part), ending in ``.tmp``."""
    return path.with_name(f"{path.name}.{os.getpid()}.{uuid.uuid4().hex[:12]}.tmp")


def _fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(folder: Path) -> None:
    """Make a rename durable (best effort: some file systems refuse to fsync a directory)."""
    try:
        _fsync_path(folder)
    except OSError:
        pass


def _discard(tmp: Path) -> None:
    try:
        tmp.unlink()
    except FileNotFoundError:
        pass


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
    """``write(tmp)`` fills a temporary sibling of ``path``, which then replaces ``path``.

    For writers that want a file name (``DataFrame.to_csv``, ``Figure.savefig``: give them the
    format explicitly, the temporary name ends in ``.tmp``)."""
    path = Path(path)
    with _naming_full_disk(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = temporary_name(path)
        try:
            write(tmp)
            _fsync_path(tmp)
            os.replace(tmp, path)
        finally:
            _discard(tmp)
        _fsync_dir(path.parent)
    return path


def atomic_write(path: str | Path, data: str | bytes) -> Path:
    """``path`` holds ``data`` (text is UTF-8), or -- after a kill or a full disk -- what it held before."""
    return atomic_write_with(path, _write_data(data))


class StagedWrites:
    """Files written together: each to a temporary name, all renamed when the block ends without error.

        with StagedWrites() as staged:
            staged.write(out / "table1.md", text)
            staged.write_with(out / "table1.csv", lambda tmp: frame.to_csv(tmp, index=False))

    An error (a full disk, a bug) while staging removes every temporary file and replaces nothing, so
    the folder keeps the previous set whole. ``paths`` lists the targets in the order staged.
    """

    def __init__(self) -> None:
        self._staged: list[tuple[Path, Path]] = []

    @property
    def paths(self) -> list[Path]:
        return [path for _, path in self._staged]

    def write_with(self, path: str | Path, write: Callable[[Path], None]) -> Path:
        path = Path(path)
        with _naming_full_disk(path):
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = temporary_name(path)
            self._staged.append((tmp, path))  # before writing: a failed write is discarded too
            write(tmp)
            _fsync_path(tmp)
        return path

    def write(self, path: str | Path, data: str | bytes) -> Path:
        return self.write_with(path, _write_data(data))

    def discard(self) -> None:
        for tmp, _ in self._staged:
            _discard(tmp)
        self._staged.clear()

    def commit(self) -> list[Path]:
        done = []
        try:
            for tmp, path in self._staged:
                with _naming_full_disk(path):
                    os.replace(tmp, path)
                done.append(path)
            for folder in {path.parent for path in done}:
                _fsync_dir(folder)
        finally:
            self.discard()
        return done

    def __enter__(self) -> "StagedWrites":
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *rest: object) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.discard()


# --------------------------------------------------------------------------- append-only line files
def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def _last_newline(fd: int, size: int, block: int = 1 << 16) -> int:
    """Offset of the last ``\\n`` in the first ``size`` bytes of ``fd`` (-1 when there is none)."""
    end = size
    while end > 0:
        start = max(0, end - block)
        chunk = os.pread(fd, end - start, start)
        found = chunk.rfind(b"\n")
        if found >= 0:
            return start + found
        end = start
    return -1


def _set_aside_torn_tail(fd: int, path: Path) -> int:
    """Move a last line without its newline (``fd``: ``path`` opened for writing, locked) to
    ``<path>.torn`` and cut it off; returns the file's size afterwards."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return size
    keep = _last_newline(fd, size) + 1
    fragment = os.pread(fd, size - keep, keep)
    torn = path.with_name(path.name + TORN_SUFFIX)
    torn_fd = os.open(torn, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:  # kept, one fragment a line, for whoever wants to look
        _write_all(torn_fd, fragment + b"\n")
        os.fsync(torn_fd)
    finally:
        os.close(torn_fd)
    os.ftruncate(fd, keep)
    os.fsync(fd)
    _warn(f"{path}: its last line was cut off by an interrupted write ({len(fragment)} bytes); "
          f"set aside in {torn.name}, the whole lines are kept")
    return keep


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
    """Append ``line`` and its newline to ``path`` in one write, fsynced; on a failed or short
    write the file is cut back to what it was (raises :class:`DiskFullError` on a full disk)."""
    if "\n" in line:
        raise ValueError("append_line takes one line without a newline")
    path = Path(path)
    data = (line + "\n").encode("utf-8")
    with _naming_full_disk(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        with _locked(path) as fd:
            start = _set_aside_torn_tail(fd, path)
            try:
                written = os.write(fd, data)
                if written != len(data):  # a short write: the disk filled up mid-line
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
    with _naming_full_disk(path):
        with _locked(path) as fd:
            size = _set_aside_torn_tail(fd, path)
            data = os.pread(fd, size, 0) if size else b""
    return data.decode("utf-8", errors="replace").splitlines()
