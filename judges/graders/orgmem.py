"""OrgMemBench rubric judge, by the rules of the benchmark's own judge.

Source (read, not copied): ``PandelisZ/OrgMemBench`` ``orgmembench/judge.py`` (``build_judge_prompt``,
``judge_one``) and ``orgmembench/llm.py`` (``_extract_json``); data note
``shared/data/orgmembench/SOURCE.md``. The rules it states:

* one request per question grades every rubric subpoint against the structured ground truth
  (criterion and failure condition per subpoint); the judge is told to be strict and to reply with
  JSON only, each subpoint a fraction in [0, 1] of its criterion met;
* the answer is shown cut to its first 6,000 characters (:data:`ORGMEM_MAX_ANSWER_CHARS`);
* the weighted score is computed in code, not by the model:
  ``sum(weight * fraction) / sum(weight)``, a subpoint's weight its ``max_score`` (1.0 when 0/absent);
* a subpoint missing from the reply counts 0, a fraction outside [0, 1] is clamped into it;
* a reply with no JSON object yields an empty table, i.e. a score of 0.

With the official wording (:meth:`OrgMemJudge.official`, the paper's protocol) the request is the
benchmark's own: its system message and the user prompt its ``build_judge_prompt`` returns (both
texts read at run time, the prompt's fields filled by our code), at temperature 0 (the paper: gpt-4o-mini grades every facet
at temperature 0 in place of the benchmark's default judge). The reply is read as the benchmark's
client reads it (:func:`parse_orgmem_official`): the text from the first ``{`` to the last ``}``
(after a leading code fence) as JSON, its ``subpoint_scores`` looked up by exact subpoint id and
read with ``float`` (``true`` is 1.0; a string that is no number stops the benchmark's script, so
the grade is unparsable here).

With our own wording, a reply with no JSON object naming a subpoint (or an echo of the prompt) is *unparsable*:
left out of ``score`` and counted 0 in ``score_paper``, which is then the official number. A
missing or non-numeric subpoint counts 0, as officially, and is listed in the verdict's detail.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from judges.graders.templates import PromptTemplate, load_template
from judges.graders.verdict import JudgeVerdict, detect_echo, extract_json_objects
from judges.official.texts import OfficialTexts
from judges.official.wording import OrgMemJudgePrompt, orgmem_judge_prompt
from judges.wording import RequestParams, Wording, texts_hash
from memory_protocol import Question, RubricFacet

__all__ = ["ORGMEM_MAX_ANSWER_CHARS", "ORGMEM_NO_ANSWER", "PUBLIC_CATEGORY", "OrgMemJudge", "official_question",
           "orgmem_request", "parse_orgmem", "parse_orgmem_official"]

# The benchmark's public names of its category codes (orgmembench/schemas.py, CATEGORY_INFO), which
# its judge prompt shows; an unknown code shows in lower case.
PUBLIC_CATEGORY = {"C1": "supersession", "C2": "decision_provenance", "C3": "bitemporal", "C4": "audit_replay",
                   "C5": "justification_chain", "C6": "contradiction", "HARD": "multi_hop_lineage",
                   "EMERGENT": "emergent_pattern"}
OFFICIAL_PARAMS = RequestParams(temperature=0.0)  # the paper: every facet graded at temperature 0

ORGMEM_MAX_ANSWER_CHARS = 6000  # the official judge shows answer_text[:6000]
ORGMEM_NO_ANSWER = "No answer produced."  # what the official runner grades when the answer is empty


def _require_rubric(question: Question) -> tuple[RubricFacet, ...]:
    if not question.rubric:
        raise ValueError(f"question {question.qid} has no rubric facets; an OrgMemBench judge needs them")
    ids = [f.facet_id.strip().casefold() for f in question.rubric]
    if len(set(ids)) != len(ids):
        raise ValueError(f"question {question.qid}: rubric facet ids are not unique (case-insensitive)")
    return question.rubric


def facet_weight(facet: RubricFacet) -> float:
    """A subpoint's weight: its ``max_score``, or 1.0 when that is 0 or not a number (official rule)."""
    try:
        weight = float(facet.max_score)
    except (TypeError, ValueError):
        return 1.0
    return weight if weight and math.isfinite(weight) else 1.0


def _ground_truth_text(question: Question) -> str:
    ground_truth = question.meta.get("ground_truth")
    if isinstance(ground_truth, Mapping) and ground_truth:
        return json.dumps(ground_truth, ensure_ascii=False, indent=2, default=str)
    return question.answer


