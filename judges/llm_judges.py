"""LLM-judge prompts and verdict parsing for OrgMemBench, LoCoMo and LongMemEval.

This module builds OpenAI chat messages and parses the judge's raw reply; it never calls a model
(``harness.models.llm_client`` does, keyed on :attr:`PromptTemplate.sha256`). The prompts are text files in
``judges/prompts/``, written in our own words but applying the official grading rules:

OrgMemBench (``PandelisZ/OrgMemBench`` ``orgmembench/judge.py``; ``shared/data/orgmembench/SOURCE.md``)
    One request per question grades all of its rubric facets against the structured ground truth
    (criterion + failure condition per facet). The judge returns, per facet, the fraction of the
    criterion met, **any value in [0, 1]**; the weighted score is computed here, not by the model:
    ``sum(max_score * fraction) / sum(max_score)``. The official judge is strict, shows the answer
    cut to its first 6,000 characters (:data:`ORGMEM_MAX_ANSWER_CHARS`) and counts a facet missing
    from the reply as 0; here a missing facet makes the verdict unparsed (score None) instead.

LoCoMo (``mem0ai/mem0`` ``evaluation/metrics/llm_judge.py``, ``evaluation/evals.py``)
    Label CORRECT (1) or WRONG (0); generous: CORRECT when the answer touches the same topic as the
    gold answer, however long; for time questions CORRECT when it denotes the same date or period,
    in any format or as a relative expression. One sentence of reasoning, then the label as JSON
    ``{"label": ...}``. Category 5 (adversarial) is not judged (``evals.py`` skips it).

LongMemEval (``xiaowu0162/LongMemEval`` ``src/evaluation/evaluate_qa.py``, ``get_anscheck_prompt``)
    A yes/no question to the judge, with one prompt per kind:
    ``default`` (single-session-user, single-session-assistant, multi-session): yes if the response
    contains the answer, is equivalent to it or gives all intermediate steps; no if it holds only a
    subset of the required information. ``temporal`` (temporal-reasoning): the same, and off-by-one
    errors in counts of days/weeks/months are not penalised. ``knowledge_update``: a response that
    mentions earlier information along with the updated answer is correct if the updated answer is
    the required one. ``preference`` (single-session-preference): the gold ``answer`` is a rubric;
    the response need not cover every point, it must recall and use the user's information correctly.
    ``abstention`` (question id contains ``_abs``, any type): yes if the model identifies the
    question as unanswerable (information incomplete / other information given but not the asked
    one). The official script counts a reply as yes when ``'yes' in reply.lower()``;
    :func:`parse_yes_no` is stricter and reports unclear replies as unparsed.

Template files: leading lines starting with ``#:`` are comments (they document the placeholders)
and are removed; newlines around the text are stripped; the rest is used verbatim and filled in
with :meth:`str.format` (literal braces doubled). Each template name has required placeholder
slots, some of which accept more than one name (e.g. mem0's ``{generated_answer}`` for
``{response}``), so an official prompt can be supplied verbatim with named placeholders via
``prompt_file``. Every rendered prompt is sent as a single user message, as both official judges do.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, Union, runtime_checkable

from loaders.schema import Question, RubricFacet

__all__ = [
    "KIND_BY_QUESTION_TYPE",
    "LOCOMO_UNGRADED_CATEGORY",
    "LONGMEMEVAL_KINDS",
    "ORGMEM_MAX_ANSWER_CHARS",
    "PROMPTS_DIR",
    "TEMPLATE_SLOTS",
    "Judge",
    "JudgeVerdict",
    "LoCoMoJudge",
    "LongMemEvalJudge",
    "OrgMemJudge",
    "PromptTemplate",
    "TemplateSlots",
    "extract_json_objects",
    "load_longmemeval_templates",
    "load_template",
    "locomo_request",
    "longmemeval_kind",
    "longmemeval_request",
    "make_judge",
    "orgmem_request",
    "parse_locomo",
    "parse_orgmem",
    "parse_yes_no",
]

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"
COMMENT_PREFIX = "#:"
ORGMEM_MAX_ANSWER_CHARS = 6000  # the official OrgMemBench judge shows answer_text[:6000]
LOCOMO_UNGRADED_CATEGORY = 5  # adversarial; mem0's evals.py / llm_judge.py skip it

LONGMEMEVAL_KINDS: tuple[str, ...] = ("default", "temporal", "knowledge_update", "preference", "abstention")
KIND_BY_QUESTION_TYPE: dict[str, str] = {
    "single-session-user": "default",
    "single-session-assistant": "default",
    "multi-session": "default",
    "temporal-reasoning": "temporal",
    "knowledge-update": "knowledge_update",
    "single-session-preference": "preference",
}


# ---------------------------------------------------------------------------------------------------
# Templates
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TemplateSlots:
    """Placeholders of one template name.

    ``required`` maps each slot (its canonical name first) to the placeholder names that fill it;
    a template must use at least one name of every required slot. ``optional`` slots may be used.
    """

    required: Mapping[str, tuple[str, ...]]
    optional: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def names(self) -> dict[str, str]:
        """Every accepted placeholder name -> its slot."""
        out: dict[str, str] = {}
        for slots in (self.required, self.optional):
            for slot, aliases in slots.items():
                for alias in aliases:
                    out[alias] = slot
        return out


_LME_SLOTS = {
    "question": ("question",),
    "gold_answer": ("gold_answer", "correct_answer", "rubric", "explanation"),
    "response": ("response", "hypothesis", "generated_answer"),
}
TEMPLATE_SLOTS: dict[str, TemplateSlots] = {
    "answer": TemplateSlots(
        required={"context": ("context",), "question": ("question",)},
        optional={"date_line": ("date_line",)},
    ),
    "orgmem_rubric": TemplateSlots(
        required={
            "question": ("question",),
            "ground_truth": ("ground_truth", "gold_answer"),
            "rubric": ("rubric",),
            "answer": ("answer", "response"),
        },
        optional={"category": ("category",), "facet_ids": ("facet_ids",), "json_example": ("json_example",)},
    ),
    "locomo_judge": TemplateSlots(
        required={
            "question": ("question",),
            "gold_answer": ("gold_answer",),
            "response": ("response", "generated_answer"),
        }
    ),
    **{f"longmemeval_{kind}": TemplateSlots(required=_LME_SLOTS) for kind in LONGMEMEVAL_KINDS},
}


def _strip_comments(text: str) -> str:
    """Drop the leading ``#:`` comment lines, then newlines around the text."""
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines) and lines[i].lstrip().startswith(COMMENT_PREFIX):
        i += 1
    return "".join(lines[i:]).strip("\r\n")


