"""LoCoMo CORRECT/WRONG judge, by the rules of mem0's evaluation.

With the official wording (:meth:`LoCoMoJudge.official`, the paper's protocol) the prompt is
mem0's ``ACCURACY_PROMPT`` read at run time, sent as one user message at temperature 0 in JSON
reply mode with no ``max_tokens`` and no ``seed`` (``evaluate_llm_judge`` sends neither), and graded as ``evaluate_llm_judge`` grades it (:func:`parse_mem0_label`): the JSON
taken out of the reply (a fenced block, else the first ``{`` to the last ``}``, else the whole
reply), its ``label`` equal to ``"CORRECT"`` gives 1, any other label 0. Where mem0's script would
stop (no JSON object, no ``label``), the grade is unparsable: counted 0 in ``llm_judge_paper``.

Our own wording (``judges/prompts/locomo_judge.txt``, used only when the upstream file is not
found) keeps the stricter reading below. Source (read, not copied): ``mem0ai/mem0`` ``evaluation/metrics/llm_judge.py``
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

import json
import re
from dataclasses import dataclass, field
from typing import Any

from judges.graders.templates import PromptTemplate, load_template
from judges.graders.verdict import JudgeVerdict, detect_echo, extract_json_objects
from judges.official.texts import OfficialTexts
from judges.official.wording import mem0_accuracy_prompt
from judges.wording import RequestParams, Wording
from memory_protocol import Question

__all__ = ["LOCOMO_UNGRADED_CATEGORY", "MEM0_JUDGE_PARAMS", "LoCoMoJudge", "locomo_request", "parse_locomo",
           "parse_mem0_label"]

# evaluate_llm_judge: temperature=0.0, response_format={"type": "json_object"}, no max_tokens, no seed
MEM0_JUDGE_PARAMS = RequestParams(temperature=0.0, response_format={"type": "json_object"},
                                  omit=("max_tokens", "seed"))
_FENCED_RE = re.compile(r"```(?:json)?\s*(.*?)\s*```", re.DOTALL)

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


def _json_part(raw: str) -> str:
    """The JSON part of a reply as mem0's ``extract_json`` finds it."""
    text = raw.strip()
    fenced = _FENCED_RE.search(text)
    if fenced:
        return fenced.group(1)
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if start != -1 and end > start else text


def parse_mem0_label(raw: str) -> JudgeVerdict:
    """mem0's rule: 1.0 iff ``json.loads(<JSON part>)["label"] == "CORRECT"``, else 0.0; unparsable
    where that expression would raise (no JSON object, or no ``label`` in it)."""
    try:
        obj = json.loads(_json_part(raw))
    except ValueError:
        return JudgeVerdict.unparsed(raw, "no JSON object (mem0's script would stop)")
    if not isinstance(obj, dict) or "label" not in obj:
        return JudgeVerdict.unparsed(raw, "no 'label' in the JSON reply (mem0's script would stop)")
    label = obj["label"]
    return JudgeVerdict(score=1.0 if label == CORRECT else 0.0, label=str(label), parsed=True, raw=raw)


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
    params: RequestParams = RequestParams()  # own wording: the judge config's settings
    wording: Wording = Wording("own", "judges/prompts/locomo_judge.txt")

    @classmethod
    def official(cls, texts: OfficialTexts) -> "LoCoMoJudge":
        """mem0's prompt, request settings and grading rule."""
        text, wording = mem0_accuracy_prompt(texts)
        return cls(PromptTemplate("locomo_judge", text, wording.cite), params=MEM0_JUDGE_PARAMS, wording=wording)

    def template_hash(self, question: Question) -> str:
        return self.template.sha256

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
        if self.wording.source == "official":
            return parse_mem0_label(raw)
        echo = detect_echo(raw, self.template)
        return JudgeVerdict.unparsed(raw, echo) if echo else parse_locomo(raw)
