"""LongMemEval's rank formulas over plain document ids (any ranking, any gold set).

Nothing here knows about a memory system, a loader or a dataset. Reference: LongMemEval (Wu et al.,
ICLR 2025, arXiv:2410.10813), ``xiaowu0162/LongMemEval`` (MIT), ``src/retrieval/eval_utils.py``
(commit 6a92d1ab), re-implemented:

* ``recall_any@k`` = 1 if any gold id is among the top k, ``recall_all@k`` = 1 if every gold id is.
* DCG uses the discount ``rel[0] + sum_{i>=1} rel[i] / log2(i + 1)`` (0-based positions), i.e. the
  first two positions are both undiscounted. This differs from the common ``rel[i] / log2(i + 2)``
  that trec_eval uses (:mod:`judges.metrics.standard`).
* The ideal DCG is ``min(k, number of gold ids)`` ones; it does not depend on the ranking's length.
  LongMemEval returns 0 when there is no gold; we return NaN so the caller leaves the question out.

The official LongMemEval_S protocol (user-turn corpus, relabelled non-evidence turns, skipped
questions, session widening) lives in :mod:`judges.metrics.longmemeval`; this module also gives the
all-turn variant recorded beside it.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence

NAN = float("nan")

__all__ = [
    "dcg",
    "recall_any_at_k",
    "recall_all_at_k",
    "recall_at_k",
    "ndcg_at_k",
    "in_budget_recall",
    "compute_question_metrics",
]


# ---------------------------------------------------------------------------------------------
# small helpers
# ---------------------------------------------------------------------------------------------


def _check_k(k: int) -> None:
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")


def _check_distinct(ranked_ids: Sequence[str]) -> None:
    if len(set(ranked_ids)) != len(ranked_ids):
        raise ValueError("ranked_ids contains duplicate ids; a ranking must list each document once")


def _found_in_top_k(ranked_ids: Sequence[str], gold: Collection[str], k: int) -> tuple[int, int]:
    """(number of distinct gold ids in the top k, number of distinct gold ids)."""
    _check_k(k)
    gold_set = set(gold)
    top = set(ranked_ids[:k])
    return len(gold_set & top), len(gold_set)


# ---------------------------------------------------------------------------------------------
# document level
# ---------------------------------------------------------------------------------------------


def dcg(relevances: Sequence[float], k: int) -> float:
    """DCG of the first k relevances with LongMemEval's discount (eval_utils.py ``dcg``).

    ``rel[0] + sum_{i=1}^{n-1} rel[i] / log2(i + 1)`` over ``n = min(k, len(relevances))``:
    positions 0 and 1 are both undiscounted, position 2 is divided by log2(3), and so on.
    """
    _check_k(k)
    head = list(relevances[:k])
    if not head:
        return 0.0
    return float(head[0]) + sum(float(r) / math.log2(i + 1) for i, r in enumerate(head) if i >= 1)


def recall_any_at_k(ranked_ids: Sequence[str], gold: Collection[str], k: int) -> float:
    """1.0 if at least one gold id is in the top k, else 0.0; NaN when gold is empty."""
    found, total = _found_in_top_k(ranked_ids, gold, k)
    if total == 0:
        return NAN
    return 1.0 if found > 0 else 0.0


def recall_all_at_k(ranked_ids: Sequence[str], gold: Collection[str], k: int) -> float:
    """1.0 if every gold id is in the top k, else 0.0; NaN when gold is empty."""
    found, total = _found_in_top_k(ranked_ids, gold, k)
    if total == 0:
        return NAN
    return 1.0 if found == total else 0.0


def recall_at_k(ranked_ids: Sequence[str], gold: Collection[str], k: int) -> float:
    """Fraction of the distinct gold ids found in the top k; NaN when gold is empty.

    Not part of LongMemEval's output (it reports only any/all); a finer-grained extra.
    """
    found, total = _found_in_top_k(ranked_ids, gold, k)
    if total == 0:
        return NAN
    return found / total


def ndcg_at_k(ranked_ids: Sequence[str], gold: Collection[str], k: int) -> float:
    """Binary-relevance nDCG@k as in LongMemEval's eval_utils.py ``ndcg``.

    Actual DCG: relevances (1 if in gold) of the top-k ranked ids, with :func:`dcg`'s discount.
    Ideal DCG: ``min(k, |gold|)`` ones, independent of the ranking's length (LongMemEval sorts the
    relevances of the whole corpus; that equals |gold| ones when every gold id is a corpus document,
    which is assumed here). NaN when gold is empty (LongMemEval returns 0 and then skips the question).
    Raises ValueError on duplicate ranked ids (they would inflate DCG above the ideal).
    """
    _check_k(k)
    _check_distinct(ranked_ids)
    gold_set = set(gold)
    if not gold_set:
        return NAN
    actual = dcg([1.0 if doc_id in gold_set else 0.0 for doc_id in ranked_ids[:k]], k)
    ideal = dcg([1.0] * min(k, len(gold_set)), k)
    return actual / ideal


# ---------------------------------------------------------------------------------------------
# rendered-context budget
# ---------------------------------------------------------------------------------------------


def in_budget_recall(gold: Collection[str], block_starts: Mapping[str, int], budget: int | None) -> float:
    """Share of gold ids whose evidence block starts before ``budget`` characters of the context.

    ``block_starts`` maps each retrieved doc id to the character offset where its block starts in
    the full rendered context; a gold id absent from it (not retrieved) counts as missed. A block
    starting at offset ``budget`` or later is unseen by a reader that reads ``budget`` characters.
    ``budget=None`` means the whole context is read. NaN when gold is empty.
    """
    if budget is not None and budget < 0:
        raise ValueError(f"budget must be >= 0, got {budget}")
    gold_set = set(gold)
    if not gold_set:
        return NAN
    seen = sum(
        1
        for g in gold_set
        if g in block_starts and (budget is None or block_starts[g] < budget)
    )
    return seen / len(gold_set)


# ---------------------------------------------------------------------------------------------
# one question
# ---------------------------------------------------------------------------------------------


def compute_question_metrics(ranked_ids: Sequence[str], gold: Collection[str], ks: Sequence[int]) -> dict[str, float]:
    """``recall_any@k``, ``recall_all@k``, ``recall@k`` and ``ndcg@k`` for every k, LongMemEval's formulas."""
    ranked = list(ranked_ids)
    out: dict[str, float] = {}
    for k in ks:
        out[f"recall_any@{k}"] = recall_any_at_k(ranked, gold, k)
        out[f"recall_all@{k}"] = recall_all_at_k(ranked, gold, k)
        out[f"recall@{k}"] = recall_at_k(ranked, gold, k)
        out[f"ndcg@{k}"] = ndcg_at_k(ranked, gold, k)
    return out
