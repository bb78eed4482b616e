"""The official answer and judge prompts: pinned upstream texts (:mod:`judges.official.texts`)
filled by our code as ``../shared/official/SOURCE.md`` states each upstream script fills them."""

from __future__ import annotations

import ast
import json
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timezone
from typing import Any

from judges.official.texts import OfficialTexts, SourcedText
from judges.templates import RequestParams, Wording
from memory_protocol import Hit, Question

__all__ = ["AuthorsAnswer", "OrgMemAnswerer", "OrgMemJudgePrompt", "authors_answer", "named_from_positional",
           "official_wording", "orgmem_answerer", "orgmem_judge_prompt"]

ORGMEM_MAX_CONTEXT_CHARS = 40_000  # answerer.py: _MAX_CONTEXT_CHARS
ORGMEM_NO_RECORDS = "(no records retrieved)"  # answerer.py: what an empty context reads
ORGMEM_MAX_ANSWER_CHARS = 6000  # judge.py: answer_text[:6000]
# AIDAChip-Inc/mem-plus-plus eval/llm.py @ 9196597: temperature 0, MEMORY_ANSWER_SEED's default, and
# ANSWER_MAX_TOKENS (sent as max_completion_tokens) to OpenAI models.
AUTHORS_ANSWER_PARAMS = RequestParams(temperature=0.0, max_tokens=512, seed=20260904)
NO_MEMORIES = "(no relevant memories found)"  # eval/harness.py: an empty recall
QUESTION_LINE = "Question: {question}"


def official_wording(*texts: SourcedText, what: str = "", source: str = "official") -> Wording:
    """The upstream file(s) cited, each file read with its sha256, and each text's own sha256."""
    cite = "; ".join(dict.fromkeys(t.pin.pin.cite for t in texts)) + (f" ({what})" if what else "")
    cite += " via templates.json" if {t.via for t in texts} == {"templates"} else ""
    files = tuple(dict.fromkeys((str(t.path), t.sha256) for t in texts))
    return Wording(source, cite, files, tuple((t.pin.key, t.pin.sha256) for t in texts))


def named_from_positional(template: str, names: tuple[str, ...]) -> str:
    """A ``{}``-template with the i-th ``{}`` renamed ``{names[i]}`` and other braces doubled, so
    ``result.format(**values)`` equals ``template.format(*values)``."""
    parts: list[str] = []
    used = 0
    for literal, name, spec, conversion in string.Formatter().parse(template):
        parts.append(literal.replace("{", "{{").replace("}", "}}"))
        if name is None:
            continue
        if name != "" or spec or conversion or used >= len(names):
            raise ValueError(f"expected {len(names)} plain '{{}}' fields, found '{{{name}}}'")
        parts.append("{" + names[used] + "}")
        used += 1
    if used != len(names):
        raise ValueError(f"expected {len(names)} '{{}}' fields, found {used}")
    return "".join(parts)


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


@dataclass(frozen=True)
class FStringTemplate:
    """An f-string's source filled without evaluating it: each field's expression (as ``ast.unparse``
    writes it) is looked up in the values; an unknown field, a conversion or a format spec is a ValueError."""

    source: str

    def _parts(self) -> list[ast.expr]:
        node = ast.parse(self.source, mode="eval").body
        if not isinstance(node, ast.JoinedStr):
            raise ValueError("not an f-string")
        return node.values

    def fields(self) -> list[str]:
        return [ast.unparse(v.value) for v in self._parts() if isinstance(v, ast.FormattedValue)]

    def fill(self, values: Mapping[str, Any]) -> str:
        out: list[str] = []
        for part in self._parts():
            if isinstance(part, ast.Constant):
                out.append(str(part.value))
                continue
            assert isinstance(part, ast.FormattedValue)
            expression = ast.unparse(part.value)
            if part.conversion != -1 or part.format_spec is not None or expression not in values:
                raise ValueError(f"f-string field {{{expression}}} is not one this harness fills")
            out.append(str(values[expression]))
        return "".join(out)


# orgmembench/schemas.py CATEGORY_INFO: the public names its judge prompt shows (an unknown code in lower case)
PUBLIC_CATEGORY = {"C1": "supersession", "C2": "decision_provenance", "C3": "bitemporal", "C4": "audit_replay",
                   "C5": "justification_chain", "C6": "contradiction", "HARD": "multi_hop_lineage",
                   "EMERGENT": "emergent_pattern"}


@dataclass(frozen=True)
class OrgMemJudgePrompt:
    """OrgMemBench's judge: ``_JUDGE_SYSTEM`` and the user prompt ``build_judge_prompt`` returns for a
    question; emergent: category EMERGENT or ``validation_mode == "union"``."""

    system: str
    template: FStringTemplate
    emergent_note: str
    wording: Wording

    def build(self, question: Question, answer_text: str) -> str:
        ground_truth = question.meta.get("ground_truth")
        metadata = question.meta.get("source_metadata") or {}
        emergent = question.category == "EMERGENT" or (isinstance(metadata, Mapping)
                                                       and metadata.get("validation_mode") == "union")
        subpoints = [{"id": f.facet_id, "criterion": f.criterion, "fail_criterion": f.fail_criterion}
                     for f in question.rubric or ()]
        return self.template.fill({
            "question.public_category": PUBLIC_CATEGORY.get(question.category, question.category.lower()),
            "question.text": question.text,
            "extra": self.emergent_note if emergent else "",
            "gt": json.dumps(dict(ground_truth) if isinstance(ground_truth, Mapping) else {}, ensure_ascii=False,
                             indent=2),
            "json.dumps(subpoints, ensure_ascii=False, indent=2)": json.dumps(subpoints, ensure_ascii=False, indent=2),
            "answer_text[:6000]": answer_text[:ORGMEM_MAX_ANSWER_CHARS],
        })


def orgmem_judge_prompt(texts: OfficialTexts) -> OrgMemJudgePrompt:
    system, prompt, note = (texts.get(k) for k in ("orgmem.judge_system", "orgmem.judge_prompt", "orgmem.emergent"))
    template = FStringTemplate(prompt.text)
    template.fill({name: "" for name in template.fields()})  # every field is one we fill
    return OrgMemJudgePrompt(system.text, template, note.text,
                             official_wording(system, prompt, note, what="_JUDGE_SYSTEM, build_judge_prompt"))


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