def _placeholders(text: str, source: str) -> list[str]:
    """Field names used in ``text`` (ValueError for malformed braces or positional fields)."""
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise ValueError(f"prompt template {source}: malformed braces ({exc}); write literal braces as "
                         "'{{' and '}}'") from None
    names = []
    for _literal, name, _spec, _conv in parsed:
        if name is None:
            continue
        if name == "" or name.isdigit():
            raise ValueError(f"prompt template {source}: positional placeholder '{{{name}}}' is not supported; "
                             "use named placeholders such as {question}")
        names.append(name)
    return names


@dataclass(frozen=True)
class PromptTemplate:
    """A judge prompt. ``sha256`` is the hash of ``text`` (part of the LLM cache key).

    ``source`` says where the text came from (a file path); it is not part of the hash. For a name
    in :data:`TEMPLATE_SLOTS` the text is checked on creation: every required slot must be used
    and no unknown placeholder may appear (ValueError naming the placeholder and the source).
    """

    name: str
    text: str
    source: str = "<string>"
    sha256: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sha256", hashlib.sha256(self.text.encode("utf-8")).hexdigest())
        used = _placeholders(self.text, self.source)
        slots = TEMPLATE_SLOTS.get(self.name)
        if slots is None:
            return
        known = slots.names()
        for name in used:
            if name not in known:
                raise ValueError(
                    f"prompt template {self.source} ({self.name}): unknown placeholder '{{{name}}}'; "
                    f"allowed: {', '.join('{' + n + '}' for n in known)}"
                )
        for slot, aliases in slots.required.items():
            if not any(alias in used for alias in aliases):
                accepted = " or ".join("{" + a + "}" for a in aliases)
                raise ValueError(
                    f"prompt template {self.source} ({self.name}) is missing the required placeholder "
                    f"'{{{slot}}}' (accepted: {accepted})"
                )

    @property
    def placeholders(self) -> frozenset[str]:
        return frozenset(_placeholders(self.text, self.source))

    def render(self, **values: Any) -> str:
        """Fill the template; ``values`` are keyed by slot and reach every alias of that slot."""
        slots = TEMPLATE_SLOTS.get(self.name)
        filled: dict[str, Any] = dict(values)
        if slots is not None:
            for slot_map in (slots.required, slots.optional):
                for slot, aliases in slot_map.items():
                    if slot in values:
                        for alias in aliases:
                            filled.setdefault(alias, values[slot])
        missing = sorted(self.placeholders - filled.keys())
        if missing:
            raise KeyError(f"prompt template {self.source} ({self.name}): no value for {missing}")
        return self.text.format(**filled)

    def messages(self, **values: Any) -> list[dict[str, str]]:
        """The rendered prompt as one user message."""
        return [{"role": "user", "content": self.render(**values)}]