def _rubric_text(facets: Sequence[RubricFacet]) -> str:
    blocks = []
    for facet in facets:
        lines = [f"- id: {facet.facet_id}", f"  criterion: {facet.criterion.strip()}"]
        if facet.fail_criterion.strip():
            lines.append(f"  fails if: {facet.fail_criterion.strip()}")
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


def orgmem_request(question: Question, answer: str, template: PromptTemplate,
                   max_answer_chars: int | None = ORGMEM_MAX_ANSWER_CHARS) -> list[dict[str, str]]:
    """Chat messages asking the judge to grade all rubric facets of ``question`` in one reply.

    An empty answer is shown as :data:`ORGMEM_NO_ANSWER`; the answer is cut to ``max_answer_chars``.
    """
    facets = _require_rubric(question)
    text = answer.strip() or ORGMEM_NO_ANSWER
    shown = text if max_answer_chars is None else text[:max_answer_chars]
    example = "{" + ", ".join(f"{json.dumps(f.facet_id)}: <fraction>" for f in facets) + "}"
    return template.messages(
        question=question.text, category=question.category, ground_truth=_ground_truth_text(question),
        rubric=_rubric_text(facets), facet_ids=", ".join(json.dumps(f.facet_id) for f in facets),
        json_example=example, answer=shown,
    )


def _fraction(value: Any) -> float | None:
    """A facet value as a number clamped into [0, 1], or None when it is not a number."""
    if isinstance(value, Mapping):
        for key in ("fraction", "score", "value"):
            if key in value:
                return _fraction(value[key])
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return min(1.0, max(0.0, number)) if math.isfinite(number) else None


def _facet_table(obj: Mapping[str, Any], wanted: set[str]) -> tuple[int, Mapping[str, Any]]:
    """The mapping inside ``obj`` (itself or one nested level, e.g. ``subpoint_scores``) naming
    the most facets, with that count."""
    best: tuple[int, Mapping[str, Any]] = (0, obj)
    for candidate in [obj, *(v for v in obj.values() if isinstance(v, Mapping))]:
        hits = len({str(k).strip().casefold() for k in candidate} & wanted)
        if hits > best[0]:
            best = (hits, candidate)
    return best


def parse_orgmem(raw: str, question: Question) -> JudgeVerdict:
    """Weighted rubric score from a judge reply (see the module docstring for the rules)."""
    facets = _require_rubric(question)
    by_key = {f.facet_id.strip().casefold(): f for f in facets}
    weights = {f.facet_id: facet_weight(f) for f in facets}
    tables = [_facet_table(obj, set(by_key)) for obj in extract_json_objects(raw)]
    tables = [t for t in tables if t[0] > 0]
    if not tables:
        return JudgeVerdict.unparsed(raw, "no JSON object names a rubric facet", weights=weights)
    # The table naming the most facets wins; among equals the last one (a final answer after drafts).
    table = max(reversed(tables), key=lambda t: t[0])[1]
    fractions: dict[str, float] = {}
    invalid: dict[str, Any] = {}
    for key, value in table.items():
        facet = by_key.get(str(key).strip().casefold())
        if facet is None:
            continue
        number = _fraction(value)
        if number is None:
            invalid[facet.facet_id] = value
        else:
            fractions[facet.facet_id] = number
    missing = [f.facet_id for f in facets if f.facet_id not in fractions and f.facet_id not in invalid]
    score = sum(weights[fid] * fractions.get(fid, 0.0) for fid in weights) / sum(weights.values())
    return JudgeVerdict(score=score, label=None, parsed=True, raw=raw,
                        detail={"fractions": fractions, "weights": weights, "missing": missing, "invalid": invalid})


def official_question(question: Question) -> SimpleNamespace:
    """The question as the benchmark's ``build_judge_prompt`` reads it (schemas.py ``Question``):
    public category, text, emergent flag (category EMERGENT or ``validation_mode == "union"``),
    the ground truth as loaded, the rubric subpoints with id, criterion, fail criterion, weight."""
    ground_truth = question.meta.get("ground_truth")
    metadata = question.meta.get("source_metadata") or {}
    return SimpleNamespace(
        public_category=PUBLIC_CATEGORY.get(question.category, question.category.lower()),
        text=question.text,
        is_emergent=question.category == "EMERGENT" or (isinstance(metadata, Mapping)
                                                         and metadata.get("validation_mode") == "union"),
        ground_truth_answer=dict(ground_truth) if isinstance(ground_truth, Mapping) else {},
        rubric_subpoints=[{"id": f.facet_id, "criterion": f.criterion, "fail_criterion": f.fail_criterion,
                           "max_score": f.max_score} for f in _require_rubric(question)],
    )


