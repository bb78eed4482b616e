"""LoCoMo CORRECT/WRONG judge, by the rules of mem0's evaluation.

Source (read, not copied): ``mem0ai/mem0`` ``evaluation/metrics/llm_judge.py``
(``ACCURACY_PROMPT``, ``evaluate_llm_judge``) and ``evaluation/evals.py``. The rules it states:

* one user message; gpt-4o-mini, temperature 0, JSON reply mode;
* grading is generous: CORRECT when the generated answer touches the same topic as the gold
  answer, however long; for time questions CORRECT when it refers to the same date or period, in
  any format or as a relative expression;
* the judge gives one sentence of reasoning, then the label as JSON under the key ``label``, and is
  told not to write both CORRECT and WRONG;
* the grade is 1 iff the JSON ``label`` equals the string ``"CORRECT"`` exactly, else 0;
* category 5 (adversarial) is not judged (``evals.py`` and ``llm_judge.py`` skip it).

Where mem0's script would stop (no JSON label), or the reply holds both labels or echoes the
prompt, the grade here is unparsable: left out of ``llm_judge``, counted 0 in ``llm_judge_paper``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from judges.graders.templates import PromptTemplate, load_template
from judges.graders.verdict import JudgeVerdict, detect_echo, extract_json_objects
from memory_protocol import Question

__all__ = ["LOCOMO_UNGRADED_CATEGORY", "LoCoMoJudge", "locomo_request", "parse_locomo"]

LOCOMO_UNGRADED_CATEGORY = 5  # adversarial; mem0's evals.py / llm_judge.py skip it
CORRECT = "CORRECT"
_LABEL_LITERAL_RE = re.compile(r"""["']label["']\s*:\s*["']([^"']*)["']""", re.IGNORECASE)
_BOTH_RE = (re.compile(r"\bCORRECT\b"), re.compile(r"\bWRONG\b"))


def locomo_request(question_text: str, gold_answer: Any, response: str, template: PromptTemplate) -> list[dict[str, str]]:
    """Chat messages asking for a CORRECT/WRONG label (gold answers that are ints become ``str``)."""
    return template.messages(question=question_text, gold_answer=str(gold_answer), response=response)


def parse_locomo(raw: str) -> JudgeVerdict:
    """1.0 iff the reply's JSON ``label`` is exactly ``CORRECT``, 0.0 for any other label.

    Unparsable: no ``label`` field, two different labels, or both words CORRECT and WRONG in the
    reply (mem0's prompt forbids that: it breaks its script).
    """
    if all(pattern.search(raw) for pattern in _BOTH_RE):
        return JudgeVerdict.unparsed(raw, "both CORRECT and WRONG appear")
    labels = [str(value) for obj in extract_json_objects(raw) for key, value in obj.items()
              if str(key).strip().casefold() == "label"]
    if not labels:
        labels = _LABEL_LITERAL_RE.findall(raw)
    if not labels:
        return JudgeVerdict.unparsed(raw, "no JSON label")
    if len(set(labels)) > 1:
        return JudgeVerdict.unparsed(raw, f"different labels {sorted(set(labels))}")
    label = labels[0]
    return JudgeVerdict(score=1.0 if label == CORRECT else 0.0, label=label, parsed=True, raw=raw)


def _locomo_category_id(question: Question) -> int | None:
    value = question.meta.get("category_id")
    if isinstance(value, int):
        return value
    return LOCOMO_UNGRADED_CATEGORY if question.category == "adversarial" else None


@dataclass(frozen=True)
class LoCoMoJudge:
    """LoCoMo: CORRECT/WRONG against the gold answer (``question.answer``); category 5 is not judged."""

    template: PromptTemplate = field(default_factory=lambda: load_template("locomo_judge"))
    dataset: str = "locomo"
    max_tokens: int | None = None  # mem0 sets none: the judge config's max_tokens

    def is_graded(self, question: Question) -> bool:
        return _locomo_category_id(question) != LOCOMO_UNGRADED_CATEGORY

    def template_for(self, question: Question) -> PromptTemplate:
        return self.template

    def request(self, question: Question, answer: str) -> list[dict[str, str]]:
        if not self.is_graded(question):
            raise ValueError(f"LoCoMo question {question.qid} is adversarial (category 5); "
                             "the official evaluation does not judge it")
        return locomo_request(question.text, question.answer, answer, self.template)

    def parse(self, raw: str, question: Question) -> JudgeVerdict:
        echo = detect_echo(raw, self.template)
        return JudgeVerdict.unparsed(raw, echo) if echo else parse_locomo(raw)
