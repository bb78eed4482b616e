"""The embedded Postgres is private to the user who runs it and never outlives its last run (issue 23).

Another OS user (``nobody``, reached by os.setuid in a forked child) must not connect, for a short
and for a long cache path; the socket folder is 0700; no parent of the cache folder changes mode;
what the server writes is 0600/0700; a run killed with SIGKILL leaves no server once the next run
ends; a stale ``postmaster.pid`` is replaced. The other-user cases need root (CI runs as root).
"""

from __future__ import annotations

import os
import pwd
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

import pytest

from tests.postgres_support import skip_without_postgres_extra

skip_without_postgres_extra()

import psutil  # noqa: E402

from memplusplus.pg.private_dirs import (  # noqa: E402
    SOCKET_PATH_LIMIT,
    is_private_folder,
    make_private_folder,
    new_socket_folder,
)
from memplusplus.pg.server import connect, embedded_dsn, stop_embedded  # noqa: E402
from tests.other_user import as_user  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def _nobody() -> pwd.struct_passwd | None:
    try:
        return pwd.getpwnam("nobody")
    except KeyError:
        return None


needs_root_and_nobody = pytest.mark.skipif(
    os.geteuid() != 0 or _nobody() is None, reason="switching to user nobody needs root and that user"
)


@pytest.fixture
def scratch() -> Iterator[Path]:
    """A folder under the temp folder (pytest's own is private to root, which is fine: nothing here
    may need it opened)."""
    folder = Path(tempfile.mkdtemp(prefix="mempp-pg-lockdown-"))
    yield folder
    subprocess.run(["rm", "-rf", str(folder)], check=False)


def socket_dir_of(dsn: str) -> Path:
    return Path(unquote(parse_qs(urlparse(dsn).query)["host"][0]))


def connect_as_nobody(dsn: str) -> str:
    """What user nobody gets when it connects with ``dsn``: 'connected as <role>' or the error."""
    return as_user("nobody", lambda: "connected as " + connect(dsn).execute("SELECT current_user").fetchone()[0])


def server_owner_uid() -> int:
    """The OS user the server runs as: this process' user; under root the user pgserver."""
    return pwd.getpwnam("pgserver").pw_uid if os.geteuid() == 0 else os.geteuid()


def postgres_processes_of(folder: Path) -> list[psutil.Process]:
    """Live postgres processes working in ``folder`` or naming it on their command line."""
    target = str(folder.resolve())
    found = []
    for proc in psutil.process_iter(["name", "cmdline", "cwd"]):
        if proc.info["name"] == "postgres" and (
            proc.info["cwd"] == target or any(target in arg for arg in proc.info["cmdline"] or ())
        ):
            found.append(proc)
    return found


LONG = "l" * 60 + "/" + "m" * 60  # with the temp folder, far over the socket path limit


