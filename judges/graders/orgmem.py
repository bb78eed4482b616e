"""OrgMemBench rubric judge, by the benchmark's judge (``PandelisZ/OrgMemBench`` ``orgmembench/judge.py``
``build_judge_prompt``, ``judge_one``; ``orgmembench/llm.py`` ``_extract_json``; read, not copied).

One request grades every subpoint of a question, the answer cut at 6,000 characters; the score is
``sum(weight * fraction) / sum(weight)`` computed in code (weight: ``max_score``, 1.0 when 0 or
absent; a missing subpoint 0, a fraction clamped into [0, 1]). Official wording (the paper's
protocol, gpt-4o-mini at temperature 0 in place of the benchmark's default judge): its system message
and ``build_judge_prompt``'s user prompt, the reply read as its client reads it
(:func:`parse_orgmem_official`). Our wording: a reply with no JSON object naming a subpoint, or an
echo, is unparsable (left out of ``score``, 0 in ``score_paper``, which is then the official number).
"""

from __future__ import annotations

import ast
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judges.graders import JudgeVerdict, extract_json_objects, own_parse
from judges.official.texts import OfficialTexts, official_wording
from judges.templates import PromptTemplate, RequestParams, Wording, load_template
from memory_protocol import Question, RubricFacet

__all__ = ["ORGMEM_NO_ANSWER", "OrgMemJudge", "parse_orgmem", "parse_orgmem_official"]

OFFICIAL_PARAMS = RequestParams(temperature=0.0)  # the paper: every facet graded at temperature 0

ORGMEM_NO_ANSWER = "No answer produced."  # what the official runner grades when the answer is empty
ORGMEM_MAX_ANSWER_CHARS = 6000  # judge.py: answer_text[:6000]


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


def _require_rubric(question: Question) -> tuple[RubricFacet, ...]:
    if not question.rubric:
        raise ValueError(f"question {question.qid} has no rubric facets; an OrgMemBench judge needs them")
    ids = [f.facet_id.strip().casefold() for f in question.rubric]
    if len(set(ids)) != len(ids):
        raise ValueError(f"question {question.qid}: rubric facet ids are not unique (case-insensitive)")
    return question.rubric


def _weights(facets: Sequence[RubricFacet]) -> dict[str, float]:
    """Each subpoint's ``max_score``, 1.0 when that is 0 or not a number (judge.py)."""
    weights: dict[str, float] = {}
    for facet in facets:
        try:
            weight = float(facet.max_score)
        except (TypeError, ValueError):
            weight = 1.0
        weights[facet.facet_id] = weight if weight and math.isfinite(weight) else 1.0
    return weights


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
    """The mapping in ``obj`` (itself or one level down, e.g. ``subpoint_scores``) naming the most facets."""
    best: tuple[int, Mapping[str, Any]] = (0, obj)
    for candidate in [obj, *(v for v in obj.values() if isinstance(v, Mapping))]:
        hits = len({str(k).strip().casefold() for k in candidate} & wanted)
        if hits > best[0]:
            best = (hits, candidate)
    return best


def parse_orgmem(raw: str, question: Question) -> JudgeVerdict:
    """Our reading: the JSON table naming the most facets (the last of equals: a final answer after
    drafts), facet ids matched case-insensitively; a missing or non-numeric facet counts 0 and is listed."""
    facets = _require_rubric(question)
    by_key = {f.facet_id.strip().casefold(): f for f in facets}
    weights = _weights(facets)
    tables = [_facet_table(obj, set(by_key)) for obj in extract_json_objects(raw)]
    tables = [t for t in tables if t[0] > 0]
    if not tables:
        return JudgeVerdict.unparsed(raw, "no JSON object names a rubric facet", weights=weights)
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


def _first_json_object(raw: str) -> dict[str, Any] | None:
    """llm.py's reading: a leading code fence dropped, then the first ``{`` to the last ``}``."""
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
    """judge.py's ``min(1.0, max(0.0, float(value or 0.0)))`` (``true`` is 1.0); None where ``float``
    raises, which stops the benchmark's script."""
    try:
        number = float(value or 0.0)
    except (TypeError, ValueError):
        return None
    return min(1.0, max(0.0, number))


def parse_orgmem_official(raw: str, question: Question) -> JudgeVerdict:
    """``judge_one``: each subpoint's fraction from ``subpoint_scores`` by exact id. A reply with no JSON
    object (0 there) or one that stops the benchmark's script is unparsable here (0 in ``score_paper``)."""
    facets = _require_rubric(question)
    weights = _weights(facets)
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
    """All rubric facets of a question graded in one request."""

    template: PromptTemplate = field(default_factory=lambda: load_template("orgmem_rubric"))
    max_answer_chars: int | None = ORGMEM_MAX_ANSWER_CHARS
    dataset: str = "orgmem"
    params: RequestParams = RequestParams()  # own wording: the judge config's settings
    wording: Wording = Wording("own", "judges/prompts/orgmem_rubric.txt")
    upstream: OrgMemJudgePrompt | None = None  # the benchmark's own request (official wording)

    @classmethod
    def own(cls, prompt_file: str | Path | None = None) -> "OrgMemJudge":
        """Our wording, or the user's ``judge.prompt_file``."""
        return cls(template=load_template("orgmem_rubric", prompt_file))

    @classmethod
    def official(cls, texts: OfficialTexts) -> "OrgMemJudge":
        prompt = orgmem_judge_prompt(texts)
        return cls(params=OFFICIAL_PARAMS, wording=prompt.wording, upstream=prompt)

    def template_hash(self, question: Question) -> str:
        if self.upstream is not None:
            return self.wording.texts_sha256  # the pinned texts it sends
        return self.template.sha256

    def is_graded(self, question: Question) -> bool:
        return bool(question.rubric)

    def request(self, question: Question, answer: str) -> list[dict[str, str]]:
        """Every facet graded in one reply; ours shows an empty answer as :data:`ORGMEM_NO_ANSWER` and cuts
        it to ``max_answer_chars``."""
        facets = _require_rubric(question)
        if self.upstream is not None:
            return [{"role": "system", "content": self.upstream.system},
                    {"role": "user", "content": self.upstream.build(question, answer)}]
        text = answer.strip() or ORGMEM_NO_ANSWER
        shown = text if self.max_answer_chars is None else text[:self.max_answer_chars]
        example = "{" + ", ".join(f"{json.dumps(f.facet_id)}: <fraction>" for f in facets) + "}"
        return self.template.messages(
            question=question.text, category=question.category, ground_truth=_ground_truth_text(question),
            rubric=_rubric_text(facets), facet_ids=", ".join(json.dumps(f.facet_id) for f in facets),
            json_example=example, answer=shown)

    def parse(self, raw: str, question: Question) -> JudgeVerdict:
        if self.upstream is not None:
            return parse_orgmem_official(raw, question)
        return own_parse(raw, self.template, lambda reply: parse_orgmem(reply, question))
