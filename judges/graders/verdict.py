"""A parsed judge reply, JSON extraction from free text, and echo detection.

An *echo* is a reply that repeats the judge's instructions instead of grading (small local models
do this: SmolLM2 echoing the LoCoMo prompt, example labels included, was read as CORRECT 3/3). Such
a reply is unparsable whatever label words it contains. :func:`detect_echo` flags a reply that
contains a whole instruction sentence of the template (30 characters or more, compared in lower
case with white space collapsed) or that begins with the template's own opening words.
"""

from __future__ import annotations

import json
import re
import string
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from judges.graders.templates import PromptTemplate

__all__ = ["ECHO_MIN_CHARS", "JudgeVerdict", "detect_echo", "extract_json_objects", "instruction_sentences"]

ECHO_MIN_CHARS = 30  # shortest instruction sentence (or opening) whose repetition marks an echo


@dataclass(frozen=True)
class JudgeVerdict:
    """One parsed judge reply. ``score`` is in [0, 1], or None when the reply was not understood
    (``parsed`` False). Such a grade is left out of ``<metric>`` and counts 0 in ``<metric>_paper``."""

    score: float | None
    label: str | None
    parsed: bool
    raw: str
    detail: dict[str, Any] = field(default_factory=dict)

    @staticmethod
    def unparsed(raw: str, reason: str, **detail: Any) -> "JudgeVerdict":
        return JudgeVerdict(score=None, label=None, parsed=False, raw=raw, detail={"error": reason, **detail})


_FENCE_RE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\r?\n?(.*?)```", re.DOTALL)
_SENTENCE_END_RE = re.compile(r"(?<=[.?!])\s+|\n+")


def extract_json_objects(raw: str) -> list[dict[str, Any]]:
    """Every JSON object found in ``raw``, in order: fenced blocks first, then objects in the text.

    Tolerates prose around the object and ```json fences```. Nested objects are returned once
    (as part of their outermost object).
    """
    found: list[dict[str, Any]] = []
    seen: set[str] = set()
    decoder = json.JSONDecoder()

    def scan(text: str) -> None:
        i = text.find("{")
        while i != -1:
            try:
                obj, end = decoder.raw_decode(text, i)
            except json.JSONDecodeError:
                i = text.find("{", i + 1)
                continue
            if isinstance(obj, dict):
                key = json.dumps(obj, sort_keys=True, default=str)
                if key not in seen:
                    seen.add(key)
                    found.append(obj)
            i = text.find("{", end)

    for block in _FENCE_RE.findall(raw):
        scan(block)
    scan(raw)
    return found


def _normal(text: str) -> str:
    return " ".join(text.casefold().split())


@lru_cache(maxsize=64)
def _instruction_parts(text: str) -> tuple[tuple[str, ...], str]:
    literals = [literal for literal, *_ in string.Formatter().parse(text)]
    sentences = []
    for literal in literals:
        for piece in _SENTENCE_END_RE.split(literal):
            normal = _normal(piece)
            if len(normal) >= ECHO_MIN_CHARS:
                sentences.append(normal)
    opening = _normal(literals[0]) if literals else ""
    return tuple(sentences), opening


def instruction_sentences(template: PromptTemplate) -> tuple[str, ...]:
    """The template's own sentences (placeholders excluded) long enough to mark an echo."""
    return _instruction_parts(template.text)[0]


def detect_echo(raw: str, template: PromptTemplate) -> str | None:
    """Why ``raw`` is an echo of ``template``'s instructions, or None when it is not one."""
    reply = _normal(raw)
    if not reply:
        return None
    sentences, opening = _instruction_parts(template.text)
    for sentence in sentences:
        if sentence in reply:
            return f"echo of the judge prompt: the reply repeats {sentence[:60]!r}"
    head = reply[: len(opening)]
    if len(head) >= ECHO_MIN_CHARS and opening.startswith(head):
        return "echo of the judge prompt: the reply repeats its opening words"
    return None