@needs_root_and_nobody
@pytest.mark.parametrize("subfolder", ["short", LONG], ids=["short-path", "long-path"])
def test_another_user_cannot_reach_the_socket(scratch, subfolder):
    scratch.chmod(0o755)  # like /tmp: others may walk to the cache folder, so only the server's own rules stop them
    folder = scratch / subfolder / "postgres"
    assert (len(str(folder)) + len("/.s.PGSQL.5432") > SOCKET_PATH_LIMIT) == (subfolder == LONG)
    dsn = embedded_dsn(folder)
    try:
        socket_dir = socket_dir_of(dsn)
        info = os.lstat(socket_dir)
        assert stat.S_ISDIR(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o700
        assert info.st_uid == server_owner_uid()
        assert (socket_dir / ".s.PGSQL.5432").is_socket()
        assert connect(dsn).execute("SELECT current_user").fetchone()[0] == "postgres"  # the runner gets in
        outcome = connect_as_nobody(dsn)
        assert "Permission denied" in outcome, outcome
    finally:
        stop_embedded(folder)
    assert not socket_dir.exists()  # the socket folder goes with the server



@needs_root_and_nobody
def test_a_non_root_runner_owns_the_socket_folder_and_runs_the_server(scratch):
    """Without root the server runs as the runner itself: the socket folder is the runner's, 0700."""
    entry = _nobody()
    scratch.chmod(0o755)
    home = scratch / "nobody-home"
    home.mkdir(mode=0o700)
    os.chown(home, entry.pw_uid, entry.pw_gid)

    def own_server() -> str:  # as nobody: start, inspect and stop its own server
        folder = home / "cache" / "postgres"
        dsn = embedded_dsn(folder)
        socket_dir = socket_dir_of(dsn)
        info = os.lstat(socket_dir)
        role = connect(dsn).execute("SELECT current_user").fetchone()[0]
        owners = {proc.uids().real for proc in postgres_processes_of(folder)}
        stop_embedded(folder)
        return f"{oct(stat.S_IMODE(info.st_mode))} {info.st_uid} {role} {sorted(owners)} {socket_dir.exists()}"

    report = as_user("nobody", own_server)
    if "cannot reach the Postgres binaries" in report:
        pytest.skip("user nobody cannot reach the installed Postgres binaries here")
    assert report == f"0o700 {entry.pw_uid} postgres [{entry.pw_uid}] False", report


@needs_root_and_nobody
def test_authentication_refuses_other_users_even_if_the_socket_were_reachable(scratch):
    """Second layer: peer authentication maps only the runner's OS user to a role."""
    folder = scratch / "postgres"
    dsn = embedded_dsn(folder)
    socket_dir = socket_dir_of(dsn)
    try:
        rules = connect(dsn).execute(
            "SELECT type, database, user_name, auth_method, options FROM pg_hba_file_rules ORDER BY rule_number"
        ).fetchall()
        assert rules == [("local", ["all"], ["postgres"], "peer", ["map=mempp"])]
        socket_dir.chmod(0o711)  # simulate a leak: the socket folder and file opened to everyone
        (socket_dir / ".s.PGSQL.5432").chmod(0o777)
        outcome = connect_as_nobody(dsn)
        assert "Peer authentication failed" in outcome, outcome
    finally:
        socket_dir.chmod(0o700)
        stop_embedded(folder)


def test_no_parent_changes_mode_and_everything_written_is_private(scratch):
    private = scratch / "private"
    private.mkdir(mode=0o700)
    private.chmod(0o700)
    folder = private / "new-a" / "new-b" / "postgres"  # two parents the run has to create
    parents = [*private.parents, private]
    modes_before = {p: stat.S_IMODE(p.stat().st_mode) for p in parents}
    dsn = embedded_dsn(folder)
    conn = connect(dsn)
    conn.execute("CREATE TABLE kept (x int)")
    conn.execute("INSERT INTO kept VALUES (1)")
    conn.close()
    stop_embedded(folder)
    assert {p: stat.S_IMODE(p.stat().st_mode) for p in parents} == modes_before
    assert stat.S_IMODE((private / "new-a").stat().st_mode) == 0o700
    assert stat.S_IMODE((private / "new-a" / "new-b").stat().st_mode) == 0o700
    loose, seen = [], 0
    for dirpath, dirnames, filenames in os.walk(private / "new-a"):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            seen += 1
            if stat.S_IMODE(os.lstat(path).st_mode) & 0o077:
                loose.append((path, oct(stat.S_IMODE(os.lstat(path).st_mode))))
    assert seen > 500 and loose == []  # a whole cluster (about a thousand files), none open to others


RUN = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {repo!r})
    from memplusplus.pg.server import connect, embedded_dsn
    connect(embedded_dsn({folder!r})).close()
    print("ready", flush=True)
    time.sleep({hold})
    """
)


def start_run(folder: Path, hold: float) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", RUN.format(repo=str(REPO), folder=str(folder), hold=hold)],
                            stdout=subprocess.PIPE, text=True)


def test_a_run_killed_with_sigkill_leaves_no_server_after_the_next_run(scratch):
    folder = scratch / "postgres"
    killed = start_run(folder, hold=600)
    try:
        assert killed.stdout.readline().strip() == "ready"
        killed.send_signal(signal.SIGKILL)
        killed.wait(timeout=30)
        assert postgres_processes_of(folder), "the scenario needs a server left by the killed run"
        second = start_run(folder, hold=0)
        out, _ = second.communicate(timeout=300)
        assert second.returncode == 0 and out.strip() == "ready"
        deadline = time.monotonic() + 10
        while postgres_processes_of(folder) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert postgres_processes_of(folder) == []
        pgrep = subprocess.run(["pgrep", "-f", str(folder)], capture_output=True, text=True)
        assert pgrep.stdout.strip() == ""
    finally:
        for proc in postgres_processes_of(folder):
            proc.kill()


def test_a_stale_pid_file_naming_another_live_process_is_replaced(scratch):
    folder = scratch / "postgres"
    embedded_dsn(folder)
    stop_embedded(folder)
    impostor = subprocess.Popen(["sleep", "120"])  # alive, but not this folder's postgres
    try:
        lines = [str(impostor.pid), str(folder), "0", "5432", "/tmp", "", "0 0", "ready"]
        (folder / "postmaster.pid").write_text("\n".join(lines) + "\n")
        dsn = embedded_dsn(folder)
        assert connect(dsn).execute("SELECT 1").fetchone() == (1,)
        pid = int((folder / "postmaster.pid").read_text().split()[0])
        assert pid != impostor.pid and psutil.Process(pid).name() == "postgres"
        stop_embedded(folder)
        assert impostor.poll() is None  # the impostor was left alone
    finally:
        impostor.kill()
        impostor.wait()
    assert postgres_processes_of(folder) == []


def test_private_folders_are_checked_and_socket_folders_fit(tmp_path, monkeypatch):
    made = tmp_path / "a" / "b"
    make_private_folder(made)
    assert stat.S_IMODE((tmp_path / "a").stat().st_mode) == 0o700 and is_private_folder(made, os.geteuid())
    (tmp_path / "open").mkdir(mode=0o755)
    (tmp_path / "open").chmod(0o755)
    (tmp_path / "link").symlink_to(made)
    assert not is_private_folder(tmp_path / "open", os.geteuid())
    assert not is_private_folder(tmp_path / "link", os.geteuid())
    assert not is_private_folder(made, os.geteuid() + 1)
    long_tmp = tmp_path / ("t" * 120)
    long_tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(long_tmp))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    import tempfile as tempfile_module

    monkeypatch.setattr(tempfile_module, "tempdir", None)  # let gettempdir() read TMPDIR again
    socket_dir = new_socket_folder(os.geteuid(), os.getegid())
    try:
        assert socket_dir.parent == Path("/tmp") and is_private_folder(socket_dir, os.geteuid())
        assert len(str(socket_dir / ".s.PGSQL.5432")) <= SOCKET_PATH_LIMIT
    finally:
        socket_dir.rmdir()
