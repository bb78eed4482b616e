"""LongMemEval's rank formulas over plain document ids (``xiaowu0162/LongMemEval`` ``src/retrieval/eval_utils.py``
@ 6a92d1ab, re-implemented), and the in-budget recall of a rendered context.

DCG discounts ``rel[0] + sum_{i>=1} rel[i] / log2(i + 1)`` (0-based): the first two positions are both
undiscounted, unlike trec_eval's ``log2(i + 2)`` (:mod:`judges.metrics.standard`). The ideal DCG is
``min(k, |gold|)`` ones. Without gold LongMemEval returns 0; we return NaN so the question is left out.
The official LongMemEval_S protocol lives in :mod:`judges.metrics.longmemeval`.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence

NAN = float("nan")

__all__ = ["compute_question_metrics", "dcg", "in_budget_recall", "ndcg_at_k", "recall_all_at_k", "recall_any_at_k",
           "recall_at_k"]


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
    actual = dcg([1.0 if doc_id in gold_set else 0.0 for doc_id in ranked_ids[:k]], k)
    return actual / dcg([1.0] * min(k, len(gold_set)), k)


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


def compute_question_metrics(ranked_ids: Sequence[str], gold: Collection[str], ks: Sequence[int]) -> dict[str, float]:
    """``recall_any@k``, ``recall_all@k``, ``recall@k`` and ``ndcg@k`` for every k."""
    ranked = list(ranked_ids)
    out: dict[str, float] = {}
    for k in ks:
        out[f"recall_any@{k}"] = recall_any_at_k(ranked, gold, k)
        out[f"recall_all@{k}"] = recall_all_at_k(ranked, gold, k)
        out[f"recall@{k}"] = recall_at_k(ranked, gold, k)
        out[f"ndcg@{k}"] = ndcg_at_k(ranked, gold, k)
    return out
