"""The official pieces of the paper's protocol: the upstream texts, filled by our own code.

The texts come from :class:`judges.official.texts.OfficialTexts` (an upstream file or a templates
file, each text checked against its pin); how each one is filled is written here from the facts in
``../shared/official/SOURCE.md``:

- LoCoMo judge: mem0's ``ACCURACY_PROMPT`` filled by ``str.format`` with ``question``,
  ``gold_answer``, ``generated_answer``.
- LongMemEval judge: the template ``get_anscheck_prompt`` picks by task and abstention, filled by
  ``template.format(question, answer, response)`` (positional).
- OrgMemBench answerer: the context stripped, ``(no records retrieved)`` when empty, cut at 40,000
  characters, ``BASIC_ANSWER_PROMPT.format(context=..., question=...)``.
- OrgMemBench judge: ``_JUDGE_SYSTEM``, and the f-string of ``build_judge_prompt`` whose fields we
  fill (the ground truth as ``json.dumps(..., ensure_ascii=False, indent=2)``, the subpoints' id /
  criterion / fail criterion, the answer cut at 6,000 characters, the EMERGENT note).
- The authors' answer prompt (``eval/llm.py``): ``ANSWER_PROMPT_TEMPLATE.format(context=...,
  question=...)``, with the question's date line (``judges.official.authors``).
- mem0's answer prompts (``ANSWER_PROMPT``, ``ANSWER_PROMPT_ZEP``, ``ANSWER_PROMPT_GRAPH``), filled
  as their jinja ``Template`` fills ``{{name}}`` fields (``judges.official.mem0_answer``).
"""

from __future__ import annotations

import ast
import json
import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from judges.official.texts import OfficialTexts, SourcedText
from judges.wording import RequestParams, Wording

__all__ = [
    "ORGMEM_MAX_CONTEXT_CHARS", "ORGMEM_NO_RECORDS", "FStringTemplate", "OrgMemAnswerer", "OrgMemJudgePrompt",
    "mem0_accuracy_prompt", "named_from_positional", "official_wording", "orgmem_answerer", "orgmem_judge_prompt",
]

ORGMEM_MAX_CONTEXT_CHARS = 40_000  # answerer.py: _MAX_CONTEXT_CHARS
ORGMEM_NO_RECORDS = "(no records retrieved)"  # answerer.py: what an empty context reads
ORGMEM_MAX_ANSWER_CHARS = 6000  # judge.py: answer_text[:6000]


def official_wording(*texts: SourcedText, what: str = "", source: str = "official") -> Wording:
    """Where the texts were read: the upstream file(s) cited, each file read with its sha256, and
    each text's own sha256."""
    cites = dict.fromkeys(t.pin.pin.cite for t in texts)
    via = {t.via for t in texts}
    cite = "; ".join(cites) + (f" ({what})" if what else "") + (" via templates.json" if via == {"templates"} else "")
    files = tuple(dict.fromkeys((str(t.path), t.sha256) for t in texts))
    return Wording(source, cite, files, tuple((t.pin.key, t.pin.sha256) for t in texts))


def mem0_accuracy_prompt(texts: OfficialTexts) -> tuple[str, Wording]:
    """mem0's LoCoMo judge prompt, with its named fields question, gold_answer, generated_answer."""
    text = texts.get("mem0.accuracy")
    return text.text, official_wording(text, what="ACCURACY_PROMPT")


def named_from_positional(template: str, names: tuple[str, ...]) -> str:
    """A ``{}``-template as one with named fields: the i-th ``{}`` becomes ``{names[i]}``, other
    braces doubled, so ``result.format(**values)`` equals ``template.format(*values)`` (ValueError
    when the template has not exactly ``len(names)`` automatic fields)."""
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
    """OrgMemBench's neutral answerer: ``prompt(question, retrieved_context)`` is what its
    ``basic_answer`` sends (context stripped, a stand-in line when empty, cut to 40,000 characters)."""

    template: str
    wording: Wording
    max_context_chars: int = ORGMEM_MAX_CONTEXT_CHARS
    params: RequestParams = RequestParams()  # the paper's answerer settings (the run's config)

    def prompt(self, question: str, retrieved_context: str) -> str:
        context = (retrieved_context or "").strip() or ORGMEM_NO_RECORDS
        return self.template.format(context=context[: self.max_context_chars], question=question)

    def messages(self, question: Any, context: str, hits: Any = None) -> list[dict[str, str]]:
        return [{"role": "user", "content": self.prompt(question.text, context)}]


