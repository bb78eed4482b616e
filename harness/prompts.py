"""A run's answer and judge prompts, chosen and checked once: the user's ``prompt_file`` (``custom``,
with ``{context}`` and ``{question}``), else the benchmark's pinned official texts (the authors' answer
template on LoCoMo and LongMemEval_S; mem0's own for its Mem0/Zep rows on LoCoMo with
``answer_recipe=mem0``), else our words (``own``, told in one line). The :class:`Answerer` builds one
chat request per question by the benchmark's answer rule. Scores are comparable with the paper's only
when no role used ``own`` or ``custom`` words."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Protocol, TypeVar

from baselines.thirdparty.context import MEM0_LEG, ZEP_ENTITY_LEG, ZEP_FACT_LEG, leg_of
from harness.benchmarks import AnswerRule, Benchmark
from harness.config import ModelSpec
from judges.graders import Judge
from judges.official.texts import OfficialFileMissing, OfficialTexts, official_wording
from judges.templates import PromptTemplate, RequestParams, Wording, load_template
from memory_protocol import ConfigError, Hit, Question
from model_clients.chat_types import ChatRequest

__all__ = ["RECIPES", "Answerer", "Mem0Answer", "ProtocolPrompts", "choose_prompts", "display_name", "fill_fields"]

T = TypeVar("T")

# mem0ai/mem0 @ b3ede5b7, evaluation/src/{memzero,zep}/search.py: chat.completions.create(model=...,
# messages=[system], temperature=0.0), nothing else (../shared/official/SOURCE.md).
MEM0_ANSWER_PARAMS = RequestParams(temperature=0.0, omit=("max_tokens", "seed"))
# system kind -> the text keys of its prompt (and of Zep's context template)
RECIPES: dict[str, tuple[str, ...]] = {"mem0": ("mem0.answer",), "zep": ("mem0.answer_zep", "mem0.zep_context")}
_FIELD = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


class OfficialAnswer(Protocol):
    """An answer request read from official texts (OrgMemBench, the authors' template, mem0's)."""

    wording: Wording
    params: RequestParams

    def messages(self, question: Question, context: str, hits: Sequence[Hit] | None) -> list[dict[str, str]]: ...


def display_name(spec: ModelSpec | None) -> str:
    """The name for titles: the model for a generic ``openai_compatible`` config, else the config's name."""
    if spec is None:
        return "none"
    return spec.model if spec.name == "openai_compatible" else spec.name


def date_line(question: Question) -> str:
    """The moment the question is asked, when the dataset gives one, else its as-of date."""
    when: date | datetime | None = question.meta.get("question_date") or question.as_of
    if when is None:
        return ""
    text = when.strftime("%Y-%m-%d %H:%M") if isinstance(when, datetime) else when.isoformat()
    return f"Question date: {text}\n"


@dataclass(frozen=True)
class Answerer:
    """A benchmark's answer prompt and context rule (``budget``: characters, None: no cut), or with
    ``upstream`` the request that official code sends for the question and hits."""

    template: PromptTemplate | None
    rule: AnswerRule = AnswerRule()
    budget: int | None = None
    wording: Wording = Wording("own", "judges/prompts/answer.txt")
    upstream: Any = None  # an OfficialAnswer

    @classmethod
    def load(cls, prompt_file: str | None = None, rule: AnswerRule = AnswerRule(), budget: int | None = None,
             wording: Wording | None = None) -> "Answerer":
        template = load_template(rule.template, prompt_file)
        return cls(template, rule, budget, wording or Wording("own", template.source))

    @classmethod
    def official(cls, upstream: OfficialAnswer) -> "Answerer":
        return cls(None, wording=upstream.wording, upstream=upstream)

    def request(self, question: Question, context: str, hits: Sequence[Hit] | None = None) -> ChatRequest:
        if self.upstream is not None:
            params: RequestParams = self.upstream.params
            return ChatRequest(messages=self.upstream.messages(question, context, hits),
                               template_hash=self.wording.texts_sha256, temperature=params.temperature,
                               seed=params.seed, max_tokens=params.max_tokens, omit=params.omit)
        assert self.template is not None
        shown = context
        if self.rule.empty_context is not None:
            shown = context.strip() or self.rule.empty_context
        if self.rule.cut_at_budget and self.budget is not None:
            shown = shown[: self.budget]
        when = date_line(question) if self.rule.question_date else ""
        messages = self.template.messages(context=shown, question=question.text, date_line=when)
        return ChatRequest(messages=messages, template_hash=self.template.sha256)


