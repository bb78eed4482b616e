"""A benchmark described once, what the harness needs to load, answer, grade and tabulate it: a module
defining ``BENCHMARK = Benchmark(...)``, named by a dataset config's ``benchmark:`` key (dotted path;
default ``harness.benchmarks.<name>``). The stages read only this description, never a benchmark's name.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judges.graders import Judge
from judges.official.texts import OfficialTexts
from judges.templates import Wording
from loaders import DatasetLoader
from memory_protocol import ConfigError, Episode, Question

__all__ = ["AUTHORS_ANSWER_RULES", "AnswerRule", "Benchmark", "QuestionScorer", "benchmark_path", "load_benchmark"]

BUILTIN_PACKAGE = "harness.benchmarks"

# A benchmark's own retrieval scoring of one question: (question, ranked ids, ks) -> metric values.
QuestionScorer = Callable[[Question, Sequence[str], Sequence[int]], dict[str, float]]
PromptFile = str | Path | Mapping[str, str | Path] | None


# The paper states no answer prompt for LoCoMo or LongMemEval_S; without the authors' template
# (judges.official.prompts), ``judges/prompts/answer.txt`` gives its rules in our words.
AUTHORS_ANSWER_RULES = Wording(
    "own",
    "judges/prompts/answer.txt (our words for the rules of AIDAChip-Inc/mem-plus-plus@919659777943:eval/llm.py "
    "ANSWER_PROMPT_TEMPLATE, memory-research-answer-v2)",
)


@dataclass(frozen=True)
class AnswerRule:
    """How the answerer is asked: ``template`` (``judges/prompts/<template>.txt``, or ``answerer.prompt_file``),
    the question's date line, the line standing for an empty (stripped) context, and whether the
    answerer reads only ``dataset.context_budget`` characters."""

    template: str = "answer"
    question_date: bool = True
    empty_context: str | None = None
    cut_at_budget: bool = False


@dataclass(frozen=True)
class Benchmark:
    """One benchmark. ``judge`` builds the grader from ``judge.prompt_file`` (None: built-in wording; no
    judge: retrieval only); ``official_judge``/``official_answer`` use its official texts. ``headline``
    is its tables' judge metric, ``extra_metrics`` per-question answer metrics, ``table_metrics`` what
    its paper table shows. ``exclude_from_overall`` and ``abstention_row`` (answered) are averaged
    apart from ``overall``; ``empty_answer`` is graded for an empty answer; ``official_scorer`` is its
    own retrieval scoring (else trec_eval's); ``check_ready`` raises ConfigError when QA lacks something."""

    name: str
    label: str
    loader: DatasetLoader
    judge: Callable[[PromptFile], Judge] | None = None
    headline: str | None = None
    answer: AnswerRule = AnswerRule()
    answer_wording: Wording = Wording("own", "judges/prompts/answer.txt")
    official_judge: Callable[[OfficialTexts], Judge] | None = None
    official_answer: Callable[[OfficialTexts], Any] | None = None  # -> harness.prompts.OfficialAnswer
    judge_prompt_folder: str | None = None
    extra_metrics: tuple[str, ...] = ()
    table_metrics: tuple[str, ...] = ()
    exclude_from_overall: tuple[str, ...] = ()
    abstention_row: str | None = None
    task_averaged_row: str | None = None
    empty_answer: str | None = None
    official_scorer: Callable[[Episode], QuestionScorer | None] | None = None
    check_ready: Callable[[], None] | None = None
    categories: tuple[tuple[str, str], ...] = ()  # (column label, summary category), in display order
    tables: tuple[int, ...] = ()  # the paper tables it appears in
    table_title: tuple[str, str] = ("", "")
    table_notes: tuple[str, ...] = ()

    @property
    def shown_metrics(self) -> tuple[str, ...]:
        """The judge metrics its tables show, the headline first."""
        return self.table_metrics or ((self.headline,) if self.headline else ())

    def overall_excludes(self, answered: bool) -> list[str]:
        rows = list(self.exclude_from_overall)
        return rows + [self.abstention_row] if answered and self.abstention_row else rows

    def graded_text(self, answer: str) -> str:
        return (answer.strip() or self.empty_answer) if self.empty_answer is not None else answer

    def scorer_for(self, episode: Episode) -> QuestionScorer | None:
        return self.official_scorer(episode) if self.official_scorer is not None else None


def benchmark_path(dataset: Mapping[str, Any] | Any) -> str:
    """The module describing a dataset config's benchmark (a mapping or a ``DatasetSpec``)."""
    get = dataset.get if isinstance(dataset, Mapping) else lambda key: getattr(dataset, key, None)
    return str(get("benchmark") or f"{BUILTIN_PACKAGE}.{get('name')}")


def load_benchmark(path: str) -> Benchmark:
    """Import ``path`` and return its ``BENCHMARK``; a ConfigError names what is wrong."""
    try:
        module = importlib.import_module(path)
    except ImportError as exc:
        raise ConfigError(f"dataset.benchmark={path!r}: cannot import it ({exc}); give the dotted path of a "
                          f"module that defines BENCHMARK") from None
    found = getattr(module, "BENCHMARK", None)
    if not isinstance(found, Benchmark):
        raise ConfigError(f"dataset.benchmark={path!r}: the module defines no BENCHMARK = Benchmark(...)")
    return found