def load_template(name: str, prompt_file: str | Path | None = None) -> PromptTemplate:
    """The template ``name`` from ``judges/prompts/<name>.txt``, or from ``prompt_file`` if given.

    ``prompt_file`` lets a user supply another wording (e.g. an official prompt verbatim, with
    named placeholders). A file that lacks a required placeholder raises ValueError naming the
    placeholder and the file.
    """
    if name not in TEMPLATE_SLOTS:
        raise ValueError(f"unknown prompt template {name!r}; known: {sorted(TEMPLATE_SLOTS)}")
    path = Path(prompt_file) if prompt_file is not None else PROMPTS_DIR / f"{name}.txt"
    if not path.is_file():
        raise FileNotFoundError(f"prompt template file for {name!r} not found: {path}")
    text = _strip_comments(path.read_text(encoding="utf-8"))
    if not text.strip():
        raise ValueError(f"prompt template {path} ({name}) is empty")
    return PromptTemplate(name=name, text=text, source=str(path))


# ---------------------------------------------------------------------------------------------------
# Verdicts and JSON extraction
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JudgeVerdict:
    """One parsed judge reply. ``score`` is in [0, 1], or None when the reply was not understood
    (``parsed`` False; such a question must be reported as unscored, never as 0)."""

    score: float | None
    label: str | None
    parsed: bool
    raw: str
    detail: dict[str, Any] = field(default_factory=dict)

    @staticmethod
    def unparsed(raw: str, reason: str, **detail: Any) -> "JudgeVerdict":
        return JudgeVerdict(score=None, label=None, parsed=False, raw=raw, detail={"error": reason, **detail})