def fill_fields(template: str, values: Mapping[str, str]) -> str:
    """Each ``{{name}}`` replaced as mem0's jinja ``Template`` renders these templates (they use no
    other jinja syntax); a field without a value is a ValueError."""
    def value(match: re.Match[str]) -> str:
        if match[1] not in values:
            raise ValueError(f"no value for the template field {{{{{match[1]}}}}}")
        return str(values[match[1]])

    return _FIELD.sub(value, template)


@dataclass(frozen=True)
class Mem0Answer:
    """mem0's answer request, ONE system message. Mem0: each speaker's ``"<timestamp>: <memory>"`` lines
    as ``json.dumps(..., indent=4)`` under the speaker's name (speaker 1: ``speaker_a``); Zep: its
    ``TEMPLATE.format(facts=..., entities=...)``. A hit's section is its leg (``baselines.thirdparty.context``)."""

    kind: str
    template: str
    wording: Wording
    context_template: str | None = None  # Zep's TEMPLATE
    params: RequestParams = MEM0_ANSWER_PARAMS

    def _values(self, question: str, hits: Sequence[Hit]) -> dict[str, str]:
        if self.kind == "zep":
            assert self.context_template is not None
            facts = "\n".join(h.text for h in hits if leg_of(h) == ZEP_FACT_LEG)
            entities = "\n".join(h.text for h in hits if leg_of(h) == ZEP_ENTITY_LEG)
            return {"memories": self.context_template.format(facts=facts, entities=entities), "question": question}
        speakers: dict[str, list[str]] = {}
        for hit in hits:
            if leg_of(hit).startswith(MEM0_LEG):
                speakers.setdefault(leg_of(hit).removeprefix(MEM0_LEG), []).append(hit.text)
        (name_1, lines_1), (name_2, lines_2) = (list(speakers.items()) + [("", [])] * 2)[:2]
        return {"speaker_1_user_id": name_1, "speaker_2_user_id": name_2, "question": question,
                "speaker_1_memories": json.dumps(lines_1, indent=4), "speaker_2_memories": json.dumps(lines_2, indent=4)}

    def messages(self, question: Any, context: str, hits: Sequence[Hit] | None) -> list[dict[str, str]]:
        """Without hits (a dry run prices the request before retrieval) the context stands for the memories."""
        values = self._values(question.text, hits) if hits is not None else {
            "memories": context, "speaker_1_memories": context, "speaker_2_memories": "[]",
            "speaker_1_user_id": "", "speaker_2_user_id": "", "question": question.text}
        return [{"role": "system", "content": fill_fields(self.template, values)}]


def mem0_answer(texts: OfficialTexts, kind: str) -> Mem0Answer:
    read = [texts.get(key) for key in RECIPES[kind]]
    what = {"mem0": "ANSWER_PROMPT", "zep": "ANSWER_PROMPT_ZEP, TEMPLATE"}[kind]
    return Mem0Answer(kind, read[0].text, official_wording(*read, what=what), read[1].text if len(read) > 1 else None)


@dataclass(frozen=True)
class ProtocolPrompts:
    """The answerer and judge of a run, and the lines telling about their words."""

    answerer: Answerer
    judge: Judge | None
    notes: tuple[str, ...] = ()

    @property
    def answer_source(self) -> str:
        return self.answerer.wording.source

    @property
    def judge_source(self) -> str | None:
        return self.judge.wording.source if self.judge is not None else None

    @property
    def recipe(self) -> str:
        """``mem0`` when the answerer sends mem0's own answer prompt (Mem0, Zep), else ``harness``."""
        return "mem0" if isinstance(self.answerer.upstream, Mem0Answer) else "harness"

    @property
    def label(self) -> str:
        """``official``, or the first of ``custom`` / ``own`` some role used."""
        sources = {self.answer_source, self.judge_source}
        return next((source for source in ("custom", "own") if source in sources), "official")

    @property
    def title_note(self) -> str:
        """`` [answer: authors, judge: official]``, with a warning when some words are not official."""
        roles = f"answer: {self.answer_source}" + (" (mem0's recipe)" if self.recipe == "mem0" else "")
        roles += f", judge: {self.judge_source}" if self.judge is not None else ""
        warning = f"; {self.label} wording: not comparable with published scores" if self.label != "official" else ""
        return f" [{roles}{warning}]"

    def record(self) -> dict[str, Any]:
        roles = {"answer": self.answerer.wording.record()}
        if self.judge is not None:
            roles["judge"] = self.judge.wording.record()
        return roles

    def check_batchable(self, answerer: ModelSpec, judge: ModelSpec | None, answer_tokens: int) -> None:
        """A ``batch=true`` role whose provider cannot serve these prompts' requests stops here: SDK (an
        extra) not installed, or requests it refuses (Anthropic: a judge's JSON mode, no ``max_tokens``)."""
        from model_clients.batch.runner import refusal, unavailable

        shapes: list[tuple[str, ModelSpec, int | None, dict[str, Any]]] = [("answerer", answerer, answer_tokens, {})]
        if judge is not None and self.judge is not None:
            params = self.judge.params
            judge_tokens = params.max_tokens if params.max_tokens is not None else judge.max_tokens
            shapes.append(("judge", judge, judge_tokens, params.extra()))
        for role, spec, max_tokens, extra in shapes:
            reason = (unavailable(spec, role) or refusal(spec, role, max_tokens, extra)) if spec.batch else None
            if reason is not None:
                raise ConfigError(reason)


