"""The official texts as data, never run, and their pins: the upstream evaluation files the paper's
protocol uses (each pinned by commit and sha256) and the texts taken out of them (each pinned by the
sha256 of the text itself). The authors' ``eval/llm.py`` has no file pin: a copy is trusted by its
texts' pins.

A pinned file is found in the first folder of ``memory_protocol.search_folders`` holding it
(``official_dir`` alone, else ./official, <repo>/official, <repo>/../shared/official, <cache
root>/official, where ``scripts/fetch_official.py`` writes) and its sha256 checked: other bytes are an
error, not a reason to look on. A text is the ``index``-th non-empty string literal assigned to a name
or returned in a module, function or method (read with :mod:`ast`, an f-string as its source), or
comes from a ``templates.json`` laid out as ``../shared/official/templates.json`` (each file entry
must name our pin's repository, commit and sha256). A text whose sha256 is not its pin's stops the
run (:class:`OfficialTextMismatch`).
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

from judges.templates import Wording
from memory_protocol import ConfigError, search_folders

__all__ = ["OFFICIAL_FILES", "TEMPLATES_NAME", "TEXT_PINS", "UPSTREAMS", "OfficialFile", "OfficialFileMismatch", "OfficialFileMissing", "OfficialTextMismatch",
           "OfficialTexts", "SourcedText", "TextPin", "Upstream", "official_file", "literals_of", "official_wording", "templates_of"]

TEMPLATES_NAME = "templates.json"
LiteralTable = dict[tuple[str, str], list[str]]


@dataclass(frozen=True)
class Upstream:
    """One repository at one commit; ``folder`` is its directory in an official dir."""

    folder: str
    repo: str
    commit: str
    licence: str


@dataclass(frozen=True)
class OfficialFile:
    upstream: Upstream
    path: str  # inside the repository
    sha256: str | None  # None: no file pin known; the file is trusted by its texts' pins alone

    @property
    def local(self) -> str:
        return f"{self.upstream.folder}/{self.path}"

    @property
    def cite(self) -> str:  # as the harness names the source it used
        return f"{self.upstream.repo}@{self.upstream.commit[:12]}:{self.path}"


LONGMEMEVAL = Upstream("longmemeval", "xiaowu0162/LongMemEval", "9e0b455f4ef0e2ab8f2e582289761153549043fc", "MIT")
# mem0 removed evaluation/ in 9315e3036; this is its parent.
MEM0 = Upstream("mem0", "mem0ai/mem0", "b3ede5b7c0ac0e847b03786a603c107ac943b3ee", "Apache-2.0")
ORGMEMBENCH = Upstream("orgmembench", "PandelisZ/OrgMemBench", "4d6fb64b8c0a7111fbdf00a5d3c5705872343606", "MIT")
# The Mem++ authors' evaluation (the answer prompt of LoCoMo and LongMemEval_S; the paper states none).
AUTHORS = Upstream("mem-plus-plus", "AIDAChip-Inc/mem-plus-plus", "9196597779435736005095574beac11cd3a78742",
                   "see the repository")
UPSTREAMS = (LONGMEMEVAL, MEM0, ORGMEMBENCH, AUTHORS)

_PINS: tuple[tuple[Upstream, str, str | None], ...] = (
    (LONGMEMEVAL, "LICENSE", "d3c4b9aa54759df6ded337978a6f3b55b75615e5e4525c3b82d7e2627d4b9732"),
    (LONGMEMEVAL, "src/evaluation/evaluate_qa.py", "ecce9c4c79dc89d99534ac17b383a5cbb5b9f0c69ee98adaf0684742e3d95251"),
    (LONGMEMEVAL, "src/evaluation/print_qa_metrics.py", "e9283933a0cefb7a0ded7365e436ae3d1be5aac41853325e6155d83bf07607f0"),
    (LONGMEMEVAL, "src/retrieval/eval_utils.py", "c98b8d1096877a15aa755c9de44fe33c195298466a2eb6f3c0f9f6bde8c72349"),
    (MEM0, "LICENSE", "0bbcbe931c353293a2fafce08326181dfeea0e568c566afd4ce8337a70f5e219"),
    (MEM0, "evaluation/README.md", "ed37a3a052a8eec469a5ed78aa251719dfc2a2fcd8e286ffb65c04fc952f92c9"),
    (MEM0, "evaluation/metrics/llm_judge.py", "ac2e242f6ea0b817ba1b229ff9e5271f6846b7b8a9aefa8a5a5a81ea58df3b3c"),
    (MEM0, "evaluation/metrics/utils.py", "83f3fc14e4eff62be1ab07501ba61a912f15aa20856c7a008bb8799706e0e11d"),
    (MEM0, "evaluation/prompts.py", "407bea1c1453dc6832c234bb1ed936d401d796fabcc0b28337a47ba63517d3ba"),
    (MEM0, "evaluation/src/memzero/add.py", "beae2344fcaccf243b0b594a9b4cdca974bf88201ea73b2dbfc0cde8e145dfa0"),
    (MEM0, "evaluation/src/memzero/search.py", "a0fd676c66b803de40d89503b1427f0e11d93883741d156724e1079b8f193afb"),
    (MEM0, "evaluation/src/zep/add.py", "b33a46d6d9df64f0486709e49ef767fa1385b6ed1938b1a6da71b894c9a574fa"),
    (MEM0, "evaluation/src/zep/search.py", "6681d37cc766d5960f671f4e680f75ab86778ef0214712445ff63ee8449d35c3"),
    (ORGMEMBENCH, "LICENSE", "e74742eff8d3245f1558aeb047f002bfef2d77a32f45e15881918315bda75397"),
    (ORGMEMBENCH, "orgmembench/answerer.py", "5edeb4a92c115940679e164b03920a0a6c7fc46a6087ad55c28a5c5860179c00"),
    (ORGMEMBENCH, "orgmembench/judge.py", "893f784334be88f0ff6febd1301c3c52cf036d4fd96642ab8296a6363d2ae50b"),
    (AUTHORS, "eval/llm.py", None),
)
OFFICIAL_FILES: dict[str, OfficialFile] = {f.local: f for f in (OfficialFile(u, p, h) for u, p, h in _PINS)}


def official_file(local: str) -> OfficialFile:
    try:
        return OFFICIAL_FILES[local]
    except KeyError:
        raise KeyError(f"no pinned official file {local!r}; known: {sorted(OFFICIAL_FILES)}") from None


@dataclass(frozen=True)
class TextPin:
    """The ``index``-th non-empty string literal assigned to ``name`` (or ``<return>``ed) in ``where``
    (``<module>``, a function, ``Class.method``) of ``local``, and its sha256 (an f-string's: of its source)."""

    key: str
    local: str
    where: str
    name: str
    sha256: str
    index: int = 0

    @property
    def pin(self) -> OfficialFile:
        return official_file(self.local)


_LME_QA = "longmemeval/src/evaluation/evaluate_qa.py"
_TEXTS: tuple[TextPin, ...] = (
    # LongMemEval's five judge templates, in file order (the order get_anscheck_prompt tests them)
    TextPin("lme.default", _LME_QA, "get_anscheck_prompt", "template",
            "fba020ba3d57982efdc9a937c1c01f897b789a608c7f88e60244121f6505e5bc", 0),
    TextPin("lme.temporal", _LME_QA, "get_anscheck_prompt", "template",
            "8d33a5fdd83afeeb4592454a965eab43d1fcb2dedc042d1d3892f4254be6c273", 1),
    TextPin("lme.knowledge_update", _LME_QA, "get_anscheck_prompt", "template",
            "183a9b3a6197ec620940f610cdc1207201ec98c1113dd633ea685cfc322fafac", 2),
    TextPin("lme.preference", _LME_QA, "get_anscheck_prompt", "template",
            "741ee3bcbea7ff5e8ed359acef61d2f8ded3de021bbcff6ee13de455f2e2aa9b", 3),
    TextPin("lme.abstention", _LME_QA, "get_anscheck_prompt", "template",
            "5c0b365a1e1d06db36377c735432b56e122ca3c428f89faf61d43a0d5a7e050b", 4),
    TextPin("mem0.accuracy", "mem0/evaluation/metrics/llm_judge.py", "<module>", "ACCURACY_PROMPT",
            "62395dd312a631dfd9355026a0b69cc936018274c3198b6365b5c2a5c9bca9e0"),
    TextPin("mem0.answer", "mem0/evaluation/prompts.py", "<module>", "ANSWER_PROMPT",
            "f3c786104816bba61d03b7f41c2be45009e6c8c296a04d9712ab1a59e4ae2399"),
    TextPin("mem0.answer_zep", "mem0/evaluation/prompts.py", "<module>", "ANSWER_PROMPT_ZEP",
            "95b8170c30bb86f0e6819cd4846e6e3cd24c9a82030f90dbe36c880b522b92fc"),
    TextPin("mem0.answer_graph", "mem0/evaluation/prompts.py", "<module>", "ANSWER_PROMPT_GRAPH",
            "007fac5eb6722632c92b82701265ab8da2ab20bf8464423954a2f23fa459bff8"),
    TextPin("mem0.zep_context", "mem0/evaluation/src/zep/search.py", "<module>", "TEMPLATE",
            "82c72e2c2dc8d83c2e2ea491701efeecac5ce77d8a78fa444c572e231ce868d4"),
    TextPin("orgmem.answer", "orgmembench/orgmembench/answerer.py", "<module>", "BASIC_ANSWER_PROMPT",
            "dc276ffb272357b046c797ecdf269c774e35a34075b7e6b7dfd5a984bb7314b6"),
    TextPin("orgmem.judge_system", "orgmembench/orgmembench/judge.py", "<module>", "_JUDGE_SYSTEM",
            "bb7d2cc74ee7c5697eaf1c0f1774530ba6a5447f5b6fb43e12b65e875408eb84"),
    TextPin("orgmem.emergent", "orgmembench/orgmembench/judge.py", "build_judge_prompt", "extra",
            "5409a14f7d5051a8cace4f9c23f1ec1f373265434f04942910230900c8995a69"),
    TextPin("orgmem.judge_prompt", "orgmembench/orgmembench/judge.py", "build_judge_prompt", "<return>",
            "24019bb892ab4dff03ec6456959af93bd61742543f130f0f1c4c01cbf87a4ef1"),
    # The template text as the index read it (the sha256 of the text, not of the file's bytes).
    TextPin("authors.answer", "mem-plus-plus/eval/llm.py", "<module>", "ANSWER_PROMPT_TEMPLATE",
            "140a426f312b91d02677101af89ee76aded7f99adafe025e9c165950c8dee197"),
)
TEXT_PINS: dict[str, TextPin] = {t.key: t for t in _TEXTS}


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
    sha256: str  # of the file's bytes


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
    """Pinned files and texts from the first searched directory (in search order) holding them: a text
    from its upstream file, else from a templates file."""

    directories: tuple[Path, ...]
    _cache: dict[str, SourcedText] = field(default_factory=dict)

    @classmethod
    def search(cls, setting: str | os.PathLike[str] | None = None, *, env: Mapping[str, str] | None = None,
               cwd: Path | None = None, repo_root: Path | None = None) -> "OfficialTexts":
        found = search_folders("official", setting, env=env, cwd=cwd, repo_root=repo_root)
        return cls(tuple(dict.fromkeys(path for path, _ in found)))

    def read(self, local: str) -> OfficialText:
        """The verified text of the file ``<folder>/<path>`` (OfficialFileMissing, OfficialFileMismatch)."""
        pin = official_file(local)
        path = next((d / local for d in self.directories if (d / local).is_file()), None)
        if path is None:
            raise OfficialFileMissing(local, list(self.directories))
        data = path.read_bytes()
        got = _sha256(data)
        if pin.sha256 is not None and got != pin.sha256:
            raise OfficialFileMismatch(path, pin.sha256, got)
        try:
            return OfficialText(pin, path, data.decode("utf-8"), got)
        except UnicodeDecodeError as exc:  # cannot happen for a file matching its pin
            raise OfficialFileMismatch(path, pin.sha256 or "(its texts' pins)", got) from exc

    def get(self, key: str) -> SourcedText:
        """The text ``key`` of :data:`TEXT_PINS`: OfficialFileMissing when nowhere, OfficialTextMismatch
        or OfficialFileMismatch when a source holds other bytes."""
        if key not in self._cache:
            self._cache[key] = self._read(TEXT_PINS[key])
        return self._cache[key]

    def _read(self, pin: TextPin) -> SourcedText:
        for directory in self.directories:
            if (directory / pin.local).is_file():
                official = self.read(pin.local)
                return self._checked(pin, _upstream(official.text, official.path), "upstream", official.path,
                                     official.sha256)
            templates = directory / TEMPLATES_NAME
            if templates.is_file():
                sha256 = _sha256(templates.read_bytes())
                table = _templates(templates, sha256).get(pin.local)
                if table is None:
                    raise OfficialTextMismatch(f"{templates}: holds no entry for {pin.local}")
                return self._checked(pin, table, "templates", templates, sha256)
        raise OfficialFileMissing(pin.local, list(self.directories))

    @staticmethod
    def _checked(pin: TextPin, table: LiteralTable, via: str, path: Path, sha256: str) -> SourcedText:
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
        return SourcedText(pin, text, via, path, sha256)


def official_wording(*texts: SourcedText, what: str = "", source: str = "official") -> Wording:
    """The upstream file(s) cited, each file read with its sha256, and each text's own sha256."""
    cite = "; ".join(dict.fromkeys(t.pin.pin.cite for t in texts)) + (f" ({what})" if what else "")
    cite += " via templates.json" if {t.via for t in texts} == {"templates"} else ""
    files = tuple(dict.fromkeys((str(t.path), t.sha256) for t in texts))
    return Wording(source, cite, files, tuple((t.pin.key, t.pin.sha256) for t in texts))
