"""Our prompt templates (``judges/prompts/*.txt`` or a user's ``prompt_file``), checked for their
placeholders, and where a prompt's words come from (:class:`Wording`) with the request settings
that go with them (:class:`RequestParams`)."""

from __future__ import annotations

import hashlib
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["LONGMEMEVAL_KINDS", "PROMPTS_DIR", "PromptTemplate", "RequestParams", "Wording", "WORDING_SOURCES",
           "load_template", "texts_hash"]

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"
LONGMEMEVAL_KINDS: tuple[str, ...] = ("default", "temporal", "knowledge_update", "preference", "abstention")
# official: a benchmark's or mem0's text read at run time; authors: the Mem++ authors' answer template
# (eval/llm.py), for answer prompts the paper does not state; own: judges/prompts/ (scores not
# comparable with published ones); custom: the user's prompt_file.
WORDING_SOURCES = ("official", "authors", "own", "custom")


@dataclass(frozen=True)
class Wording:
    """A prompt's source, the upstream file(s) or our file it cites, the (path, sha256) of each file
    read and the (text key, sha256) of each pinned text used."""

    source: str
    cite: str
    files: tuple[tuple[str, str], ...] = ()
    texts: tuple[tuple[str, str], ...] = ()
    texts_sha256: str = field(init=False, repr=False, compare=False)  # :func:`texts_hash`, as a template's sha256

    def __post_init__(self) -> None:
        if self.source not in WORDING_SOURCES:
            raise ValueError(f"wording source {self.source!r}; expected one of {WORDING_SOURCES}")
        object.__setattr__(self, "texts_sha256", texts_hash(self))

    def record(self) -> dict[str, Any]:
        """What metrics.json keeps of it."""
        record: dict[str, Any] = {"source": self.source, "cite": self.cite,
                                  "files": [{"path": p, "sha256": h} for p, h in self.files]}
        if self.texts:
            record["texts"] = dict(self.texts)
        return record


@dataclass(frozen=True)
class RequestParams:
    """Request settings a prompt prescribes (None: the model config's); ``omit`` names settings the
    upstream script does not send (``seed``, ``max_tokens``), so neither do we."""

    temperature: float | None = None
    max_tokens: int | None = None
    response_format: Mapping[str, Any] | None = None
    omit: tuple[str, ...] = ()
    seed: int | None = None

    def extra(self) -> dict[str, Any]:
        return {"response_format": dict(self.response_format)} if self.response_format is not None else {}


def texts_hash(wording: Wording) -> str:
    """One hash naming the pinned texts a wording sends (a cache key's template hash)."""
    return hashlib.sha256("\n".join(f"{k}={v}" for k, v in wording.texts).encode("utf-8")).hexdigest()


# Template name -> (required slots, optional slots); a slot lists the placeholder names that fill it,
# so an official prompt can come verbatim through prompt_file (mem0's {generated_answer} for {response}).
Slots = dict[str, tuple[str, ...]]
_ANSWER: tuple[Slots, Slots] = ({"context": ("context",), "question": ("question",)}, {"date_line": ("date_line",)})
_LME: tuple[Slots, Slots] = ({"question": ("question",),
                              "gold_answer": ("gold_answer", "correct_answer", "rubric", "explanation"),
                              "response": ("response", "hypothesis", "generated_answer")}, {})
TEMPLATE_SLOTS: dict[str, tuple[Slots, Slots]] = {
    "answer": _ANSWER,
    "orgmem_answer": _ANSWER,
    "orgmem_rubric": ({"question": ("question",), "ground_truth": ("ground_truth", "gold_answer"),
                       "rubric": ("rubric",), "answer": ("answer", "response")},
                      {"category": ("category",), "facet_ids": ("facet_ids",), "json_example": ("json_example",)}),
    "locomo_judge": ({"question": ("question",), "gold_answer": ("gold_answer",),
                      "response": ("response", "generated_answer")}, {}),
    **{f"longmemeval_{kind}": _LME for kind in LONGMEMEVAL_KINDS},
}


def _placeholders(text: str, source: str) -> list[str]:
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise ValueError(f"prompt template {source}: malformed braces ({exc}); write literal braces as "
                         "'{{' and '}}'") from None
    names = [name for _literal, name, _spec, _conv in parsed if name is not None]
    for name in names:
        if name == "" or name.isdigit():
            raise ValueError(f"prompt template {source}: positional placeholder '{{{name}}}' is not supported; "
                             "use named placeholders such as {question}")
    return names


@dataclass(frozen=True)
class PromptTemplate:
    """A prompt filled by ``str.format``; ``sha256`` (of the text only) is part of the LLM cache key.
    A known template name is checked on creation: every required slot used, no unknown placeholder."""

    name: str
    text: str
    source: str = "<string>"
    sha256: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sha256", hashlib.sha256(self.text.encode("utf-8")).hexdigest())
        used = _placeholders(self.text, self.source)
        if self.name not in TEMPLATE_SLOTS:
            return
        known = self._aliases()
        for name in used:
            if name not in known:
                raise ValueError(f"prompt template {self.source} ({self.name}): unknown placeholder '{{{name}}}'; "
                                 f"allowed: {', '.join('{' + n + '}' for n in known)}")
        for slot, aliases in TEMPLATE_SLOTS[self.name][0].items():
            if not any(alias in used for alias in aliases):
                accepted = " or ".join("{" + a + "}" for a in aliases)
                raise ValueError(f"prompt template {self.source} ({self.name}) is missing the required placeholder "
                                 f"'{{{slot}}}' (accepted: {accepted})")

    def _aliases(self) -> dict[str, str]:
        """Every accepted placeholder name -> its slot."""
        slots = TEMPLATE_SLOTS.get(self.name, ({}, {}))
        return {alias: slot for group in slots for slot, aliases in group.items() for alias in aliases}

    def messages(self, **values: Any) -> list[dict[str, str]]:
        """The template filled (``values`` keyed by slot reach every alias) as one user message."""
        filled = dict(values)
        for alias, slot in self._aliases().items():
            if slot in values:
                filled.setdefault(alias, values[slot])
        missing = sorted(set(_placeholders(self.text, self.source)) - filled.keys())
        if missing:
            raise KeyError(f"prompt template {self.source} ({self.name}): no value for {missing}")
        return [{"role": "user", "content": self.text.format(**filled)}]


def load_template(name: str, prompt_file: str | Path | None = None) -> PromptTemplate:
    """The template ``name`` from ``judges/prompts/<name>.txt``, or from ``prompt_file``; its leading
    ``#:`` comment lines and the newlines around it are dropped."""
    if name not in TEMPLATE_SLOTS:
        raise ValueError(f"unknown prompt template {name!r}; known: {sorted(TEMPLATE_SLOTS)}")
    if isinstance(prompt_file, Mapping):
        raise ValueError(f"the {name} prompt is one file, not a mapping")
    path = Path(prompt_file) if prompt_file is not None else PROMPTS_DIR / f"{name}.txt"
    if not path.is_file():
        raise FileNotFoundError(f"prompt template file for {name!r} not found: {path}")
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    while lines and lines[0].lstrip().startswith("#:"):
        lines.pop(0)
    text = "".join(lines).strip("\r\n")
    if not text.strip():
        raise ValueError(f"prompt template {path} ({name}) is empty")
    return PromptTemplate(name=name, text=text, source=str(path))
