"""LongMemEval yes/no judge, by its evaluation (``xiaowu0162/LongMemEval`` ``src/evaluation/evaluate_qa.py``
``get_anscheck_prompt`` and main loop; read, not copied).

One prompt per question kind (abstention: any question id with ``_abs``), one user message at
temperature 0 with ``max_tokens=10``; the grade is ``'yes' in reply.strip().lower()`` (a substring
test). Official wording (the paper's protocol): the upstream templates, their three ``{}`` fields
filled in order with question, answer, response, no seed, every reply a grade. Our wording (only
when the upstream file is not found): an empty reply or an echo (an instruction sentence, "yes or
no") is unparsable. The paper reports LongMemEval_S over the non-abstention questions (``harness.qa``).
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from judges.graders import JudgeVerdict, own_parse
from judges.official.texts import OfficialTexts, official_wording
from judges.templates import LONGMEMEVAL_KINDS, PromptTemplate, RequestParams, Wording, load_template
from memory_protocol import Question

__all__ = ["KIND_BY_QUESTION_TYPE", "LongMemEvalJudge", "load_longmemeval_templates", "longmemeval_kind",
           "parse_yes_no"]

MAX_TOKENS = 10  # evaluate_qa.py: max_tokens=10
OFFICIAL_PARAMS = RequestParams(temperature=0.0, max_tokens=MAX_TOKENS, omit=("seed",))  # n=1 is the API's default
KIND_BY_QUESTION_TYPE: dict[str, str] = {
    "single-session-user": "default",
    "single-session-assistant": "default",
    "multi-session": "default",
    "temporal-reasoning": "temporal",
    "knowledge-update": "knowledge_update",
    "single-session-preference": "preference",
}
_YES_OR_NO_RE = re.compile(r"\byes\s*(?:or|/)\s*no\b", re.IGNORECASE)


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


def longmemeval_kind(question_type: str, abstention: bool) -> str:
    if abstention:
        return "abstention"
    try:
        return KIND_BY_QUESTION_TYPE[question_type]
    except KeyError:
        raise ValueError(f"unknown LongMemEval question_type {question_type!r}; "
                         f"expected one of {sorted(KIND_BY_QUESTION_TYPE)}") from None


def _yes(raw: str) -> JudgeVerdict:
    correct = "yes" in raw.strip().lower()
    return JudgeVerdict.graded(raw, correct, "yes" if correct else "no")


def parse_yes_no(raw: str) -> JudgeVerdict:
    """The official substring rule; unparsable when the reply is empty or repeats "yes or no"."""
    reply = raw.strip().lower()
    if not reply:
        return JudgeVerdict.unparsed(raw, "empty reply")
    if _YES_OR_NO_RE.search(reply):
        return JudgeVerdict.unparsed(raw, "echo of the judge prompt: the reply repeats 'yes or no'")
    return _yes(raw)


def load_longmemeval_templates(prompt_file: str | Path | Mapping[str, str | Path] | None = None) -> dict[str, PromptTemplate]:
    """The five templates; ``prompt_file`` (a mapping kind -> file, or a folder of
    ``longmemeval_<kind>.txt`` files) replaces the built-in prompt of the kinds it gives."""
    overrides: dict[str, Path] = {}
    if isinstance(prompt_file, Mapping):
        unknown = sorted(set(prompt_file) - set(LONGMEMEVAL_KINDS))
        if unknown:
            raise ValueError(f"unknown LongMemEval prompt kinds {unknown}; expected some of {list(LONGMEMEVAL_KINDS)}")
        overrides = {kind: Path(path) for kind, path in prompt_file.items()}
    elif prompt_file is not None:
        folder = Path(prompt_file)
        if not folder.is_dir():
            raise ValueError(f"LongMemEval prompt_file {folder} must be a directory of longmemeval_<kind>.txt "
                             f"files (kinds: {', '.join(LONGMEMEVAL_KINDS)}) or a mapping kind -> file")
        overrides = {k: folder / f"longmemeval_{k}.txt" for k in LONGMEMEVAL_KINDS
                     if (folder / f"longmemeval_{k}.txt").is_file()}
        if not overrides:
            raise ValueError(f"no longmemeval_<kind>.txt file in {folder}")
    return {kind: load_template(f"longmemeval_{kind}", overrides.get(kind)) for kind in LONGMEMEVAL_KINDS}


@dataclass(frozen=True)
class LongMemEvalJudge:
    """Yes/no with the prompt of the question's kind (``question.category`` is its question_type,
    ``question.meta['abstention']`` marks an abstention question)."""

    templates: Mapping[str, PromptTemplate] = field(default_factory=load_longmemeval_templates)
    dataset: str = "longmemeval_s"
    params: RequestParams = RequestParams(max_tokens=MAX_TOKENS)
    wording: Wording = Wording("own", "judges/prompts/longmemeval_<kind>.txt")

    def __post_init__(self) -> None:
        missing = [k for k in LONGMEMEVAL_KINDS if k not in self.templates]
        if missing:
            raise ValueError(f"LongMemEvalJudge needs a template for every kind; missing {missing}")

    @classmethod
    def own(cls, prompt_file: str | Path | Mapping[str, str | Path] | None = None) -> "LongMemEvalJudge":
        """Our wording, or the user's ``judge.prompt_file`` (see :func:`load_longmemeval_templates`)."""
        return cls(load_longmemeval_templates(prompt_file))

    @classmethod
    def official(cls, texts: OfficialTexts, dataset: str = "longmemeval_s") -> "LongMemEvalJudge":
        # get_anscheck_prompt fills its three {} fields in order with question, answer, response
        read = {kind: texts.get(f"lme.{kind}") for kind in LONGMEMEVAL_KINDS}
        wording = official_wording(*read.values(), what="get_anscheck_prompt")
        templates = {kind: PromptTemplate(f"longmemeval_{kind}", named_from_positional(
            text.text, ("question", "gold_answer", "response")), wording.cite) for kind, text in read.items()}
        return cls(templates, dataset, OFFICIAL_PARAMS, wording)

    @staticmethod
    def kind_for(question: Question) -> str:
        return longmemeval_kind(question.category, bool(question.meta.get("abstention", False)))

    def template_for(self, question: Question) -> PromptTemplate:
        kind = self.kind_for(question)
        template = self.templates[kind]
        if template.name != f"longmemeval_{kind}":
            raise ValueError(f"template {template.name!r} given for LongMemEval kind {kind!r}")
        return template

    def template_hash(self, question: Question) -> str:
        return self.template_for(question).sha256

    def is_graded(self, question: Question) -> bool:
        return True

    def request(self, question: Question, answer: str) -> list[dict[str, str]]:
        """The gold answer is the rubric of a preference question, the explanation of an abstention question."""
        return self.template_for(question).messages(question=question.text, gold_answer=str(question.answer),
                                                    response=answer)

    def parse(self, raw: str, question: Question) -> JudgeVerdict:
        if self.wording.source == "official":
            return _yes(raw)
        return own_parse(raw, self.template_for(question), parse_yes_no)
