"""Every metric the harness reports, described once (:class:`Metric`), and one episode's ranking and
context metrics computed in one call (:func:`episode_metrics`).

Two nDCG discounts. OrgMemBench and LoCoMo are scored by trec_eval (``pytrec_eval``, as BEIR does):
``recall_any@k`` is ``success_k``, ``recall_all@k`` is ``recall_k == 1``, ``ndcg_cut_k`` discounts
``1 / log2(rank + 1)``. LongMemEval's formulas (``xiaowu0162/LongMemEval`` ``src/retrieval/eval_utils.py``
@ 6a92d1ab, re-implemented; its official protocol is :mod:`judges.metrics.longmemeval`) discount
``rel[0] + sum_{i>=1} rel[i] / log2(i + 1)`` (0-based) with an ideal of ``min(k, |gold|)`` ones.
Without gold every metric is NaN (LongMemEval says 0): the question is left out.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pytrec_eval

from judges.metrics.lexical import bleu1, f1_multiset, f1_set
from memory_protocol import Hit, Question
from memplusplus.evidence import BlockLayout, RenderedContext

NAN = float("nan")
STAGES = ("ranking", "context", "judge", "answer")
SWEEP_COLUMNS = ("recall_any@10", "recall_any@50", "in_budget_recall")  # the columns a -m sweep table shows
TOLERANCE = 1e-6  # two stored values of a metric closer than this are the same (regression check)

Span = tuple[int, int]
Scorer = Callable[[Question, list[str], list[int]], dict[str, float]]  # a benchmark's own ranking scorer


# ---------------------------------------------------------------- LongMemEval's rank formulas
def _found_in_top_k(ranked_ids: Sequence[str], gold: Collection[str], k: int) -> tuple[int, int]:
    """(distinct gold ids in the top k, distinct gold ids)."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    gold_set = set(gold)
    return len(gold_set & set(ranked_ids[:k])), len(gold_set)


