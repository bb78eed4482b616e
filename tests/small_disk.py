"""A real full disk for the tests: a small tmpfs (root only; the tests that need one skip otherwise).

``leave(pages)`` fills the file system with a filler file until only ``pages`` pages of 4 KiB stay
free; ``free()`` removes the filler. Writes past that fail with ENOSPC from the kernel itself.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

PAGE = 4096


class SmallDisk:
    def __init__(self, path: Path, size_kib: int) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kib}k", "tmpfs", str(path)], check=True,
                       capture_output=True)

    @property
    def free_bytes(self) -> int:
        stats = os.statvfs(self.path)
        return stats.f_bavail * stats.f_frsize

    def leave(self, pages: int) -> None:
        """Fill the disk so that ``pages`` pages stay free (fewer if fewer were free)."""
        size = max(0, self.free_bytes - pages * PAGE)
        with open(self.path / ".filler", "ab", buffering=0) as handle:
            while size > 0:
                try:
                    size -= handle.write(b"\0" * min(size, 1 << 20))
                except OSError:
                    break

    def free(self) -> None:
        (self.path / ".filler").unlink(missing_ok=True)

    def close(self) -> None:
        subprocess.run(["umount", "-l", str(self.path)], check=False, capture_output=True)


def can_mount() -> bool:
    return os.geteuid() == 0


@pytest.fixture()
def small_disk(tmp_path: Path) -> Iterator[SmallDisk]:
    """A 2 MiB tmpfs under ``tmp_path`` (skipped without root)."""
    if not can_mount():
        pytest.skip("mounting a tmpfs needs root")
    try:
        disk = SmallDisk(tmp_path / "disk", 2048)
    except subprocess.CalledProcessError as exc:
        pytest.skip(f"cannot mount a tmpfs here: {exc.stderr!r}")
    try:
        yield disk
    finally:
        disk.close()
