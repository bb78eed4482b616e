"""Find a pinned upstream file and check its sha256 before anything reads it.

Folders are searched as every input folder is (``memory_protocol.search_folders``): the
``official_dir`` setting alone, else ./official, <repo>/official, <repo>/../shared/official and
<cache root>/official (where ``scripts/fetch_official.py`` writes). The first holding the file wins;
other bytes than the pin's are an error (a flipped byte must not change a grade), not a reason to look on.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from judges.official.sources import OfficialFile, official_file
from memory_protocol import ConfigError, REPO_ROOT, search_folders

__all__ = ["OfficialFileMismatch", "OfficialFileMissing", "OfficialReader", "OfficialText", "REPO_ROOT"]


class OfficialFileMissing(LookupError):
    def __init__(self, local: str, searched: list[Path]) -> None:
        self.local, self.searched = local, searched
        super().__init__(f"official file {local} not found (looked in {', '.join(map(str, searched)) or 'nowhere'})")


class OfficialFileMismatch(ConfigError):
    def __init__(self, path: Path, expected: str, got: str) -> None:
        super().__init__(f"official file {path} has sha256 {got[:12]}..., the pinned commit's is {expected[:12]}...; "
                         f"it was changed or is another version: restore it or run `python scripts/fetch_official.py`")


@dataclass(frozen=True)
class OfficialText:
    pin: OfficialFile
    path: Path
    text: str


@dataclass(frozen=True)
class OfficialReader:
    """Reads pinned files from the first directory (in search order) that holds them."""

    directories: tuple[Path, ...]

    @classmethod
    def search(cls, setting: str | os.PathLike[str] | None = None, *, env: Mapping[str, str] | None = None,
               cwd: Path | None = None, repo_root: Path | None = None) -> "OfficialReader":
        found = search_folders("official", setting, env=env, cwd=cwd, repo_root=repo_root)
        return cls(tuple(dict.fromkeys(path for path, _ in found)))

    def locate(self, local: str) -> Path:
        for directory in self.directories:
            if (directory / local).is_file():
                return directory / local
        raise OfficialFileMissing(local, list(self.directories))

    def read(self, local: str) -> OfficialText:
        """The verified text of ``<folder>/<path>`` (OfficialFileMissing, OfficialFileMismatch)."""
        pin = official_file(local)
        path = self.locate(local)
        data = path.read_bytes()
        got = hashlib.sha256(data).hexdigest()
        if pin.sha256 is not None and got != pin.sha256:
            raise OfficialFileMismatch(path, pin.sha256, got)
        try:
            return OfficialText(pin, path, data.decode("utf-8"))
        except UnicodeDecodeError as exc:  # cannot happen for a file matching its pin
            raise OfficialFileMismatch(path, pin.sha256 or "(its texts' pins)", got) from exc
