"""The official texts for tests, read straight from ``../shared/official/templates.json`` (the oracle),
and stand-in upstream files built from it.

No upstream code is kept or run. ``stand_in_upstream`` writes, for every file the templates describe,
a Python file that assigns each text to its name in its scope, in file order (an f-string kept as its
source), and copies each folder's LICENSE; the other pinned files get a placeholder line. Such files
exercise the harness's ``ast`` path and ``scripts/fetch_official.py`` exactly as fetched files would,
once the pins are pointed at their hashes (:func:`pin_stand_ins`).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from judges.official.locate import REPO_ROOT
from judges.official.sources import OFFICIAL_FILES, OfficialFile
from memory_protocol import cache_root

SHARED_OFFICIAL = REPO_ROOT.parent / "shared" / "official"
TEMPLATES = SHARED_OFFICIAL / "templates.json"


def templates() -> dict:
    if not TEMPLATES.is_file():
        pytest.skip(f"the templates file is not here ({TEMPLATES})")
    return json.loads(TEMPLATES.read_text(encoding="utf-8"))


def text(path: str, where: str, name: str, index: int = 0) -> str:
    """A text as the templates file gives it (``path`` inside its repository)."""
    for entry in templates()["files"]:
        if entry["path"] == path:
            found = [t["text"] for t in entry["texts"] if t["in"] == where and t["name"] == name]
            return found[index]
    raise KeyError(path)


def _python(entry: dict) -> str:
    """A module assigning each text of ``entry`` to its name in its scope, in order."""
    scopes: dict[str, list[tuple[str, str, str]]] = {}
    for item in entry["texts"]:
        scopes.setdefault(item["in"], []).append((item["name"], item["kind"], item["text"]))
    lines = ["# stand-in built from templates.json for tests"]
    for scope, items in scopes.items():
        body = [f"{'return' if name == '<return>' else name + ' ='} {value if kind == 'f-string' else repr(value)}"
                for name, kind, value in items]
        if scope == "<module>":
            lines += body
            continue
        cls, _, method = scope.rpartition(".")
        indent = "    " if cls else ""
        if cls:
            lines.append(f"class {cls}:")
        lines.append(f"{indent}def {method}(self=None):")
        lines += [f"{indent}    {line}" for line in body]
    return "\n".join(lines) + "\n"


def stand_in_upstream(root: Path) -> dict[str, str]:
    """Stand-in upstream files under ``root/<folder>/<path>``; returns local -> sha256."""
    hashes: dict[str, str] = {}
    written: set[str] = set()
    for entry in templates()["files"]:
        local = f"{entry['folder']}/{entry['path']}"
        target = root / local
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(_python(entry), encoding="utf-8")
        written.add(local)
    for local in OFFICIAL_FILES:
        target = root / local
        if local in written:
            pass
        elif local.endswith("/LICENSE") and (SHARED_OFFICIAL / local).is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(SHARED_OFFICIAL / local, target)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(f"# placeholder for {local}\n", encoding="utf-8")
        hashes[local] = hashlib.sha256(target.read_bytes()).hexdigest()
    return hashes


def pin_stand_ins(monkeypatch: pytest.MonkeyPatch, hashes: dict[str, str]) -> None:
    """Point every file pin with a known hash at the stand-in's bytes (the authors' file keeps none)."""
    for local, pin in OFFICIAL_FILES.items():
        if pin.sha256 is not None:
            monkeypatch.setitem(OFFICIAL_FILES, local, OfficialFile(pin.upstream, pin.path, hashes[local]))


def fetched_dir() -> Path | None:
    """A folder where ``scripts/fetch_official.py`` put the real upstream files, if a user ran it."""
    for candidate in (REPO_ROOT / "official", cache_root() / "official"):
        if (candidate / "mem0" / "evaluation" / "metrics" / "llm_judge.py").is_file():
            return candidate
    return None
