"""Every metric the harness reports, described once (stage, per-question ``compute``, decimals, label).
A family (``per_k``) is reported as ``<name>@<k>``; ``<name>_std``, ``_paper`` and ``_run<i>`` resolve to
their metric. A ranking metric registered with a ``compute`` appears in every retrieval summary."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from judges.metrics.lexical import bleu1, f1_multiset, f1_set
from judges.metrics.retrieval import ndcg_at_k, recall_all_at_k, recall_any_at_k

__all__ = ["Metric", "SWEEP_COLUMNS", "TOLERANCE", "by_stage", "lookup", "register", "retrieval_summary_keys",
           "unregister"]

STAGES = ("ranking", "context", "judge", "answer")
SWEEP_COLUMNS = ("recall_any@10", "recall_any@50", "in_budget_recall")  # the columns a -m sweep table shows
TOLERANCE = 1e-6  # two stored values of a metric closer than this are the same (regression check)


@dataclass(frozen=True)
class Metric:
    """``compute``: ``(ranked_ids, gold_ids[, k])`` -> float (NaN: not scored) for ranking metrics,
    ``(answer, gold_answer)`` for answer metrics; None where the stage computes it itself (trec_eval,
    an official scorer, the context layout, the judge). ``decimals=None``: 1 above 1.0, else 3.
    ``sessions``: a session-level family, reported only where the benchmark scores sessions."""

    name: str
    label: str
    stage: str = "ranking"
    per_k: bool = False
    compute: Callable[..., float] | None = None
    decimals: int | None = 3
    higher_is_better: bool = True
    sessions: bool = False

    def __post_init__(self) -> None:
        if self.stage not in STAGES:
            raise ValueError(f"metric {self.name!r}: stage {self.stage!r} is not one of {STAGES}")

    def format(self, value: float) -> str:
        decimals = self.decimals if self.decimals is not None else (1 if abs(value) > 1.0 else 3)
        return f"{value:.{decimals}f}"


def _judge(name: str, label: str) -> Metric:
    return Metric(name, label, stage="judge", decimals=1)


def _answer(name: str, label: str, compute: Callable[[Any, Any], float]) -> Metric:
    return Metric(name, label, stage="answer", compute=compute, decimals=None)


# Built-ins, in summary column order (within a stage).
_BUILTIN: tuple[Metric, ...] = (
    Metric("recall_any", "recall (any gold) @k", per_k=True, compute=recall_any_at_k),
    Metric("recall_all", "recall (all gold) @k", per_k=True, compute=recall_all_at_k),
    Metric("ndcg", "nDCG@k", per_k=True, compute=ndcg_at_k),
    Metric("session_recall_any", "session recall (any gold) @k", per_k=True, sessions=True),
    Metric("session_recall_all", "session recall (all gold) @k", per_k=True, sessions=True),
    Metric("session_ndcg", "session nDCG@k", per_k=True, sessions=True),
    Metric("recall_any@all", "recall (any gold) over all retrieved",
           compute=lambda ranked, gold: recall_any_at_k(ranked, gold, max(len(ranked), 1))),
    Metric("recall_all@all", "recall (all gold) over all retrieved",
           compute=lambda ranked, gold: recall_all_at_k(ranked, gold, max(len(ranked), 1))),
    Metric("in_budget_recall", "gold blocks starting inside the budget", stage="context"),
    Metric("in_budget_gold_chars", "gold characters inside the budget", stage="context"),
    _judge("score", "rubric score (0-100)"),
    _judge("llm_judge", "LLM judge (0-100)"),
    _judge("accuracy", "accuracy (0-100)"),
    _answer("f1", "F1 (token multisets)", lambda answer, gold: 100.0 * f1_multiset(answer, gold)),
    _answer("f1_set", "F1 (token sets)", lambda answer, gold: 100.0 * f1_set(answer, gold)),
    _answer("bleu1", "BLEU-1", lambda answer, gold: 100.0 * bleu1(answer, gold)),
)

_registry: dict[str, Metric] = {metric.name: metric for metric in _BUILTIN}
_DERIVED = re.compile(r"^(?P<base>.+?)(?:_std|_paper|_run\d+)$")


def register(metric: Metric, replace: bool = False) -> Metric:
    """Add ``metric`` (a name already taken needs ``replace=True``); returns it."""
    if metric.name in _registry and not replace:
        raise ValueError(f"metric {metric.name!r} is already registered")
    _registry[metric.name] = metric
    return metric


def unregister(name: str) -> None:
    """Remove a metric added with :func:`register` (built-ins stay)."""
    if name in {m.name for m in _BUILTIN}:
        raise ValueError(f"metric {name!r} is built in")
    _registry.pop(name, None)


def by_stage(*stages: str) -> list[Metric]:
    return [metric for metric in _registry.values() if metric.stage in stages]


def lookup(key: str) -> Metric | None:
    """The metric behind a summary column (``recall_any@10``, ``score_std``, ...), None if unknown."""
    if key in _registry:
        return _registry[key]
    derived = _DERIVED.match(key)
    if derived and derived["base"] in _registry:
        return _registry[derived["base"]]
    base, at, _ = key.rpartition("@")
    metric = _registry.get(base) if at else None
    return metric if metric is not None and metric.per_k else None


def retrieval_summary_keys(ks: Sequence[int], sessions: bool) -> list[str]:
    """The families at each k (k-major), the session families where scored, then the single-valued ones."""
    families = [m for m in by_stage("ranking") if m.per_k]
    keys = [f"{m.name}@{k}" for k in ks for m in families if not m.sessions]
    if sessions:
        keys += [f"{m.name}@{k}" for k in ks for m in families if m.sessions]
    return keys + [m.name for m in by_stage("ranking", "context") if not m.per_k]


def computed_ranking_metrics(ranked: Sequence[str], gold: Sequence[str], ks: Iterable[int],
                             known: dict[str, float]) -> dict[str, float]:
    """Values of the registered ranking metrics with a ``compute`` that ``known`` lacks."""
    out: dict[str, float] = {}
    for metric in by_stage("ranking"):
        if metric.compute is None or metric.sessions:
            continue
        if metric.per_k:
            for k in ks:
                key = f"{metric.name}@{k}"
                if key not in known:
                    out[key] = metric.compute(ranked, gold, k)
        elif metric.name not in known:
            out[metric.name] = metric.compute(ranked, gold)
    return out
