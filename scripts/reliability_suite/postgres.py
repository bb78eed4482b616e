"""Issue 23's hostile cases against the embedded Postgres (root only: user ``nobody`` is tried).

In a fresh folder under /tmp: user ``nobody`` (os.setuid in a forked child) tries the server's
socket for a short and a long cache path (over the ~107-byte socket path limit); the modes of the
cache folder's parents (made 0700) and of every file left; the postgres processes after a run is
SIGKILLed and after the next clean run; which binaries user ``pgserver`` runs and who may change them.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pgvector.psycopg  # noqa: F401 - loaded before the fork: user nobody could not import them from a
import psutil  # noqa: F401 - private /root, and another user would bring a client of its own anyway
import psycopg  # noqa: F401

from memplusplus.pg.server import connect, embedded_dsn, stop_embedded
from tests.other_user import as_user
from tests.test_postgres_lockdown import postgres_processes_of, socket_dir_of, start_run

from .common import Rows


def try_as_nobody(dsn: str) -> str:
    """Connect as user ``nobody`` from a forked child; returns what it got."""

    def attempt() -> str:
        role, superuser = connect(dsn).execute(
            "SELECT current_user, rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()
        return f"connected as {role}{' (superuser)' if superuser else ''}"

    def refused(exc: BaseException) -> str:
        reason = str(exc).splitlines()[0].split(" Is the server")[0] if str(exc) else type(exc).__name__
        return f"refused: {reason.rsplit('failed: ', 1)[-1][:90]}"

    return as_user("nobody", attempt, refused)


def describe_dir(path: Path) -> str:
    info = path.stat()
    return f"{path} ({oct(info.st_mode & 0o777)}, owner {pwd.getpwuid(info.st_uid).pw_name})"


def socket_cases(root: Path) -> Rows:
    cases = []
    for label, folder in (
        ("short cache path", root / "short" / "postgres"),
        ("long cache path (over the socket limit)", root / ("x" * 60) / ("y" * 60) / "postgres"),
    ):
        folder.parent.mkdir(parents=True, exist_ok=True)
        dsn = embedded_dsn(folder)
        try:
            socket_dir = socket_dir_of(dsn)
            cases.append([f"socket folder, {label}", describe_dir(socket_dir)])
            cases.append([f"user nobody connects, {label}", try_as_nobody(dsn)])
            if label == "short cache path":  # the socket opened to all by hand: what the server's rules say
                socket_dir.chmod(0o711)
                (socket_dir / ".s.PGSQL.5432").chmod(0o777)
                cases.append(["user nobody connects, socket folder and file opened by hand", try_as_nobody(dsn)])
                socket_dir.chmod(0o700)
        finally:
            stop_embedded(folder)
    return cases


def permission_cases(root: Path) -> Rows:
    cache = root / "private-a" / "private-b" / "cache"
    cache.mkdir(parents=True)
    parents = [root / "private-a", root / "private-a" / "private-b", cache]
    for folder in parents:
        folder.chmod(0o700)
    before = {folder: folder.stat().st_mode & 0o777 for folder in parents}
    embedded_dsn(cache / "postgres")
    stop_embedded(cache / "postgres")
    after = {folder: folder.stat().st_mode & 0o777 for folder in parents}
    changed = [f"{folder.name} {oct(before[folder])}->{oct(after[folder])}" for folder in parents if before[folder] != after[folder]]
    walked = list(os.walk(cache))
    dirs = [(name, os.lstat(os.path.join(path, name)).st_mode & 0o077) for path, names, _ in walked for name in names]
    files = [(name, os.lstat(os.path.join(path, name)).st_mode & 0o077) for path, _, names in walked for name in names]
    loose_dirs, loose_files = [name for name, loose in dirs if loose], [name for name, loose in files if loose]
    return [
        ["parents of the cache folder (0700 before the run)", "; ".join(changed) + " changed" if changed else "none changed"],
        ["cache files readable by others", f"{len(loose_files)} of {len(files)}"
         + (f" ({', '.join(sorted(set(loose_files))[:4])})" if loose_files else "")],
        ["cache folders open to others", f"{len(loose_dirs)} of {len(dirs)}"],
    ]


def kill_cases(root: Path) -> Rows:
    folder = root / "killed" / "postgres"
    folder.parent.mkdir(parents=True)
    first = start_run(folder, hold=600)
    assert first.stdout.readline().strip() == "ready"
    first.send_signal(signal.SIGKILL)
    first.wait()
    time.sleep(1)
    after_kill = len(postgres_processes_of(folder))
    second = start_run(folder, hold=0)
    second.communicate(timeout=300)
    time.sleep(2)
    left = postgres_processes_of(folder)
    for proc in left:  # leave the machine as we found it
        proc.kill()
    return [
        ["postgres processes after the run is killed (SIGKILL)", str(after_kill)],
        ["postgres processes left after the next clean run ends", str(len(left))],
    ]


def binaries_cases() -> Rows:
    """Which binaries user pgserver runs, whether anyone but root can change them, and their reuse."""
    from memplusplus.pg.binaries import runnable_bin_dir, wheel_bin_dir
    from memplusplus.pg.private_dirs import traversable_by

    server = pwd.getpwnam("pgserver")
    wheel = wheel_bin_dir()
    started = time.monotonic()
    bin_dir = runnable_bin_dir(server.pw_uid, server.pw_gid)
    seconds = time.monotonic() - started
    cases = [["wheel's binaries reachable by user pgserver", f"{traversable_by(wheel, server.pw_uid, server.pw_gid)} ({wheel})"]]
    if bin_dir == wheel:
        return [*cases, ["binaries user pgserver runs", "the wheel's own"]]
    copy = bin_dir.parents[2]
    entries = [Path(dirpath) / name for dirpath, dirnames, filenames in os.walk(copy) for name in dirnames + filenames]
    loose = [path for path in entries if os.lstat(path).st_uid != 0 or os.lstat(path).st_mode & 0o022]

    def change() -> str:
        with open(bin_dir / "postgres", "ab"):
            return "changed the copied postgres"

    def refused(exc: BaseException) -> str:
        return f"refused: {getattr(exc, 'strerror', None) or exc}"

    version = subprocess.run([str(bin_dir / "postgres"), "--version"], capture_output=True, text=True,
                             user=server.pw_uid, group=server.pw_gid, extra_groups=[]).stdout.strip()
    return [
        *cases,
        ["binaries user pgserver runs", f"{describe_dir(copy)}, reused or checked in {seconds:.2f} s"],
        ["entries of the copy not root's or writable by others", f"{len(loose)} of {len(entries)}"],
        ["user pgserver runs the copied postgres --version", version or "failed"],
        ["user nobody appends to the copied postgres", as_user("nobody", change, refused)],
    ]


def postgres_cases() -> Rows:
    """Every case, as rows (case, outcome); the probe's folder reads ``<probe>``."""
    if os.geteuid() != 0:
        return [["skipped", "the probe switches to user nobody: run as root"]]
    root = Path(tempfile.mkdtemp(prefix="mempp-pg-probe-"))
    root.chmod(0o755)  # /tmp-like, so the short path is short; the cases make their own private parents
    try:
        cases = binaries_cases() + socket_cases(root) + permission_cases(root) + kill_cases(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return [[name, outcome.replace(str(root), "<probe>")] for name, outcome in cases]
