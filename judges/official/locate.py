"""Find a pinned upstream file and check its sha256 before anything reads it (a file with no file
pin, the authors' ``eval/llm.py``, is checked by its texts' pins in ``judges.official.texts``).

The search order: the ``official_dir`` setting, ``$MEMPP_OFFICIAL_DIR``, ``<repo>/../shared/official``,
``./official`` (the working directory), ``<repo>/official`` (where ``scripts/fetch_official.py``
writes). The first directory holding the file wins. A file whose bytes differ from the pin is an
error (a flipped byte must not change a grade silently), not a reason to look further.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from judges.official.sources import OfficialFile, official_file
from memory_protocol import ConfigError

__all__ = ["ENV_VAR", "OfficialFileMismatch", "OfficialFileMissing", "OfficialReader", "OfficialText", "REPO_ROOT"]

ENV_VAR = "MEMPP_OFFICIAL_DIR"
REPO_ROOT = Path(__file__).resolve().parents[2]


class OfficialFileMissing(LookupError):
    """No searched directory holds the file."""

    def __init__(self, local: str, searched: list[Path]) -> None:
        self.local, self.searched = local, searched
        super().__init__(f"official file {local} not found (looked in {', '.join(map(str, searched)) or 'nowhere'})")


class OfficialFileMismatch(ConfigError):
    """The file exists but its bytes are not the pinned ones."""

    def __init__(self, path: Path, expected: str, got: str) -> None:
        super().__init__(f"official file {path} has sha256 {got[:12]}..., the pinned commit's is {expected[:12]}...; "
                         f"it was changed or is another version: restore it or run `python scripts/fetch_official.py`")


@dataclass(frozen=True)
class OfficialText:
    """A verified upstream file: its pin, where it was read, its text."""

    pin: OfficialFile
    path: Path
    text: str


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class OfficialReader:
    """Reads pinned files from the first directory (in search order) that holds them."""

    directories: tuple[Path, ...]

    @classmethod
    def search(cls, setting: str | os.PathLike[str] | None = None, *, env: Mapping[str, str] | None = None,
               cwd: Path | None = None, repo_root: Path | None = None) -> "OfficialReader":
        env = os.environ if env is None else env
        cwd, repo_root = cwd or Path.cwd(), repo_root or REPO_ROOT
        found: list[Path] = []
        for place in (setting, env.get(ENV_VAR), repo_root.parent / "shared" / "official", cwd / "official",
                      repo_root / "official"):
            if place is None or str(place) == "":
                continue
            path = Path(place).expanduser()
            if path not in found:
                found.append(path)
        return cls(tuple(found))

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
        got = _sha256(data)
        if pin.sha256 is not None and got != pin.sha256:
            raise OfficialFileMismatch(path, pin.sha256, got)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:  # cannot happen for a file matching its pin
            raise OfficialFileMismatch(path, pin.sha256 or "(its texts' pins)", got) from exc
        return OfficialText(pin, path, text)
