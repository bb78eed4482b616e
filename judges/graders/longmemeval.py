"""LongMemEval yes/no judge, by the rules of its official evaluation.

Source (read, not copied): ``xiaowu0162/LongMemEval`` ``src/evaluation/evaluate_qa.py``
(``get_anscheck_prompt`` and its main loop). The rules it states:

* one prompt per question kind, sent as one user message with ``temperature=0``, ``max_tokens=10``,
  ``n=1`` (gpt-4o-mini-2024-07-18 as the metric model);
  ``default`` (single-session-user, single-session-assistant, multi-session): yes if the response
  contains the correct answer, is equivalent to it or gives all intermediate steps; no if it holds
  only a subset of the required information. ``temporal`` (temporal-reasoning): the same, and
  off-by-one errors in counts of days/weeks/months are not penalised. ``knowledge_update``: earlier
  information beside the updated answer is fine if the updated answer is the required one.
  ``preference`` (single-session-preference): the gold answer is a rubric; the response need not
  cover every point, it must recall and use the user's information correctly. ``abstention``
  (question id contains ``_abs``, any type): yes if the response identifies the question as
  unanswerable;
* the reply is stripped and the grade is correct iff ``'yes'`` occurs in its lower-cased text
  (a substring test: any other reply is a no).

With the official wording (:meth:`LongMemEvalJudge.official`, the paper's protocol) each prompt is
the upstream template of the question's kind (read as data, its three ``{}`` fields filled in order
with question, answer and response, as ``get_anscheck_prompt`` fills them), the request carries
temperature 0 and max_tokens 10 and no seed, the model is the dated snapshot the script names
(:data:`LONGMEMEVAL_JUDGE_MODEL`), and the grade is the official substring test alone (:func:`parse_official_yes`): every reply is a grade, an empty one a no.

With our own wording (used only when the upstream file is not found), an empty reply, or an echo of the prompt (it repeats an instruction sentence, or the phrase
"yes or no"), is unparsable: left out of ``accuracy``, counted 0 in ``accuracy_paper``.
The paper reports LongMemEval_S over the non-abstention questions; see ``harness.qa``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

from judges.graders.templates import LONGMEMEVAL_KINDS, PromptTemplate, load_template
from judges.graders.verdict import JudgeVerdict, detect_echo
from judges.official.texts import OfficialTexts
from judges.official.wording import longmemeval_texts
from judges.wording import RequestParams, Wording
from memory_protocol import Question

__all__ = [
    "KIND_BY_QUESTION_TYPE",
    "LONGMEMEVAL_JUDGE_MAX_TOKENS",
    "LONGMEMEVAL_JUDGE_MODEL",
    "LongMemEvalJudge",
    "load_longmemeval_templates",
    "longmemeval_kind",
    "longmemeval_request",
    "parse_official_yes",
    "parse_yes_no",
]

LONGMEMEVAL_JUDGE_MAX_TOKENS = 10  # evaluate_qa.py: max_tokens=10
# evaluate_qa.py's model table maps its metric model gpt-4o-mini to this dated snapshot.
LONGMEMEVAL_JUDGE_MODEL = "gpt-4o-mini-2024-07-18"
# evaluate_qa.py's request: temperature 0, max_tokens 10, no seed (n=1 is the API's default)
OFFICIAL_PARAMS = RequestParams(temperature=0.0, max_tokens=LONGMEMEVAL_JUDGE_MAX_TOKENS, omit=("seed",))
KIND_BY_QUESTION_TYPE: dict[str, str] = {
    "single-session-user": "default",
    "single-session-assistant": "default",
    "multi-session": "default",
    "temporal-reasoning": "temporal",
    "knowledge-update": "knowledge_update",
    "single-session-preference": "preference",
}
TemplateSource = Union[Mapping[str, PromptTemplate], Callable[[str], PromptTemplate]]
_YES_OR_NO_RE = re.compile(r"\byes\s*(?:or|/)\s*no\b", re.IGNORECASE)


def longmemeval_kind(question_type: str, abstention: bool) -> str:
    """The prompt kind for a LongMemEval question type; every abstention question -> 'abstention'."""
    if abstention:
        return "abstention"
    try:
        return KIND_BY_QUESTION_TYPE[question_type]
    except KeyError:
        raise ValueError(f"unknown LongMemEval question_type {question_type!r}; "
                         f"expected one of {sorted(KIND_BY_QUESTION_TYPE)}") from None


def _template_for_kind(source: TemplateSource, kind: str) -> PromptTemplate:
    template = source[kind] if isinstance(source, Mapping) else source(kind)
    if template.name != f"longmemeval_{kind}":
        raise ValueError(f"template {template.name!r} given for LongMemEval kind {kind!r}")
    return template


def longmemeval_request(question_type: str, question_text: str, gold_answer: Any, response: str,
                        abstention: bool, template_for_kind: TemplateSource) -> list[dict[str, str]]:
    """Chat messages for a yes/no verdict, with the prompt of the question's kind. The gold answer
    is the rubric for preference questions and the explanation for abstention questions."""
    template = _template_for_kind(template_for_kind, longmemeval_kind(question_type, abstention))
    return template.messages(question=question_text, gold_answer=str(gold_answer), response=response)


def parse_yes_no(raw: str) -> JudgeVerdict:
    """1.0 iff ``'yes'`` is in the stripped, lower-cased reply, else 0.0 (the official rule);
    unparsable when the reply is empty or contains "yes or no" (an echo of the question)."""
    reply = raw.strip().lower()
    if not reply:
        return JudgeVerdict.unparsed(raw, "empty reply")
    if _YES_OR_NO_RE.search(reply):
        return JudgeVerdict.unparsed(raw, "echo of the judge prompt: the reply repeats 'yes or no'")
    correct = "yes" in reply
    return JudgeVerdict(score=1.0 if correct else 0.0, label="yes" if correct else "no", parsed=True, raw=raw)


def parse_official_yes(raw: str) -> JudgeVerdict:
    """The official rule alone: correct iff ``'yes'`` is in the stripped, lower-cased reply."""
    correct = "yes" in raw.strip().lower()
    return JudgeVerdict(score=1.0 if correct else 0.0, label="yes" if correct else "no", parsed=True, raw=raw)


def load_longmemeval_templates(prompt_file: str | Path | Mapping[str, str | Path] | None = None) -> dict[str, PromptTemplate]:
    """The five LongMemEval templates, built-in unless overridden.

    ``prompt_file``: a mapping kind -> file, or a directory holding ``longmemeval_<kind>.txt`` files
    (at least one); kinds without a file keep the built-in prompt.
    """
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
    """LongMemEval: yes/no with the prompt of the question's kind. ``question.category`` is the
    question_type; ``question.meta['abstention']`` marks abstention questions."""

    templates: Mapping[str, PromptTemplate] = field(default_factory=load_longmemeval_templates)
    dataset: str = "longmemeval_s"
    params: RequestParams = RequestParams(max_tokens=LONGMEMEVAL_JUDGE_MAX_TOKENS)
    wording: Wording = Wording("own", "judges/prompts/longmemeval_<kind>.txt")

    @classmethod
    def official(cls, texts: OfficialTexts, dataset: str = "longmemeval_s") -> "LongMemEvalJudge":
        """The upstream prompts, request settings and grading rule."""
        named, wording = longmemeval_texts(texts)
        templates = {kind: PromptTemplate(f"longmemeval_{kind}", text, wording.cite) for kind, text in named.items()}
        return cls(templates, dataset, OFFICIAL_PARAMS, wording)

    def template_hash(self, question: Question) -> str:
        return self.template_for(question).sha256

    def __post_init__(self) -> None:
        missing = [k for k in LONGMEMEVAL_KINDS if k not in self.templates]
        if missing:
            raise ValueError(f"LongMemEvalJudge needs a template for every kind; missing {missing}")

    @staticmethod
    def kind_for(question: Question) -> str:
        return longmemeval_kind(question.category, bool(question.meta.get("abstention", False)))

    def is_graded(self, question: Question) -> bool:
        return True

    def template_for(self, question: Question) -> PromptTemplate:
        return _template_for_kind(self.templates, self.kind_for(question))

    def request(self, question: Question, answer: str) -> list[dict[str, str]]:
        return longmemeval_request(question.category, question.text, question.answer, answer,
                                   bool(question.meta.get("abstention", False)), self.templates)

    def parse(self, raw: str, question: Question) -> JudgeVerdict:
        if self.wording.source == "official":
            return parse_official_yes(raw)
        echo = detect_echo(raw, self.template_for(question))
        return JudgeVerdict.unparsed(raw, echo) if echo else parse_yes_no(raw)
