"""The official texts as data, never run. A pinned upstream file is found in the first folder of
``memory_protocol.paths.search_folders`` holding it (``official_dir`` alone, else ./official,
<repo>/official, <repo>/../shared/official, <cache root>/official) and its sha256 checked: other bytes
are an error, not a reason to look on. A text is the ``index``-th non-empty string literal assigned
to a name or returned in a module, function or method (read with :mod:`ast`, an f-string as its
source), or comes from a ``templates.json`` laid out as ``../shared/official/templates.json`` (each
file entry must name our pin's repository, commit and sha256). A text whose sha256 is not its pin's
stops the run (:class:`OfficialTextMismatch`).
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

from judges.official.sources import OFFICIAL_FILES, TEXT_PINS, OfficialFile, TextPin, official_file
from judges.templates import Wording
from memory_protocol import ConfigError
from memory_protocol.paths import search_folders

__all__ = ["TEMPLATES_NAME", "OfficialFileMismatch", "OfficialFileMissing", "OfficialReader", "OfficialTextMismatch",
           "OfficialTexts", "SourcedText", "literals_of", "official_wording", "templates_of"]

TEMPLATES_NAME = "templates.json"
LiteralTable = dict[tuple[str, str], list[str]]


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
        got = _sha256(data)
        if pin.sha256 is not None and got != pin.sha256:
            raise OfficialFileMismatch(path, pin.sha256, got)
        try:
            return OfficialText(pin, path, data.decode("utf-8"))
        except UnicodeDecodeError as exc:  # cannot happen for a file matching its pin
            raise OfficialFileMismatch(path, pin.sha256 or "(its texts' pins)", got) from exc


class OfficialTextMismatch(ConfigError):
    """A source holds the file but not the pinned text (another version, or a changed templates file)."""


@dataclass(frozen=True)
class SourcedText:
    """A pinned text, read ``via`` ``upstream`` or ``templates`` from ``path`` (whose bytes hash to ``sha256``)."""

    pin: TextPin
    text: str
    via: str
    path: Path
    sha256: str

    @property
    def cite(self) -> str:
        return f"{self.pin.pin.cite} ({self.pin.name})"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _scopes(tree: ast.Module) -> list[tuple[str, list[ast.stmt]]]:
    """``<module>``, each top-level function and each method (``Class.method``), with their bodies."""
    scopes: list[tuple[str, list[ast.stmt]]] = [("<module>", [])]
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            scopes.append((node.name, node.body))
        elif isinstance(node, ast.ClassDef):
            scopes += [(f"{node.name}.{item.name}", item.body) for item in node.body
                       if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))]
        else:
            scopes[0][1].append(node)
    return scopes


def _text_of(value: ast.AST | None, source: str) -> str | None:
    """A non-empty string literal's value, an f-string's source text, else None."""
    if isinstance(value, ast.Constant) and isinstance(value.value, str) and value.value:
        return value.value
    if isinstance(value, ast.JoinedStr):
        return ast.get_source_segment(source, value)
    return None


def literals_of(source: str, filename: str = "<upstream>") -> LiteralTable:
    """Every text a file assigns to a plain name or returns, by (scope, name), in file order."""
    tree = ast.parse(source, filename=filename)
    table: LiteralTable = {}
    for scope, body in _scopes(tree):
        found: list[tuple[int, int, str, str]] = []
        nodes = [n for stmt in body for n in ast.walk(stmt)] if scope != "<module>" else body
        for node in nodes:
            if isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
                value = node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names, value = [node.target.id], node.value
            elif isinstance(node, ast.Return) and scope != "<module>":
                names, value = ["<return>"], node.value
            else:
                continue
            text = _text_of(value, source)
            if text is not None:
                found += [(node.lineno, node.col_offset, name, text) for name in names]
        for _line, _col, name, text in sorted(found, key=lambda item: item[:2]):
            table.setdefault((scope, name), []).append(text)
    return table


def _entry_problem(entry: Any, local: str) -> str | None:
    pin = OFFICIAL_FILES[local]
    if entry.get("repo") != pin.upstream.repo or entry.get("commit") != pin.upstream.commit:
        return f"names {entry.get('repo')}@{entry.get('commit')}, the pin is {pin.upstream.repo}@{pin.upstream.commit}"
    if pin.sha256 is not None and entry.get("sha256") != pin.sha256:
        return f"gives sha256 {str(entry.get('sha256'))[:12]}... for it, the pin is {pin.sha256[:12]}..."
    return None


def templates_of(data: Any, path: Path) -> dict[str, LiteralTable]:
    """A templates file's texts by upstream file (``<folder>/<path>``); ConfigError (one line) for a
    file not laid out as ours or disagreeing with our pins."""
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, list):
        raise ConfigError(f"{path}: not a templates file (expected an object with a 'files' list)")
    out: dict[str, LiteralTable] = {}
    for n, entry in enumerate(files):
        if not isinstance(entry, dict) or not isinstance(entry.get("texts"), list):
            raise ConfigError(f"{path}: files[{n}] is not an object with a 'texts' list")
        local = f"{entry.get('folder')}/{entry.get('path')}"
        if local not in OFFICIAL_FILES:
            continue  # a file the harness does not use
        problem = _entry_problem(entry, local)
        if problem:
            raise ConfigError(f"{path}: the entry of {local} {problem}")
        table: LiteralTable = {}
        for text in entry["texts"]:
            if isinstance(text, dict) and isinstance(text.get("text"), str):
                table.setdefault((str(text.get("in")), str(text.get("name"))), []).append(text["text"])
        out[local] = table
    return out


@lru_cache(maxsize=16)
def _templates(path: Path, sha256: str) -> dict[str, LiteralTable]:
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc})") from None
    return templates_of(data, path)


@lru_cache(maxsize=32)
def _upstream(text: str, path: Path) -> LiteralTable:
    try:
        return literals_of(text, str(path))
    except SyntaxError as exc:
        raise OfficialTextMismatch(f"{path}: not Python source this harness can read ({exc.msg})") from None


@dataclass
class OfficialTexts:
    """Pinned texts from the first searched directory holding their upstream file or a templates file
    (the upstream file first)."""

    reader: OfficialReader
    _cache: dict[str, SourcedText] = field(default_factory=dict)

    @classmethod
    def search(cls, setting: Any = None, **kwargs: Any) -> "OfficialTexts":
        return cls(OfficialReader.search(setting, **kwargs))

    def get(self, key: str) -> SourcedText:
        """The text ``key`` of :data:`TEXT_PINS`: OfficialFileMissing when nowhere, OfficialTextMismatch
        or OfficialFileMismatch when a source holds other bytes."""
        if key not in self._cache:
            self._cache[key] = self._read(TEXT_PINS[key])
        return self._cache[key]

    def _read(self, pin: TextPin) -> SourcedText:
        for directory in self.reader.directories:
            if (directory / pin.local).is_file():
                official = self.reader.read(pin.local)
                data = official.path.read_bytes()
                return self._checked(pin, _upstream(official.text, official.path), "upstream", official.path, data)
            templates = directory / TEMPLATES_NAME
            if templates.is_file():
                data = templates.read_bytes()
                table = _templates(templates, _sha256(data)).get(pin.local)
                if table is None:
                    raise OfficialTextMismatch(f"{templates}: holds no entry for {pin.local}")
                return self._checked(pin, table, "templates", templates, data)
        raise OfficialFileMissing(pin.local, list(self.reader.directories))

    @staticmethod
    def _checked(pin: TextPin, table: LiteralTable, via: str, path: Path, data: bytes) -> SourcedText:
        texts = table.get((pin.where, pin.name), [])
        if len(texts) <= pin.index:
            raise OfficialTextMismatch(f"{path}: no text {pin.name} in {pin.where} of {pin.local} "
                                       f"(another version of the file?)")
        text = texts[pin.index]
        got = _sha256(text.encode("utf-8"))
        if got != pin.sha256:
            raise OfficialTextMismatch(f"{path}: the text {pin.name} in {pin.where} of {pin.local} has sha256 "
                                       f"{got[:12]}..., the pin is {pin.sha256[:12]}...; it was changed or is "
                                       f"another version")
        return SourcedText(pin, text, via, path, _sha256(data))


def official_wording(*texts: SourcedText, what: str = "", source: str = "official") -> Wording:
    """The upstream file(s) cited, each file read with its sha256, and each text's own sha256."""
    cite = "; ".join(dict.fromkeys(t.pin.pin.cite for t in texts)) + (f" ({what})" if what else "")
    cite += " via templates.json" if {t.via for t in texts} == {"templates"} else ""
    files = tuple(dict.fromkeys((str(t.path), t.sha256) for t in texts))
    return Wording(source, cite, files, tuple((t.pin.key, t.pin.sha256) for t in texts))
