"""LLM graders, one module per benchmark's rules: each builds the judge's messages for (question,
answer) and parses the reply into a :class:`JudgeVerdict`; ``model_clients.llm_client`` makes the call.

Shared here: JSON objects found in free text, and echoes of the prompt. An echo repeats the judge's
instructions instead of grading (SmolLM2 echoing the LoCoMo prompt, example labels included, was read
as CORRECT 3/3): it is unparsable whatever label words it holds.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Protocol, runtime_checkable

from judges.templates import PromptTemplate, RequestParams, Wording
from memory_protocol import Question

__all__ = ["Judge", "JudgeVerdict", "detect_echo", "extract_json_objects", "own_parse"]

ECHO_MIN_CHARS = 30  # shortest instruction sentence (or opening) whose repetition marks an echo
_FENCE_RE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\r?\n?(.*?)```", re.DOTALL)
_SENTENCE_END_RE = re.compile(r"(?<=[.?!])\s+|\n+")


@dataclass(frozen=True)
class JudgeVerdict:
    """``score`` in [0, 1], or None for a reply not understood (``parsed`` False): such a grade is
    left out of ``<metric>`` and counts 0 in ``<metric>_paper``."""

    score: float | None
    label: str | None
    parsed: bool
    raw: str
    detail: dict[str, Any] = field(default_factory=dict)

    @staticmethod
    def unparsed(raw: str, reason: str, **detail: Any) -> "JudgeVerdict":
        return JudgeVerdict(score=None, label=None, parsed=False, raw=raw, detail={"error": reason, **detail})

    @staticmethod
    def graded(raw: str, correct: bool, label: str) -> "JudgeVerdict":
        return JudgeVerdict(score=1.0 if correct else 0.0, label=label, parsed=True, raw=raw)


def extract_json_objects(raw: str) -> list[dict[str, Any]]:
    """Every JSON object in ``raw`` once, fenced blocks first; a nested object comes with its outermost."""
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
            key = json.dumps(obj, sort_keys=True, default=str) if isinstance(obj, dict) else None
            if key is not None and key not in seen:
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
    """The template's sentences (placeholders excluded) long enough to mark an echo, and its opening."""
    literals = [literal for literal, *_ in string.Formatter().parse(text)]
    sentences = tuple(normal for literal in literals for piece in _SENTENCE_END_RE.split(literal)
                      if len(normal := _normal(piece)) >= ECHO_MIN_CHARS)
    return sentences, _normal(literals[0]) if literals else ""


def detect_echo(raw: str, template: PromptTemplate) -> str | None:
    """Why ``raw`` echoes ``template`` (a whole instruction sentence, or its opening words), else None."""
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


def own_parse(raw: str, template: PromptTemplate, parse: Callable[[str], JudgeVerdict]) -> JudgeVerdict:
    """Our wording's reading of a reply: an echo of ``template`` is unparsable, else ``parse(raw)``."""
    echo = detect_echo(raw, template)
    return JudgeVerdict.unparsed(raw, echo) if echo else parse(raw)


@runtime_checkable
class Judge(Protocol):
    """Builds a judge request for (question, answer) and parses the judge's reply."""

    dataset: str
    params: RequestParams  # what the wording's script sends (None fields: the judge config's)
    wording: Wording

    def is_graded(self, question: Question) -> bool: ...  # False where the official evaluation does not judge

    def template_hash(self, question: Question) -> str: ...  # names the prompt in the cache key

    def request(self, question: Question, answer: str) -> list[dict[str, str]]: ...

    def parse(self, raw: str, question: Question) -> JudgeVerdict: ...
