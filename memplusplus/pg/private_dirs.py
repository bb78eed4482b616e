"""Folders for the embedded Postgres that one OS user alone can enter: made 0700, checked before use.

Nothing here loosens an existing folder: parents that exist keep their modes, the folders this
module creates are 0700, and a folder found in place is used only after ``is_private_folder``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

# A Unix socket path must fit sun_path: 108 bytes on Linux (104 on macOS) with the final NUL.
SOCKET_PATH_LIMIT = 103
SOCKET_FILE_NAME = ".s.PGSQL.5432"
SOCKET_FOLDER_PREFIX = "mempp-pg-"
_SOCKET_FOLDER_NAME_LENGTH = len(SOCKET_FOLDER_PREFIX) + 8  # mkdtemp adds 8 random characters


def make_private_folder(path: Path) -> None:
    """Create ``path`` and its missing parents with mode 0700; folders that exist are not touched."""
    missing: list[Path] = []
    folder = path
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            continue  # another process made it at the same moment; its mode is that process' business
        folder.chmod(0o700)  # mkdir's mode goes through the umask, which may be looser or stricter


def is_private_folder(path: Path, owner_uid: int) -> bool:
    """A real folder (not a link) owned by ``owner_uid`` that nobody else may enter or list (0700)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == owner_uid and stat.S_IMODE(info.st_mode) == 0o700


def traversable_by(path: Path, uid: int, gid: int) -> bool:
    """Whether ``uid``/``gid`` may search every folder from ``/`` down to ``path``, by mode bits alone
    (an ACL-only grant counts as closed: the safe answer)."""
    for folder in (path, *path.parents):
        info = folder.stat()
        if uid == 0:
            continue
        if info.st_uid == uid:
            allowed = info.st_mode & stat.S_IXUSR
        elif info.st_gid == gid:
            allowed = info.st_mode & stat.S_IXGRP
        else:
            allowed = info.st_mode & stat.S_IXOTH
        if not allowed:
            return False
    return True


def _socket_folder_bases() -> list[Path]:
    """Where a socket folder may go, best first: the user's runtime folder, then the temp folder."""
    bases: list[Path] = []
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.geteuid() != 0 and is_private_folder(Path(runtime), os.geteuid()):
        bases.append(Path(runtime))
    bases += [Path(tempfile.gettempdir()), Path("/tmp")]
    return bases


def socket_folder_fits(base: Path) -> bool:
    """A socket folder made in ``base`` leaves a socket path within the limit, and a plain one."""
    text = str(base)
    length = len(os.fsencode(text)) + 1 + _SOCKET_FOLDER_NAME_LENGTH + 1 + len(SOCKET_FILE_NAME)
    return length <= SOCKET_PATH_LIMIT and not any(char in text for char in ' ,"\'\\')


def new_socket_folder(owner_uid: int, owner_gid: int) -> Path:
    """A fresh 0700 folder for the server's socket, handed to ``owner_uid``; ``mkdtemp`` creates it
    exclusively, so it is ours even in a world-writable /tmp."""
    for base in _socket_folder_bases():
        if base.is_dir() and socket_folder_fits(base):
            folder = Path(tempfile.mkdtemp(prefix=SOCKET_FOLDER_PREFIX, dir=base))
            if owner_uid != os.geteuid():
                os.chown(folder, owner_uid, owner_gid)
            return folder
    raise RuntimeError("no folder for the embedded Postgres socket: $XDG_RUNTIME_DIR, $TMPDIR and /tmp are missing "
                       f"or too long for a socket path of at most {SOCKET_PATH_LIMIT} bytes")


@contextlib.contextmanager
def flocked(folder: Path) -> Iterator[None]:
    """Exclusive across processes: an flock on the folder itself."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def is_our_socket_folder(path: Path, owner_uid: int) -> bool:
    """A folder ``new_socket_folder`` made for this server (so it may be removed with it)."""
    return path.name.startswith(SOCKET_FOLDER_PREFIX) and is_private_folder(path, owner_uid)
