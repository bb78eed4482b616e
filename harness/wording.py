"""Which words the answerer and the judge send: the official texts when they can be read, else
ours, told in one line and recorded.

For each role the choice is: the user's ``prompt_file`` (``custom``); else the benchmark's official
texts (the judge's ``official``; the answerer's ``official`` for OrgMemBench, ``authors`` for
LoCoMo and LongMemEval_S, the Mem++ authors' template since the paper states none), read by
:class:`judges.official.texts.OfficialTexts` from an upstream file or a templates file in
``official_dir``, ``$MEMPP_OFFICIAL_DIR``, ``../shared/official``, ``./official``, ``<repo>/official``;
else our built-in prompt (``own``). A source that holds the file but not the pinned bytes or texts
stops the run (ConfigError), it never falls back.

metrics.json names each role's source apart (``answer_wording``: authors | official | own | custom,
``judge_wording``: official | own | custom). With ``answer_recipe=mem0`` the Mem0 and Zep rows on
LoCoMo answer with mem0's own prompt (``harness.mem0_recipe``; ``answer_recipe`` in metrics.json).
A run's ``wording`` is ``official`` when no role used ``own`` or ``custom`` words; its scores are
comparable with the paper's only then.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from harness.answering import Answerer
from harness.benchmarks import Benchmark
from harness.config import RunConfig
from harness.mem0_recipe import RECIPES, Mem0Answer, mem0_answer
from judges.graders import Judge
from judges.official.locate import OfficialFileMissing
from judges.official.texts import OfficialTexts
from judges.wording import Wording
from memory_protocol import ConfigError

__all__ = ["ProtocolPrompts", "choose_prompts"]

T = TypeVar("T")


@dataclass(frozen=True)
class ProtocolPrompts:
    """The answerer and judge a run uses, and what to say about their words."""

    answerer: Answerer
    judge: Judge | None
    notes: tuple[str, ...] = field(default=())

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
    def title_note(self) -> str:
        """`` [answer: authors, judge: official]``, and the warning when a role's words are not official."""
        answer = f"answer: {self.answer_source}" + (" (mem0's recipe)" if self.recipe == "mem0" else "")
        roles = answer + (f", judge: {self.judge_source}" if self.judge is not None else "")
        warning = f"; {self.label} wording: not comparable with published scores" if self.label != "official" else ""
        return f" [{roles}{warning}]"

    @property
    def label(self) -> str:
        """``official``, or the first of ``custom`` / ``own`` some role used."""
        sources = {self.answerer.wording.source} | ({self.judge.wording.source} if self.judge is not None else set())
        for source in ("custom", "own"):
            if source in sources:
                return source
        return "official"

    def record(self) -> dict[str, Any]:
        roles = {"answer": self.answerer.wording.record()}
        if self.judge is not None:
            roles["judge"] = self.judge.wording.record()
        return roles


def _fallback_line(role: str, missing: OfficialFileMissing) -> str:
    return (f"{role}: the official wording ({missing.local}) was not found, so our own wording is used and the "
            f"scores are not comparable with published ones; run `python scripts/fetch_official.py` or set "
            f"official_dir")


def _official(role: str, build: Callable[[], T]) -> tuple[T | None, str | None]:
    """``build()``, or (None, the fallback line) when its upstream file is nowhere; any other
    problem with the upstream file is a ConfigError naming the role."""
    try:
        return build(), None
    except OfficialFileMissing as missing:
        return None, _fallback_line(role, missing)
    except ConfigError:
        raise
    except (LookupError, ValueError, SyntaxError) as exc:
        raise ConfigError(f"{role}: the official wording cannot be read: {exc}") from None


def _answerer(config: RunConfig, benchmark: Benchmark, reader: OfficialTexts) -> tuple[Answerer, str | None]:
    assert config.answerer is not None
    budget = config.dataset.context_budget
    prompt_file = config.answerer.prompt_file
    if prompt_file:
        try:
            return Answerer.load(prompt_file, benchmark.answer, budget, Wording("custom", str(prompt_file))), None
        except (OSError, ValueError) as exc:
            raise ConfigError(f"answerer.prompt_file: {exc}") from None
    note = None
    kind = config.system.kind
    if config.answer_recipe == "mem0" and kind in RECIPES and benchmark.name == "locomo":
        recipe, note = _official("answerer", lambda: mem0_answer(reader, kind))
        if recipe is not None:
            return Answerer.official(recipe), None
    elif benchmark.official_answer is not None:
        upstream, note = _official("answerer", lambda: benchmark.official_answer(reader))  # type: ignore[misc]
        if upstream is not None:
            if upstream.params.seed is not None and config.answerer.seed is None:
                # a model config without a seed (Claude's): the authors' Anthropic path sends none either
                upstream = dataclasses.replace(upstream, params=dataclasses.replace(upstream.params, seed=None,
                                                                                    omit=("seed",)))
            return Answerer.official(upstream), None
    return Answerer.load(None, benchmark.answer, budget, benchmark.answer_wording), note


def _judge(config: RunConfig, benchmark: Benchmark, reader: OfficialTexts) -> tuple[Judge | None, str | None]:
    if config.judge is None:
        return None, None
    prompt_file = config.judge.prompt_file
    if prompt_file:
        try:
            judge = benchmark.judge(prompt_file)
        except (OSError, ValueError) as exc:
            raise ConfigError(f"judge.prompt_file: {exc}") from None
        return dataclasses.replace(judge, wording=Wording("custom", str(prompt_file))), None  # type: ignore[type-var]
    note = None
    if benchmark.official_judge is not None:
        official, note = _official("judge", lambda: benchmark.official_judge(reader))  # type: ignore[misc]
        if official is not None:
            return official, None
    return benchmark.judge(None), note


def choose_prompts(config: RunConfig) -> ProtocolPrompts:
    """The prompts of an answered run (ConfigError, one line, for a broken prompt file or a
    changed official file)."""
    benchmark = config.dataset.describe()
    reader = OfficialTexts.search(config.official_dir)
    answerer, answer_note = _answerer(config, benchmark, reader)
    judge, judge_note = _judge(config, benchmark, reader)
    return ProtocolPrompts(answerer, judge, tuple(note for note in (answer_note, judge_note) if note))
