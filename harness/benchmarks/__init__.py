"""A benchmark described once: everything the harness needs to run, answer, grade and tabulate it.

Each benchmark is one module defining ``BENCHMARK = Benchmark(...)`` plus one dataset config
(``configs/dataset/<name>.yaml``) whose ``benchmark:`` key names that module by its dotted path,
so a benchmark in another package works the same way and no registry is edited. Without the
key, ``harness.benchmarks.<dataset name>`` is used.

The orchestration (runner, QA stage, config checks) reads only this description; a benchmark's
quirks are fields or small hooks here rather than tests of its name elsewhere.
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
    """How the answerer is asked.

    ``template``: the built-in prompt (``judges/prompts/<template>.txt``), replaced by
    ``answerer.prompt_file``. ``question_date``: show the question's date line. ``empty_context``:
    when set, the context is stripped and this line stands for an empty one. ``cut_at_budget``: the
    answerer itself reads only the first ``dataset.context_budget`` characters of what it is shown.
    """

    template: str = "answer"
    question_date: bool = True
    empty_context: str | None = None
    cut_at_budget: bool = False


@dataclass(frozen=True)
class Benchmark:
    """One benchmark.

    - ``loader``: its files -> episodes (``loaders.load_dataset`` takes it directly).
    - ``judge``: builds the grader from ``judge.prompt_file`` (None: the built-in wording);
      ``judge_prompt_folder`` describes the folder that file must be, when it is a folder.
    - ``official_judge`` / ``official_answer``: the grader / answerer with the benchmark's official
      texts, read from pinned upstream files or a templates file (None: the benchmark has none); see
      :mod:`harness.prompts`. ``answer_wording``: where the built-in answer prompt's rules come from.
    - ``headline``: the judge metric of its tables (a registered metric, 0-100);
      ``extra_metrics``: answer metrics computed per graded question (registered, with a compute);
      ``table_metrics``: what its paper table shows (default: the headline alone).
    - ``exclude_from_overall``: categories averaged apart from ``overall``; with an answerer,
      questions flagged ``meta["abstention"]`` move to ``abstention_row`` (when set), also apart.
      ``task_averaged_row``: a row with the unweighted mean over the question types.
    - ``empty_answer``: the line the judge grades in place of an empty answer (None: as given).
    - ``official_scorer``: for an episode, the benchmark's own retrieval scoring of a question
      (it reports the session families), or None for the standard trec_eval scores.
    - ``check_ready``: raises :class:`ConfigError` when something the QA stage needs is missing.
    - ``categories``: (column label, summary category) pairs in display order, ``tables``: the
      paper tables it appears in, with ``table_title`` and ``table_notes``.
    """

    name: str
    label: str
    loader: DatasetLoader
    judge: Callable[[PromptFile], Judge]
    headline: str
    answer: AnswerRule = AnswerRule()
    answer_wording: Wording = Wording("own", "judges/prompts/answer.txt")
    official_judge: Callable[[OfficialTexts], Judge] | None = None
    official_answer: Callable[[OfficialTexts], Any] | None = None  # -> harness.answering.OfficialAnswer
    judge_prompt_folder: str | None = None
    extra_metrics: tuple[str, ...] = ()
    table_metrics: tuple[str, ...] = ()
    exclude_from_overall: tuple[str, ...] = ()
    abstention_row: str | None = None
    task_averaged_row: str | None = None
    empty_answer: str | None = None
    official_scorer: Callable[[Episode], QuestionScorer | None] | None = None
    check_ready: Callable[[], None] | None = None
    categories: tuple[tuple[str, str], ...] = ()
    tables: tuple[int, ...] = ()
    table_title: tuple[str, str] = ("", "")
    table_notes: tuple[str, ...] = ()

    @property
    def shown_metrics(self) -> tuple[str, ...]:
        """The judge metrics its tables show, the headline first."""
        return self.table_metrics or (self.headline,)

    def overall_excludes(self, answered: bool) -> list[str]:
        """The rows left out of ``overall``: its excluded categories, and with an answerer its
        abstention row."""
        rows = list(self.exclude_from_overall)
        return rows + [self.abstention_row] if answered and self.abstention_row else rows

    def graded_text(self, answer: str) -> str:
        """The answer the judge sees."""
        return (answer.strip() or self.empty_answer) if self.empty_answer is not None else answer

    def scorer_for(self, episode: Episode) -> QuestionScorer | None:
        return self.official_scorer(episode) if self.official_scorer is not None else None


def benchmark_path(dataset: Mapping[str, Any] | Any) -> str:
    """The module describing a dataset config's benchmark (a mapping or a ``DatasetSpec``)."""
    get = dataset.get if isinstance(dataset, Mapping) else lambda key, default=None: getattr(dataset, key, default)
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
