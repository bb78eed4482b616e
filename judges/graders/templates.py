"""Prompt templates of the answerer and the judges: loading, placeholder checks, rendering.

The prompts are text files in ``judges/prompts/``, written in our own words but applying the
official rules (see each grader module). Leading lines starting with ``#:`` are comments (they
document the placeholders) and are removed; newlines around the text are stripped; the rest is used
verbatim and filled in with :meth:`str.format` (literal braces doubled). Each template name has
required placeholder slots, some accepting more than one name (e.g. mem0's ``{generated_answer}``
for ``{response}``), so an official prompt can be supplied verbatim through ``prompt_file``.
Every rendered prompt is sent as a single user message, as the official judges do.
"""

from __future__ import annotations

import hashlib
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["LONGMEMEVAL_KINDS", "PROMPTS_DIR", "TEMPLATE_SLOTS", "PromptTemplate", "TemplateSlots", "load_template"]

PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"
COMMENT_PREFIX = "#:"
LONGMEMEVAL_KINDS: tuple[str, ...] = ("default", "temporal", "knowledge_update", "preference", "abstention")


@dataclass(frozen=True)
class TemplateSlots:
    """Placeholders of one template name.

    ``required`` maps each slot (its canonical name first) to the placeholder names that fill it;
    a template must use at least one name of every required slot. ``optional`` slots may be used.
    """

    required: Mapping[str, tuple[str, ...]]
    optional: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def names(self) -> dict[str, str]:
        """Every accepted placeholder name -> its slot."""
        out: dict[str, str] = {}
        for slots in (self.required, self.optional):
            for slot, aliases in slots.items():
                for alias in aliases:
                    out[alias] = slot
        return out


_LME_SLOTS = {
    "question": ("question",),
    "gold_answer": ("gold_answer", "correct_answer", "rubric", "explanation"),
    "response": ("response", "hypothesis", "generated_answer"),
}
_ANSWER_SLOTS = TemplateSlots(
    required={"context": ("context",), "question": ("question",)},
    optional={"date_line": ("date_line",)},
)
TEMPLATE_SLOTS: dict[str, TemplateSlots] = {
    "answer": _ANSWER_SLOTS,
    "orgmem_answer": _ANSWER_SLOTS,
    "orgmem_rubric": TemplateSlots(
        required={
            "question": ("question",),
            "ground_truth": ("ground_truth", "gold_answer"),
            "rubric": ("rubric",),
            "answer": ("answer", "response"),
        },
        optional={"category": ("category",), "facet_ids": ("facet_ids",), "json_example": ("json_example",)},
    ),
    "locomo_judge": TemplateSlots(
        required={
            "question": ("question",),
            "gold_answer": ("gold_answer",),
            "response": ("response", "generated_answer"),
        }
    ),
    **{f"longmemeval_{kind}": TemplateSlots(required=_LME_SLOTS) for kind in LONGMEMEVAL_KINDS},
}


def _strip_comments(text: str) -> str:
    """Drop the leading ``#:`` comment lines, then newlines around the text."""
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines) and lines[i].lstrip().startswith(COMMENT_PREFIX):
        i += 1
    return "".join(lines[i:]).strip("\r\n")


def _placeholders(text: str, source: str) -> list[str]:
    """Field names used in ``text`` (ValueError for malformed braces or positional fields)."""
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise ValueError(f"prompt template {source}: malformed braces ({exc}); write literal braces as "
                         "'{{' and '}}'") from None
    names = []
    for _literal, name, _spec, _conv in parsed:
        if name is None:
            continue
        if name == "" or name.isdigit():
            raise ValueError(f"prompt template {source}: positional placeholder '{{{name}}}' is not supported; "
                             "use named placeholders such as {question}")
        names.append(name)
    return names


@dataclass(frozen=True)
class PromptTemplate:
    """A judge prompt. ``sha256`` is the hash of ``text`` (part of the LLM cache key).

    ``source`` says where the text came from (a file path); it is not part of the hash. For a name
    in :data:`TEMPLATE_SLOTS` the text is checked on creation: every required slot must be used
    and no unknown placeholder may appear (ValueError naming the placeholder and the source).
    """

    name: str
    text: str
    source: str = "<string>"
    sha256: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sha256", hashlib.sha256(self.text.encode("utf-8")).hexdigest())
        used = _placeholders(self.text, self.source)
        slots = TEMPLATE_SLOTS.get(self.name)
        if slots is None:
            return
        known = slots.names()
        for name in used:
            if name not in known:
                raise ValueError(
                    f"prompt template {self.source} ({self.name}): unknown placeholder '{{{name}}}'; "
                    f"allowed: {', '.join('{' + n + '}' for n in known)}"
                )
        for slot, aliases in slots.required.items():
            if not any(alias in used for alias in aliases):
                accepted = " or ".join("{" + a + "}" for a in aliases)
                raise ValueError(
                    f"prompt template {self.source} ({self.name}) is missing the required placeholder "
                    f"'{{{slot}}}' (accepted: {accepted})"
                )

    @property
    def placeholders(self) -> frozenset[str]:
        return frozenset(_placeholders(self.text, self.source))

    def render(self, **values: Any) -> str:
        """Fill the template; ``values`` are keyed by slot and reach every alias of that slot."""
        slots = TEMPLATE_SLOTS.get(self.name)
        filled: dict[str, Any] = dict(values)
        if slots is not None:
            for slot_map in (slots.required, slots.optional):
                for slot, aliases in slot_map.items():
                    if slot in values:
                        for alias in aliases:
                            filled.setdefault(alias, values[slot])
        missing = sorted(self.placeholders - filled.keys())
        if missing:
            raise KeyError(f"prompt template {self.source} ({self.name}): no value for {missing}")
        return self.text.format(**filled)

    def messages(self, **values: Any) -> list[dict[str, str]]:
        """The rendered prompt as one user message."""
        return [{"role": "user", "content": self.render(**values)}]


def load_template(name: str, prompt_file: str | Path | None = None) -> PromptTemplate:
    """The template ``name`` from ``judges/prompts/<name>.txt``, or from ``prompt_file`` if given.

    ``prompt_file`` lets a user supply another wording (e.g. an official prompt verbatim, with
    named placeholders). A file that lacks a required placeholder raises ValueError naming the
    placeholder and the file.
    """
    if name not in TEMPLATE_SLOTS:
        raise ValueError(f"unknown prompt template {name!r}; known: {sorted(TEMPLATE_SLOTS)}")
    path = Path(prompt_file) if prompt_file is not None else PROMPTS_DIR / f"{name}.txt"
    if not path.is_file():
        raise FileNotFoundError(f"prompt template file for {name!r} not found: {path}")
    text = _strip_comments(path.read_text(encoding="utf-8"))
    if not text.strip():
        raise ValueError(f"prompt template {path} ({name}) is empty")
    return PromptTemplate(name=name, text=text, source=str(path))