def _first_json_object(raw: str) -> dict[str, Any] | None:
    """The reply's JSON as the benchmark's client finds it: a leading code fence dropped, then the
    text from the first ``{`` to the last ``}``; None when that is not a JSON object."""
    text = raw.strip()
    if text.startswith("```"):
        text = text.split("```", 2)[1] if text.count("```") >= 2 else text.strip("`")
        if text.lstrip().startswith("json"):
            text = text.lstrip()[4:]
    start, end = text.find("{"), text.rfind("}")
    if start == -1 or end <= start:
        return None
    try:
        found = json.loads(text[start : end + 1])
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def _upstream_fraction(value: Any) -> float | None:
    """judge.py's ``min(1.0, max(0.0, float(value or 0.0)))``; None where ``float`` raises (a string
    that is no number, a list, an object), which stops the benchmark's script. A boolean ``true`` is
    1.0 there (``float(True)``), a numeric string its number."""
    try:
        number = float(value or 0.0)
    except (TypeError, ValueError):
        return None
    return min(1.0, max(0.0, number))


def parse_orgmem_official(raw: str, question: Question) -> JudgeVerdict:
    """The benchmark's scoring (``judge_one``): each subpoint's fraction from ``subpoint_scores`` by
    exact id (missing: 0), as ``float`` reads it, clamped into [0, 1], weighted by its weight (1.0
    when 0 or absent). A reply with no JSON object scores 0 there; here it is unparsable (left out of
    ``score``, 0 in ``score_paper``). So is a reply on which the benchmark's script stops: a fraction
    ``float`` cannot read, or ``subpoint_scores`` that is not an object."""
    facets = _require_rubric(question)
    weights = {f.facet_id: facet_weight(f) for f in facets}
    data = _first_json_object(raw)
    if data is None:
        return JudgeVerdict.unparsed(raw, "no JSON object in the reply", weights=weights)
    table = data.get("subpoint_scores", {}) or {}
    if not isinstance(table, Mapping):
        return JudgeVerdict.unparsed(raw, "subpoint_scores is not an object (the benchmark's script would stop)",
                                     weights=weights)
    fractions: dict[str, float] = {}
    for facet in facets:
        number = _upstream_fraction(table.get(facet.facet_id, 0.0))
        if number is None:
            return JudgeVerdict.unparsed(raw, f"subpoint {facet.facet_id!r} is {table[facet.facet_id]!r}, which float() "
                                              f"cannot read (the benchmark's script would stop)", weights=weights)
        fractions[facet.facet_id] = number
    missing = [f.facet_id for f in facets if f.facet_id not in table]
    score = sum(weights[fid] * fractions[fid] for fid in weights) / sum(weights.values())
    return JudgeVerdict(score=score, label=None, parsed=True, raw=raw,
                        detail={"fractions": fractions, "weights": weights, "missing": missing, "invalid": {}})


@dataclass(frozen=True)
class OrgMemJudge:
    """OrgMemBench: all rubric facets of a question graded in one request."""

    template: PromptTemplate = field(default_factory=lambda: load_template("orgmem_rubric"))
    max_answer_chars: int | None = ORGMEM_MAX_ANSWER_CHARS
    dataset: str = "orgmem"
    params: RequestParams = RequestParams()  # own wording: the judge config's settings
    wording: Wording = Wording("own", "judges/prompts/orgmem_rubric.txt")
    upstream: OrgMemJudgePrompt | None = None  # the benchmark's own request (official wording)

    @classmethod
    def official(cls, texts: OfficialTexts) -> "OrgMemJudge":
        prompt = orgmem_judge_prompt(texts)
        return cls(params=OFFICIAL_PARAMS, wording=prompt.wording, upstream=prompt)

    def template_hash(self, question: Question) -> str:
        if self.upstream is not None:
            return texts_hash(self.wording)  # the pinned texts it sends
        return self.template.sha256

    def is_graded(self, question: Question) -> bool:
        return bool(question.rubric)

    def template_for(self, question: Question) -> PromptTemplate:
        return self.template

    def request(self, question: Question, answer: str) -> list[dict[str, str]]:
        if self.upstream is not None:
            return [{"role": "system", "content": self.upstream.system},
                    {"role": "user", "content": self.upstream.build(official_question(question), answer)}]
        return orgmem_request(question, answer, self.template, self.max_answer_chars)

    def parse(self, raw: str, question: Question) -> JudgeVerdict:
        if self.upstream is not None:
            return parse_orgmem_official(raw, question)
        echo = detect_echo(raw, self.template)
        return JudgeVerdict.unparsed(raw, echo) if echo else parse_orgmem(raw, question)