def orgmem_answerer(texts: OfficialTexts) -> OrgMemAnswerer:
    text = texts.get("orgmem.answer")
    return OrgMemAnswerer(text.text, official_wording(text, what="BASIC_ANSWER_PROMPT"))


@dataclass(frozen=True)
class FStringTemplate:
    """An f-string's source, filled without evaluating it: each field's expression (as written,
    normalised by ``ast.unparse``) is looked up in the values given; a field we do not know, a
    conversion or a format spec is refused (ValueError)."""

    source: str

    def fields(self) -> list[str]:
        return [ast.unparse(v.value) for v in self._node().values if isinstance(v, ast.FormattedValue)]

    def _node(self) -> ast.JoinedStr:
        node = ast.parse(self.source, mode="eval").body
        if not isinstance(node, ast.JoinedStr):
            raise ValueError("not an f-string")
        return node

    def fill(self, values: Mapping[str, Any]) -> str:
        out: list[str] = []
        for part in self._node().values:
            if isinstance(part, ast.Constant):
                out.append(str(part.value))
                continue
            assert isinstance(part, ast.FormattedValue)
            expression = ast.unparse(part.value)
            if part.conversion != -1 or part.format_spec is not None or expression not in values:
                raise ValueError(f"f-string field {{{expression}}} is not one this harness fills")
            out.append(str(values[expression]))
        return "".join(out)


def _subpoints(question: Any) -> list[dict[str, Any]]:
    """judge.py's subpoints: id (``sub<i>`` when absent), criterion, fail criterion (or ``fail_if``)."""
    return [{"id": sp.get("id", f"sub{i + 1}"), "criterion": sp.get("criterion", ""),
             "fail_criterion": sp.get("fail_criterion") or sp.get("fail_if", "")}
            for i, sp in enumerate(question.rubric_subpoints)]


@dataclass(frozen=True)
class OrgMemJudgePrompt:
    """OrgMemBench's rubric judge: its system message and ``build(question, answer_text)``, the user
    prompt ``build_judge_prompt`` returns for a question with ``public_category``, ``text``,
    ``is_emergent``, ``ground_truth_answer`` and ``rubric_subpoints``."""

    system: str
    template: FStringTemplate
    emergent_note: str
    wording: Wording

    def build(self, question: Any, answer_text: str) -> str:
        values = {
            "question.public_category": question.public_category,
            "question.text": question.text,
            "extra": self.emergent_note if question.is_emergent else "",
            "gt": json.dumps(question.ground_truth_answer, ensure_ascii=False, indent=2),
            "json.dumps(subpoints, ensure_ascii=False, indent=2)": json.dumps(_subpoints(question), ensure_ascii=False,
                                                                              indent=2),
            "answer_text[:6000]": answer_text[:ORGMEM_MAX_ANSWER_CHARS],
        }
        return self.template.fill(values)


def orgmem_judge_prompt(texts: OfficialTexts) -> OrgMemJudgePrompt:
    system, prompt, note = (texts.get(k) for k in ("orgmem.judge_system", "orgmem.judge_prompt", "orgmem.emergent"))
    template = FStringTemplate(prompt.text)
    template.fill({name: "" for name in template.fields()})  # every field is one we fill
    return OrgMemJudgePrompt(system.text, template, note.text,
                             official_wording(system, prompt, note, what="_JUDGE_SYSTEM, build_judge_prompt"))


def longmemeval_texts(texts: OfficialTexts) -> tuple[dict[str, str], Wording]:
    """The five judge templates by prompt kind, with named fields question / gold_answer / response."""
    kinds = ("default", "temporal", "knowledge_update", "preference", "abstention")
    read = {kind: texts.get(f"lme.{kind}") for kind in kinds}
    named = {kind: named_from_positional(t.text, ("question", "gold_answer", "response")) for kind, t in read.items()}
    return named, official_wording(*read.values(), what="get_anscheck_prompt")

