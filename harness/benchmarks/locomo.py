"""LoCoMo (Maharana et al., 2024): 10 conversations, 1,986 questions in five categories.

Graded by mem0's CORRECT/WRONG judge (``judges/graders/locomo.py``), plus F1 (the paper's eq. 8),
mem0's set F1 and BLEU-1; adversarial questions (category 5) are averaged apart from ``overall``.
"""

from __future__ import annotations

from harness.benchmarks import AUTHORS_ANSWER_RULES, Benchmark
from judges.official.prompts import authors_answer
from judges.graders.locomo import LoCoMoJudge
from judges.metrics.punkt_data import PunktDataError, ensure_punkt_data
from loaders import DATASETS
from memory_protocol import ConfigError


def _punkt_ready() -> None:
    try:
        ensure_punkt_data()
    except PunktDataError as exc:
        raise ConfigError(str(exc)) from None


BENCHMARK = Benchmark(
    name="locomo",
    label="LoCoMo",
    loader=DATASETS["locomo"],
    judge=LoCoMoJudge.own,
    official_judge=LoCoMoJudge.official,  # the paper grades LoCoMo with mem0's judge
    official_answer=authors_answer,  # the Mem++ authors' template, evidence lines and date line
    answer_wording=AUTHORS_ANSWER_RULES,
    headline="llm_judge",
    extra_metrics=("f1", "f1_set", "bleu1"),
    table_metrics=("llm_judge", "f1", "bleu1"),
    exclude_from_overall=("adversarial",),
    check_ready=_punkt_ready,
    categories=(("single-hop", "single-hop"), ("multi-hop", "multi-hop"), ("temporal", "temporal"),
                ("open-domain", "open-domain"), ("overall", "overall"), ("adversarial (apart)", "adversarial")),
    tables=(2, 4),
    table_title=("LoCoMo by category", "LLM judge (mean ± std) / F1 / BLEU-1"),
    table_notes=("overall excludes adversarial questions, which are reported apart.",),
)