_FENCE_RE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\r?\n?(.*?)```", re.DOTALL)


def extract_json_objects(raw: str) -> list[dict[str, Any]]:
    """Every JSON object found in ``raw``, in order: fenced blocks first, then objects in the text.

    Tolerates prose around the object and ```json fences```. Nested objects are returned once
    (as part of their outermost object).
    """
    found: list[dict[str, Any]] = []
    seen: set[str] = set()

    def add(obj: Any) -> None:
        if isinstance(obj, dict):
            key = json.dumps(obj, sort_keys=True, default=str)
            if key not in seen:
                seen.add(key)
                found.append(obj)

    decoder = json.JSONDecoder()

    def scan(text: str) -> None:
        i = text.find("{")
        while i != -1:
            try:
                obj, end = decoder.raw_decode(text, i)
            except json.JSONDecodeError:
                i = text.find("{", i + 1)
                continue
            add(obj)
            i = text.find("{", end)

    for block in _FENCE_RE.findall(raw):
        scan(block)
    scan(raw)
    return found


# ---------------------------------------------------------------------------------------------------
# OrgMemBench
# ---------------------------------------------------------------------------------------------------


def _require_rubric(question: Question) -> tuple[RubricFacet, ...]:
    if not question.rubric:
        raise ValueError(f"question {question.qid} has no rubric facets; an OrgMemBench judge needs them")
    total = sum(f.max_score for f in question.rubric)
    if not total > 0:
        raise ValueError(f"question {question.qid}: rubric weights sum to {total}, expected > 0")
    ids = [f.facet_id.strip().casefold() for f in question.rubric]
    if len(set(ids)) != len(ids):
        raise ValueError(f"question {question.qid}: rubric facet ids are not unique (case-insensitive)")
    return question.rubric


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


def orgmem_request(
    question: Question,
    answer: str,
    template: PromptTemplate,
    max_answer_chars: int | None = ORGMEM_MAX_ANSWER_CHARS,
) -> list[dict[str, str]]:
    """Chat messages asking the judge to grade all rubric facets of ``question`` in one reply.

    The reply asked for is a JSON object ``{facet_id: fraction in [0, 1]}``. ``answer`` is cut to
    ``max_answer_chars`` characters (None: no cut) as the official judge does.
    """
    facets = _require_rubric(question)
    shown = answer if max_answer_chars is None else answer[:max_answer_chars]
    example = "{" + ", ".join(f"{json.dumps(f.facet_id)}: <fraction>" for f in facets) + "}"
    return template.messages(
        question=question.text,
        category=question.category,
        ground_truth=_ground_truth_text(question),
        rubric=_rubric_text(facets),
        facet_ids=", ".join(json.dumps(f.facet_id) for f in facets),
        json_example=example,
        answer=shown,
    )


def _fraction(value: Any) -> float | None:
    """A facet value as a fraction in [0, 1], or None if it is not one."""
    if isinstance(value, Mapping):
        for key in ("fraction", "score", "value"):
            if key in value:
                return _fraction(value[key])
        return None
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    if not math.isfinite(number) or number < 0.0 or number > 1.0:
        return None
    return number


def _facet_table(obj: Mapping[str, Any], wanted: set[str]) -> Mapping[str, Any] | None:
    """The mapping inside ``obj`` (itself or one nested level) whose keys name the most facets."""
    best, best_hits = None, 0
    for candidate in [obj, *(v for v in obj.values() if isinstance(v, Mapping))]:
        hits = len({str(k).strip().casefold() for k in candidate} & wanted)
        if hits > best_hits:
            best, best_hits = candidate, hits
    return best


def parse_orgmem(raw: str, question: Question) -> JudgeVerdict:
    """Weighted rubric score ``sum(max_score * fraction) / sum(max_score)`` from a judge reply.

    Facet ids match case-insensitively. The verdict is unparsed (score None) when no JSON object
    names the facets, when a facet is missing or has a value that is not a number in [0, 1], or when
    the same facet is given two different values. ``detail`` holds ``fractions`` (facet id ->
    fraction), ``weights`` and, when unparsed, ``error`` and ``missing``/``invalid``.
    """
    facets = _require_rubric(question)
    by_key = {f.facet_id.strip().casefold(): f for f in facets}
    weights = {f.facet_id: f.max_score for f in facets}
    objects = extract_json_objects(raw)
    if not objects:
        return JudgeVerdict.unparsed(raw, "no JSON object in the reply", weights=weights)
    tables = [t for t in (_facet_table(o, set(by_key)) for o in objects) if t is not None]
    if not tables:
        return JudgeVerdict.unparsed(raw, "no JSON object names a rubric facet", weights=weights)
    # The table naming the most facets wins; among equals the last one (a final answer after drafts).
    table = max(reversed(tables), key=lambda t: len({str(k).strip().casefold() for k in t} & set(by_key)))
    fractions: dict[str, float] = {}
    invalid: dict[str, Any] = {}
    for key, value in table.items():
        facet = by_key.get(str(key).strip().casefold())
        if facet is None:
            continue
        number = _fraction(value)
        if number is None:
            invalid[facet.facet_id] = value
        elif facet.facet_id in fractions and fractions[facet.facet_id] != number:
            invalid[facet.facet_id] = [fractions[facet.facet_id], number]
        else:
            fractions[facet.facet_id] = number
    for facet_id in invalid:
        fractions.pop(facet_id, None)
    missing = [f.facet_id for f in facets if f.facet_id not in fractions and f.facet_id not in invalid]
    if invalid or missing:
        reason = "facet value not a number in [0, 1] or given twice" if invalid else "facet missing from reply"
        return JudgeVerdict.unparsed(raw, reason, missing=missing, invalid=invalid, fractions=fractions,
                                     weights=weights)
    total = sum(weights.values())
    score = sum(weights[fid] * fractions[fid] for fid in weights) / total
    return JudgeVerdict(score=score, label=None, parsed=True, raw=raw,
                        detail={"fractions": fractions, "weights": weights})


# ---------------------------------------------------------------------------------------------------
# LoCoMo
# ---------------------------------------------------------------------------------------------------

LOCOMO_LABELS = {"CORRECT": 1.0, "WRONG": 0.0}
_LABEL_LITERAL_RE = re.compile(r"""["']label["']\s*:\s*["']\s*([A-Za-z]+)\s*["']""", re.IGNORECASE)
_LABEL_WORD_RE = re.compile(r"\b(correct|wrong)\b", re.IGNORECASE)
_NEGATED_RE = re.compile(r"\bnot\s+(?:\w+\s+)?(correct|wrong)\b", re.IGNORECASE)


def locomo_request(question_text: str, gold_answer: Any, response: str, template: PromptTemplate) -> list[dict[str, str]]:
    """Chat messages asking for a CORRECT/WRONG label (gold answers that are ints become ``str``)."""
    return template.messages(question=question_text, gold_answer=str(gold_answer), response=response)


def _locomo_verdict(raw: str, label: str, how: str) -> JudgeVerdict:
    return JudgeVerdict(score=LOCOMO_LABELS[label], label=label, parsed=True, raw=raw, detail={"from": how})


def parse_locomo(raw: str) -> JudgeVerdict:
    """CORRECT -> 1.0, WRONG -> 0.0, from a JSON ``{"label": ...}`` or else the bare word.

    Case-insensitive. The JSON label wins over words in the surrounding text. Unparsed when labels
    conflict, a JSON label is neither word, no label is found, or the only word is negated
    ("not correct").
    """
    labels: list[str] = []
    for obj in extract_json_objects(raw):
        for key, value in obj.items():
            if str(key).strip().casefold() == "label":
                labels.append(str(value).strip().strip(".!\"'*").strip().upper())
    if not labels:
        labels = [m.upper() for m in _LABEL_LITERAL_RE.findall(raw)]
    if labels:
        distinct = set(labels)
        if len(distinct) == 1 and labels[0] in LOCOMO_LABELS:
            return _locomo_verdict(raw, labels[0], "json")
        return JudgeVerdict.unparsed(raw, f"label field(s) {sorted(distinct)} are not one of CORRECT/WRONG")
    if _NEGATED_RE.search(raw):
        return JudgeVerdict.unparsed(raw, "negated label word")
    words = {m.upper() for m in _LABEL_WORD_RE.findall(raw)}
    if len(words) == 1:
        return _locomo_verdict(raw, words.pop(), "word")
    if not words:
        return JudgeVerdict.unparsed(raw, "no CORRECT/WRONG label")
    return JudgeVerdict.unparsed(raw, "both CORRECT and WRONG appear")


# ---------------------------------------------------------------------------------------------------
# LongMemEval
# ---------------------------------------------------------------------------------------------------

TemplateSource = Union[Mapping[str, PromptTemplate], Callable[[str], PromptTemplate]]
_YES_NO_RE = re.compile(r"\b(yes|no)\b", re.IGNORECASE)
_LEADING_RE = re.compile(r"^[\s*_`#>\"'(\[-]*(yes|no)\b", re.IGNORECASE)


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