def _official(role: str, build: Callable[[], T]) -> tuple[T | None, str | None]:
    """``build()``, or (None, the fallback line) when its upstream file is nowhere; any other
    problem with it is a ConfigError naming the role."""
    try:
        return build(), None
    except OfficialFileMissing as missing:
        return None, (f"{role}: the official wording ({missing.local}) was not found, so our own wording is used "
                      f"and the scores are not comparable with published ones; run "
                      f"`python scripts/fetch_official.py` or set official_dir")
    except ConfigError:
        raise
    except (LookupError, ValueError, SyntaxError) as exc:
        raise ConfigError(f"{role}: the official wording cannot be read: {exc}") from None


def _answerer(benchmark: Benchmark, spec: ModelSpec, reader: OfficialTexts, mem0_kind: str | None,
              budget: int | None) -> tuple[Answerer, str | None]:
    if spec.prompt_file:
        try:
            return Answerer.load(spec.prompt_file, benchmark.answer, budget, Wording("custom", str(spec.prompt_file))), None
        except (OSError, ValueError) as exc:
            raise ConfigError(f"answerer.prompt_file: {exc}") from None
    note = None
    if mem0_kind is not None:
        recipe, note = _official("answerer", lambda: mem0_answer(reader, mem0_kind))
        if recipe is not None:
            return Answerer.official(recipe), None
    elif benchmark.official_answer is not None:
        upstream, note = _official("answerer", lambda: benchmark.official_answer(reader))  # type: ignore[misc]
        if upstream is not None:
            if upstream.params.seed is not None and spec.seed is None:
                # a model config without a seed (Claude's): the authors' Anthropic path sends none either
                params = dataclasses.replace(upstream.params, seed=None, omit=("seed",))
                upstream = dataclasses.replace(upstream, params=params)
            return Answerer.official(upstream), None
    return Answerer.load(None, benchmark.answer, budget, benchmark.answer_wording), note


def _judge(benchmark: Benchmark, spec: ModelSpec | None, reader: OfficialTexts) -> tuple[Judge | None, str | None]:
    if spec is None:
        return None, None
    if spec.prompt_file:
        try:
            judge = benchmark.judge(spec.prompt_file)
        except (OSError, ValueError) as exc:
            raise ConfigError(f"judge.prompt_file: {exc}") from None
        return dataclasses.replace(judge, wording=Wording("custom", str(spec.prompt_file))), None  # type: ignore[type-var]
    note = None
    if benchmark.official_judge is not None:
        official, note = _official("judge", lambda: benchmark.official_judge(reader))  # type: ignore[misc]
        if official is not None:
            return official, None
    return benchmark.judge(None), note


def choose_prompts(benchmark: Benchmark, answerer: ModelSpec, judge: ModelSpec | None, *, recipe: str = "harness",
                   system_kind: str = "", context_budget: int | None = None,
                   official_dir: Any = None) -> ProtocolPrompts:
    """The prompts of an answered run; ConfigError (one line) for a broken prompt file or a
    changed official file. mem0's recipe applies to its own rows (``RECIPES``) on LoCoMo only."""
    reader = OfficialTexts.search(official_dir)
    mem0_kind = system_kind if recipe == "mem0" and system_kind in RECIPES and benchmark.name == "locomo" else None
    chosen_answerer, answer_note = _answerer(benchmark, answerer, reader, mem0_kind, context_budget)
    chosen_judge, judge_note = _judge(benchmark, judge, reader)
    return ProtocolPrompts(chosen_answerer, chosen_judge, tuple(n for n in (answer_note, judge_note) if n))
