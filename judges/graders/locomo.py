"""LoCoMo CORRECT/WRONG judge, by mem0's evaluation (``mem0ai/mem0`` ``evaluation/metrics/llm_judge.py``
``ACCURACY_PROMPT``, ``evaluate_llm_judge``; ``evaluation/evals.py``; read, not copied).

Official wording (the paper's protocol): mem0's prompt as one user message at temperature 0 in JSON
mode, no ``max_tokens``, no ``seed``; grade 1 iff ``json.loads(<JSON part>)["label"] == "CORRECT"``,
unparsable (0 in ``llm_judge_paper``) where that expression would raise. Our wording
(``judges/prompts/locomo_judge.txt``, only when the upstream file is not found) is read more strictly:
no JSON label, two labels, both words CORRECT and WRONG (mem0's prompt forbids it) or an echo is
unparsable. Category 5 (adversarial) is not judged (``evals.py`` and ``llm_judge.py`` skip it).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from judges.graders import JudgeVerdict, extract_json_objects, own_parse
from judges.official.texts import OfficialTexts, official_wording
from judges.templates import PromptTemplate, RequestParams, Wording, load_template
from memory_protocol import Question

__all__ = ["MEM0_JUDGE_PARAMS", "LoCoMoJudge", "parse_locomo", "parse_mem0_label"]

# evaluate_llm_judge: temperature=0.0, response_format={"type": "json_object"}, no max_tokens, no seed
MEM0_JUDGE_PARAMS = RequestParams(temperature=0.0, response_format={"type": "json_object"},
                                  omit=("max_tokens", "seed"))
UNGRADED_CATEGORY = 5  # adversarial
CORRECT = "CORRECT"
_FENCED_RE = re.compile(r"```(?:json)?\s*(.*?)\s*```", re.DOTALL)
_LABEL_LITERAL_RE = re.compile(r"""["']label["']\s*:\s*["']([^"']*)["']""", re.IGNORECASE)
_BOTH_RE = (re.compile(r"\bCORRECT\b"), re.compile(r"\bWRONG\b"))


def parse_locomo(raw: str) -> JudgeVerdict:
    """1.0 iff the reply's one JSON ``label`` is exactly ``CORRECT``, 0.0 for another label."""
    if all(pattern.search(raw) for pattern in _BOTH_RE):
        return JudgeVerdict.unparsed(raw, "both CORRECT and WRONG appear")
    labels = [str(value) for obj in extract_json_objects(raw) for key, value in obj.items()
              if str(key).strip().casefold() == "label"] or _LABEL_LITERAL_RE.findall(raw)
    if not labels:
        return JudgeVerdict.unparsed(raw, "no JSON label")
    if len(set(labels)) > 1:
        return JudgeVerdict.unparsed(raw, f"different labels {sorted(set(labels))}")
    return JudgeVerdict.graded(raw, labels[0] == CORRECT, labels[0])


def parse_mem0_label(raw: str) -> JudgeVerdict:
    """mem0's rule; its ``extract_json`` takes a fenced block, else the first ``{`` to the last ``}``,
    else the whole reply."""
    text = raw.strip()
    fenced = _FENCED_RE.search(text)
    start, end = text.find("{"), text.rfind("}")
    part = fenced.group(1) if fenced else text[start : end + 1] if start != -1 and end > start else text
    try:
        obj = json.loads(part)
    except ValueError:
        return JudgeVerdict.unparsed(raw, "no JSON object (mem0's script would stop)")
    if not isinstance(obj, dict) or "label" not in obj:
        return JudgeVerdict.unparsed(raw, "no 'label' in the JSON reply (mem0's script would stop)")
    return JudgeVerdict.graded(raw, obj["label"] == CORRECT, str(obj["label"]))


@dataclass(frozen=True)
class LoCoMoJudge:
    """CORRECT/WRONG against the gold answer (``question.answer``)."""

    template: PromptTemplate = field(default_factory=lambda: load_template("locomo_judge"))
    dataset: str = "locomo"
    params: RequestParams = RequestParams()  # own wording: the judge config's settings
    wording: Wording = Wording("own", "judges/prompts/locomo_judge.txt")

    @classmethod
    def own(cls, prompt_file: str | Path | None = None) -> "LoCoMoJudge":
        """Our wording, or the user's ``judge.prompt_file``."""
        return cls(template=load_template("locomo_judge", prompt_file))

    @classmethod
    def official(cls, texts: OfficialTexts) -> "LoCoMoJudge":
        text = texts.get("mem0.accuracy")  # str.format fields question, gold_answer, generated_answer
        wording = official_wording(text, what="ACCURACY_PROMPT")
        return cls(PromptTemplate("locomo_judge", text.text, wording.cite), params=MEM0_JUDGE_PARAMS, wording=wording)

    def template_hash(self, question: Question) -> str:
        return self.template.sha256

    def is_graded(self, question: Question) -> bool:
        category = question.meta.get("category_id")
        if not isinstance(category, int):
            category = UNGRADED_CATEGORY if question.category == "adversarial" else None
        return category != UNGRADED_CATEGORY

    def request(self, question: Question, answer: str) -> list[dict[str, str]]:
        if not self.is_graded(question):
            raise ValueError(f"LoCoMo question {question.qid} is adversarial (category 5); "
                             "the official evaluation does not judge it")
        # an int gold answer becomes ``str``, as ``evals.py`` does
        return self.template.messages(question=question.text, gold_answer=str(question.answer), response=answer)

    def parse(self, raw: str, question: Question) -> JudgeVerdict:
        if self.wording.source == "official":
            return parse_mem0_label(raw)
        return own_parse(raw, self.template, parse_locomo)