def longmemeval_request(
    question_type: str,
    question_text: str,
    gold_answer: Any,
    response: str,
    abstention: bool,
    template_for_kind: TemplateSource,
) -> list[dict[str, str]]:
    """Chat messages for a yes/no verdict, with the prompt of the question's kind.

    ``template_for_kind`` maps a kind (see :data:`LONGMEMEVAL_KINDS`) to its template, as a mapping
    or a function. The gold answer is the rubric for preference questions and the explanation for
    abstention questions (the dataset's ``answer`` field in every case).
    """
    kind = longmemeval_kind(question_type, abstention)
    template = _template_for_kind(template_for_kind, kind)
    return template.messages(question=question_text, gold_answer=str(gold_answer), response=response)


def parse_yes_no(raw: str) -> JudgeVerdict:
    """yes -> 1.0, no -> 0.0.

    Accepted: a reply that starts with yes/no (after markdown or quote marks), a JSON object whose
    ``answer``/``label``/``verdict`` is yes/no, or a text in which only one of the two words occurs.
    Anything else is unparsed. (The official script instead tests ``'yes' in reply.lower()``.)
    """
    for obj in extract_json_objects(raw):
        for key, value in obj.items():
            if str(key).strip().casefold() in ("answer", "label", "verdict") and isinstance(value, str):
                word = value.strip().casefold()
                if word in ("yes", "no"):
                    return JudgeVerdict(score=1.0 if word == "yes" else 0.0, label=word, parsed=True, raw=raw,
                                        detail={"from": "json"})
    leading = _LEADING_RE.match(raw)
    if leading:
        word = leading.group(1).casefold()
        return JudgeVerdict(score=1.0 if word == "yes" else 0.0, label=word, parsed=True, raw=raw,
                            detail={"from": "leading word"})
    words = {m.casefold() for m in _YES_NO_RE.findall(raw)}
    if len(words) == 1:
        word = words.pop()
        return JudgeVerdict(score=1.0 if word == "yes" else 0.0, label=word, parsed=True, raw=raw,
                            detail={"from": "word"})
    if not words:
        return JudgeVerdict.unparsed(raw, "no yes/no in the reply")
    return JudgeVerdict.unparsed(raw, "both yes and no appear")


