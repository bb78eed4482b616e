"""The Mem++ authors' answer request for LoCoMo and LongMemEval_S, filled by our code.

Facts (``AIDAChip-Inc/mem-plus-plus``): ``eval/llm.py`` @ 9196597 holds ``ANSWER_PROMPT_TEMPLATE``
(version ``memory-research-answer-v2``), filled by ``.format(context=..., question=...)`` and sent as
one user message with temperature 0, ``seed`` 20260904 (``MEMORY_ANSWER_SEED``'s default) and 512
completion tokens to OpenAI models. ``eval/harness.py`` @ 9196597 (``_build_context``) numbers the
recalled memories ``1. ...`` one per line, ``(no relevant memories found)`` when there are none; each
memory is a turn as ``eval/adapters/base.py`` renders it, ``[<occurred_at ISO>] <speaker>: <text>``
(dates in UTC, ``?`` when undated). ``eval/tests/test_question_date.py`` @ 26ae878 pins the dated
form: the line ``Current Date: <question date ISO>`` directly above the ``Question:`` line, once,
and no such line for an undated question (LoCoMo's questions carry no date).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timezone
from typing import Any

from judges.official.texts import OfficialTexts
from judges.official.wording import official_wording
from judges.wording import RequestParams, Wording
from memory_protocol.documents import Hit

__all__ = ["AUTHORS_ANSWER_PARAMS", "AUTHORS_ANSWER_SEED", "AuthorsAnswer", "authors_answer", "authors_context",
           "evidence_line", "iso_utc"]

AUTHORS_ANSWER_SEED = 20260904  # eval/llm.py: MEMORY_ANSWER_SEED's default
AUTHORS_MAX_TOKENS = 512  # eval/llm.py: ANSWER_MAX_TOKENS (sent as max_completion_tokens)
AUTHORS_ANSWER_PARAMS = RequestParams(temperature=0.0, max_tokens=AUTHORS_MAX_TOKENS, seed=AUTHORS_ANSWER_SEED)
NO_MEMORIES = "(no relevant memories found)"  # eval/harness.py: an empty recall
QUESTION_LINE = "Question: {question}"


def iso_utc(value: date | datetime | None) -> str:
    """``datetime.isoformat()`` of the moment in UTC (their adapters attach UTC to the dataset's
    naive dates), ``?`` when there is none."""
    if value is None:
        return "?"
    if not isinstance(value, datetime):
        value = datetime(value.year, value.month, value.day)
    return (value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value).isoformat()


def _body(hit: Hit) -> str:
    """A stored turn's own text: our loaders lead it with ``[<stamp>] <speaker>: ``, dropped here."""
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
    lines = [evidence_line(rank, hit) for rank, hit in enumerate(hits, start=1)]
    return "\n".join(lines) if lines else NO_MEMORIES


@dataclass(frozen=True)
class AuthorsAnswer:
    """The authors' answer request: their template, their evidence lines, their date line."""

    template: str
    wording: Wording
    params: RequestParams = AUTHORS_ANSWER_PARAMS

    def prompt(self, question: str, context: str, when: date | datetime | None = None) -> str:
        template = self.template
        if when is not None:
            template = template.replace(QUESTION_LINE, f"Current Date: {iso_utc(when)}\n{QUESTION_LINE}", 1)
        return template.format(context=context, question=question)

    def messages(self, question: Any, context: str, hits: Sequence[Hit] | None) -> list[dict[str, str]]:
        shown = authors_context(hits) if hits is not None else context
        when = question.meta.get("question_date")
        return [{"role": "user", "content": self.prompt(question.text, shown, when)}]


def authors_answer(texts: OfficialTexts) -> AuthorsAnswer:
    text = texts.get("authors.answer")
    if text.text.count(QUESTION_LINE) != 1:
        raise ValueError(f"{text.cite}: expected one '{QUESTION_LINE}' line")
    return AuthorsAnswer(text.text, official_wording(text, what="ANSWER_PROMPT_TEMPLATE, memory-research-answer-v2",
                                                     source="authors"))