def dcg(relevances: Sequence[float], k: int) -> float:
    """DCG of the first k relevances with LongMemEval's discount (eval_utils.py ``dcg``)."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    head = list(relevances[:k])
    return float(head[0]) + sum(float(r) / math.log2(i + 1) for i, r in enumerate(head) if i >= 1) if head else 0.0


def recall_any_at_k(ranked_ids: Sequence[str], gold: Collection[str], k: int) -> float:
    found, total = _found_in_top_k(ranked_ids, gold, k)
    return NAN if total == 0 else float(found > 0)


def recall_all_at_k(ranked_ids: Sequence[str], gold: Collection[str], k: int) -> float:
    found, total = _found_in_top_k(ranked_ids, gold, k)
    return NAN if total == 0 else float(found == total)


def recall_at_k(ranked_ids: Sequence[str], gold: Collection[str], k: int) -> float:
    """The share of gold ids in the top k (not in LongMemEval's output: a finer extra)."""
    found, total = _found_in_top_k(ranked_ids, gold, k)
    return NAN if total == 0 else found / total


def ndcg_at_k(ranked_ids: Sequence[str], gold: Collection[str], k: int) -> float:
    """Binary-relevance nDCG@k as eval_utils.py ``ndcg``, assuming every gold id is in the corpus;
    duplicate ranked ids are a ValueError (they would lift DCG above the ideal)."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if len(set(ranked_ids)) != len(ranked_ids):
        raise ValueError("ranked_ids contains duplicate ids; a ranking must list each document once")
    gold_set = set(gold)
    if not gold_set:
        return NAN
    return ndcg([1.0 if doc_id in gold_set else 0.0 for doc_id in ranked_ids[:k]], k, len(gold_set))


def ndcg(relevances: Sequence[float], k: int, n_relevant: int) -> float:
    """DCG of the first k relevances over the ideal DCG, ``min(k, n_relevant)`` ones (0 when none)."""
    ideal = dcg([1.0] * min(k, n_relevant), k)
    return dcg(relevances, k) / ideal if ideal > 0 else 0.0


def compute_question_metrics(ranked_ids: Sequence[str], gold: Collection[str], ks: Sequence[int]) -> dict[str, float]:
    """``recall_any@k``, ``recall_all@k``, ``recall@k`` and ``ndcg@k`` for every k, LongMemEval's way."""
    ranked = list(ranked_ids)
    out: dict[str, float] = {}
    for k in ks:
        out[f"recall_any@{k}"] = recall_any_at_k(ranked, gold, k)
        out[f"recall_all@{k}"] = recall_all_at_k(ranked, gold, k)
        out[f"recall@{k}"] = recall_at_k(ranked, gold, k)
        out[f"ndcg@{k}"] = ndcg_at_k(ranked, gold, k)
    return out


# ---------------------------------------------------------------- trec_eval
def standard_metrics_many(questions: Sequence[tuple[Sequence[str], Collection[str]]],
                          ks: Sequence[int]) -> list[dict[str, float]]:
    """``recall_any@k``, ``recall_all@k``, ``recall@k``, ``ndcg@k`` of many (ranking, gold) pairs in
    one trec_eval call (building the evaluator costs about four evaluations); NaN for every key when
    gold is empty. Scores strictly decrease down the ranking (repeats dropped), so trec_eval's own
    tie-breaking never applies."""
    if any(k < 1 for k in ks):
        raise ValueError(f"every k must be >= 1, got {list(ks)}")
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for index, (ranked, gold) in enumerate(questions):
        if gold:
            ranking = list(dict.fromkeys(ranked))
            qrels[str(index)] = {doc_id: 1 for doc_id in set(gold)}
            # trec_eval needs at least one ranked document; an empty ranking scores 0 everywhere.
            run[str(index)] = {doc_id: float(len(ranking) - i) for i, doc_id in enumerate(ranking)} or {"\x00none": 0.0}
    scores: dict[str, dict[str, float]] = {}
    if qrels:
        cutoffs = ",".join(str(k) for k in sorted(set(ks)))
        measures = {f"success.{cutoffs}", f"recall.{cutoffs}", f"ndcg_cut.{cutoffs}"}
        scores = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    rows = []
    for index in range(len(questions)):
        got = scores.get(str(index))
        row: dict[str, float] = {}
        for k in ks:
            recall = NAN if got is None else float(got[f"recall_{k}"])
            row[f"recall_any@{k}"] = NAN if got is None else float(got[f"success_{k}"])
            row[f"recall_all@{k}"] = NAN if got is None else float(recall == 1.0)
            row[f"recall@{k}"] = recall
            row[f"ndcg@{k}"] = NAN if got is None else float(got[f"ndcg_cut_{k}"])
        rows.append(row)
    return rows


# ---------------------------------------------------------------- what the answerer reads
def in_budget_recall(gold: Collection[str], block_starts: Mapping[str, int], budget: int | None) -> float:
    """The share of gold ids whose block starts before ``budget`` characters of the rendered context
    (``block_starts``: retrieved doc id -> offset; None: the whole context is read)."""
    if budget is not None and budget < 0:
        raise ValueError(f"budget must be >= 0, got {budget}")
    gold_set = set(gold)
    if not gold_set:
        return NAN
    seen = sum(1 for g in gold_set if g in block_starts and (budget is None or block_starts[g] < budget))
    return seen / len(gold_set)


def document_spans(blocks: Sequence[BlockLayout]) -> dict[str, list[Span]]:
    """doc id -> the ``[start, end)`` spans of the full context attributed to its text: a document runs
    to the next one's start in its block or the block's end."""
    spans: dict[str, list[Span]] = {}
    for block in blocks:
        ordered = sorted(block.sources, key=lambda source: source[1])
        for index, (doc_id, inner) in enumerate(ordered):
            end = ordered[index + 1][1] if index + 1 < len(ordered) else block.length
            if end > inner:
                spans.setdefault(doc_id, []).append((block.start + inner, block.start + end))
    return spans


def chars_inside(spans: Sequence[Span], budget: int | None) -> int:
    """Characters covered by the union of ``spans`` that lie before ``budget`` (None: no cut)."""
    limit = math.inf if budget is None else budget
    covered, reach = 0, -1
    for start, end in sorted((start, min(end, limit)) for start, end in spans if start < limit and end > start):
        start = max(start, reach)
        if end > start:
            covered += int(end - start)
            reach = int(end)
    return covered


def in_budget_gold_chars(gold: Collection[str], spans: Mapping[str, Sequence[Span]], lengths: Mapping[str, int],
                         budget: int | None) -> float:
    """The share of the gold artefacts' own characters inside the first ``budget`` characters
    (``in_budget_recall`` counts a 9,000-character artefact in full when only its first line is read).
    A gold id counts once; one never rendered reads 0; headers and separators never count; a span
    rendered twice counts once. ``lengths``: each gold id's text length; NaN without gold text."""
    if budget is not None and budget < 0:
        raise ValueError(f"budget must be >= 0, got {budget}")
    gold_set = set(gold)
    unknown = sorted(g for g in gold_set if g not in lengths)
    if unknown:
        raise ValueError(f"gold id(s) {unknown[:3]} have no known text length")
    total = sum(lengths[g] for g in gold_set)
    if total == 0:
        return NAN
    return sum(min(lengths[g], chars_inside(spans.get(g, ()), budget)) for g in gold_set) / total


# ---------------------------------------------------------------- the registry
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
    """Add ``metric`` (a name already taken needs ``replace=True``); returns it. A ranking metric with
    a ``compute`` appears in every retrieval summary."""
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
    """The metric behind a summary column (``recall_any@10``, ``score_std``, ``f1_run2``, ...), None if unknown."""
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
            out.update({f"{metric.name}@{k}": metric.compute(ranked, gold, k) for k in ks
                        if f"{metric.name}@{k}" not in known})
        elif metric.name not in known:
            out[metric.name] = metric.compute(ranked, gold)
    return out


# ---------------------------------------------------------------- one episode
def ranked_ids(hits: Sequence[Hit]) -> list[str]:
    """Document ids in rank order; a chunk contributes each document it holds, once."""
    return list(dict.fromkeys(doc_id for hit in hits for doc_id in hit.source_ids))


def metric_ranking(hits: Sequence[Hit], deeper: Sequence[str] | None) -> list[str]:
    """The context's ranked ids, then the rest of a deeper ranking of the same system (if any)."""
    return list(dict.fromkeys([*ranked_ids(hits), *(deeper or ())]))


def episode_metrics(questions: Sequence[Question], hits: Sequence[list[Hit]], contexts: Sequence[RenderedContext],
                    ks: list[int], scorer: Scorer | None = None, deeper: Sequence[list[str] | None] | None = None,
                    lengths: Mapping[str, int] | None = None) -> list[dict[str, float]]:
    """Every retrieval metric of each question: the benchmark's ``scorer`` over the ranking extended
    by ``deeper``, else trec_eval's; ``in_budget_recall``; the registered ranking metrics the scorer did
    not give (``@all``: over whatever the system returned); with ``lengths``, ``in_budget_gold_chars``
    over each context's ``layouts``. An abstention question has no gold: no retrieval score."""
    golds = [[] if q.meta.get("abstention") else list(q.evidence_ids) for q in questions]
    ranked = [ranked_ids(h) for h in hits]
    rankings = [metric_ranking(h, d) for h, d in zip(hits, deeper or [None] * len(hits))]
    if scorer is None:
        rows = standard_metrics_many(list(zip(ranked, golds)), ks)
    else:
        rows = [scorer(question, ranking, ks) for question, ranking in zip(questions, rankings)]
    for row, gold, ids, context in zip(rows, golds, ranked, contexts):
        row["in_budget_recall"] = in_budget_recall(gold, context.block_starts, context.budget)
        row.update(computed_ranking_metrics(ids, gold, ks, row))
        if lengths is not None:
            spans = document_spans(context.layouts)
            row["in_budget_gold_chars"] = in_budget_gold_chars(gold, spans, lengths, context.budget)
    return rows