def load_longmemeval_templates(prompt_file: str | Path | Mapping[str, str | Path] | None = None) -> dict[str, PromptTemplate]:
    """The five LongMemEval templates, built-in unless overridden.

    ``prompt_file``: a mapping kind -> file, or a directory holding ``longmemeval_<kind>.txt`` files
    (at least one); kinds without a file keep the built-in prompt. A single file is refused because
    one prompt cannot carry the five kinds' rules.
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


# ---------------------------------------------------------------------------------------------------
# Per-dataset judges
# ---------------------------------------------------------------------------------------------------


@runtime_checkable
class Judge(Protocol):
    """Builds a judge request for (question, answer) and parses the judge's reply."""

    dataset: str

    def is_graded(self, question: Question) -> bool:
        """False for questions the official evaluation does not judge."""

    def template_for(self, question: Question) -> PromptTemplate:
        """The template used for ``question`` (its ``sha256`` goes into the cache key)."""

    def request(self, question: Question, answer: str) -> list[dict[str, str]]:
        """Chat messages for the judge."""

    def parse(self, raw: str, question: Question) -> JudgeVerdict:
        """The verdict in the judge's raw reply."""


@dataclass(frozen=True)
class OrgMemJudge:
    """OrgMemBench: all rubric facets of a question graded in one request."""

    template: PromptTemplate = field(default_factory=lambda: load_template("orgmem_rubric"))
    max_answer_chars: int | None = ORGMEM_MAX_ANSWER_CHARS
    dataset: str = "orgmem"

    def is_graded(self, question: Question) -> bool:
        return bool(question.rubric)

    def template_for(self, question: Question) -> PromptTemplate:
        return self.template

    def request(self, question: Question, answer: str) -> list[dict[str, str]]:
        return orgmem_request(question, answer, self.template, self.max_answer_chars)

    def parse(self, raw: str, question: Question) -> JudgeVerdict:
        return parse_orgmem(raw, question)


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
        return parse_locomo(raw)


@dataclass(frozen=True)
class LongMemEvalJudge:
    """LongMemEval: yes/no with the prompt of the question's kind.

    ``question.category`` is the question_type; ``question.meta['abstention']`` marks abstention
    questions (the loader sets it from ``_abs`` in the question id).
    """

    templates: Mapping[str, PromptTemplate] = field(default_factory=load_longmemeval_templates)
    dataset: str = "longmemeval_s"

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
        return parse_yes_no(raw)


def make_judge(dataset: str, prompt_file: str | Path | Mapping[str, str | Path] | None = None) -> Judge:
    """The judge for a dataset name (``orgmem``, ``locomo``, ``longmemeval_s``/``longmemeval``).

    ``prompt_file`` replaces the built-in prompt: a file for OrgMemBench and LoCoMo; for LongMemEval
    a directory or mapping as :func:`load_longmemeval_templates` takes.
    """
    if dataset == "orgmem":
        if isinstance(prompt_file, Mapping):
            raise ValueError("orgmem takes a single prompt_file")
        return OrgMemJudge(template=load_template("orgmem_rubric", prompt_file))
    if dataset == "locomo":
        if isinstance(prompt_file, Mapping):
            raise ValueError("locomo takes a single prompt_file")
        return LoCoMoJudge(template=load_template("locomo_judge", prompt_file))
    if dataset in ("longmemeval_s", "longmemeval"):
        return LongMemEvalJudge(templates=load_longmemeval_templates(prompt_file), dataset=dataset)
    raise ValueError(f"no judge for dataset {dataset!r}; expected orgmem, locomo or longmemeval_s")
