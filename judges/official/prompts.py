"""The official answer requests (OrgMemBench's answerer, the Mem++ authors'): pinned upstream texts
(:mod:`judges.official.texts`) filled by our code as ``../shared/official/SOURCE.md`` states each
upstream script fills them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timezone
from typing import Any

from judges.official.texts import OfficialTexts, official_wording
from judges.templates import RequestParams, Wording
from memory_protocol import Hit

__all__ = ["AuthorsAnswer", "OrgMemAnswerer", "authors_answer", "orgmem_answerer"]

ORGMEM_MAX_CONTEXT_CHARS = 40_000  # answerer.py: _MAX_CONTEXT_CHARS
ORGMEM_NO_RECORDS = "(no records retrieved)"  # answerer.py: what an empty context reads
# AIDAChip-Inc/mem-plus-plus eval/llm.py @ 9196597: temperature 0, MEMORY_ANSWER_SEED's default, and
# ANSWER_MAX_TOKENS (sent as max_completion_tokens) to OpenAI models.
AUTHORS_ANSWER_PARAMS = RequestParams(temperature=0.0, max_tokens=512, seed=20260904)
NO_MEMORIES = "(no relevant memories found)"  # eval/harness.py: an empty recall
QUESTION_LINE = "Question: {question}"


@dataclass(frozen=True)
class OrgMemAnswerer:
    """OrgMemBench's ``basic_answer``: the context stripped, a stand-in line when empty, cut at
    40,000 characters, ``BASIC_ANSWER_PROMPT.format(context=..., question=...)`` as one user message."""

    template: str
    wording: Wording
    params: RequestParams = RequestParams()  # the paper's answerer settings (the run's config)

    def messages(self, question: Any, context: str, hits: Any = None) -> list[dict[str, str]]:
        shown = (context or "").strip() or ORGMEM_NO_RECORDS
        return [{"role": "user", "content": self.template.format(context=shown[:ORGMEM_MAX_CONTEXT_CHARS],
                                                                 question=question.text)}]


def orgmem_answerer(texts: OfficialTexts) -> OrgMemAnswerer:
    text = texts.get("orgmem.answer")
    return OrgMemAnswerer(text.text, official_wording(text, what="BASIC_ANSWER_PROMPT"))


# The Mem++ authors' answer request (AIDAChip-Inc/mem-plus-plus @ 9196597): eval/harness.py
# _build_context numbers the memories "1. ..." one per line; eval/adapters/base.py renders a turn
# "[<occurred_at ISO, UTC>] <speaker>: <text>" ("?" undated); eval/tests/test_question_date.py
# (@ 26ae878) puts "Current Date: <ISO>" right above the Question line, none for an undated question.


def iso_utc(value: date | datetime | None) -> str:
    """``isoformat()`` of the moment in UTC (their adapters attach UTC to naive dates), ``?`` for none."""
    if value is None:
        return "?"
    if not isinstance(value, datetime):
        value = datetime(value.year, value.month, value.day)
    return (value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value).isoformat()


def _body(hit: Hit) -> str:
    """A stored turn's own text: the ``[<stamp>] <speaker>: `` our loaders lead it with dropped."""
    text = hit.text.strip()
    if hit.evidence == "as_stored" and text.startswith("[") and "] " in text:
        rest = text.split("] ", 1)[1]
        speaker = f"{hit.author}: " if hit.author else ""
        return rest[len(speaker):] if speaker and rest.startswith(speaker) else rest
    return text


def evidence_line(rank: int, hit: Hit) -> str:
    """``<rank>. [<ISO date>] <speaker>: <text>``; a chunk (several turns) is shown as it is."""
    if hit.sources:
        return f"{rank}. {hit.text.strip()}"
    return f"{rank}. [{iso_utc(hit.date)}] {hit.author or '?'}: {_body(hit)}"


def authors_context(hits: Sequence[Hit]) -> str:
    return "\n".join(evidence_line(rank, hit) for rank, hit in enumerate(hits, start=1)) or NO_MEMORIES


@dataclass(frozen=True)
class AuthorsAnswer:
    """``ANSWER_PROMPT_TEMPLATE.format(context=..., question=...)`` as one user message."""

    template: str
    wording: Wording
    params: RequestParams = AUTHORS_ANSWER_PARAMS

    def messages(self, question: Any, context: str, hits: Sequence[Hit] | None) -> list[dict[str, str]]:
        template, when = self.template, question.meta.get("question_date")
        if when is not None:
            template = template.replace(QUESTION_LINE, f"Current Date: {iso_utc(when)}\n{QUESTION_LINE}", 1)
        shown = authors_context(hits) if hits is not None else context
        return [{"role": "user", "content": template.format(context=shown, question=question.text)}]


def authors_answer(texts: OfficialTexts) -> AuthorsAnswer:
    text = texts.get("authors.answer")
    if text.text.count(QUESTION_LINE) != 1:
        raise ValueError(f"{text.cite}: expected one '{QUESTION_LINE}' line")
    return AuthorsAnswer(text.text, official_wording(text, what="ANSWER_PROMPT_TEMPLATE, memory-research-answer-v2",
                                                     source="authors"))
