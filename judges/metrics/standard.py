"""Standard recall and nDCG (OrgMemBench, LoCoMo) by trec_eval (``pytrec_eval``, as BEIR uses):
``success_k`` is ``recall_any@k``, ``recall_k`` is ``recall@k`` (``recall_all@k``: it equals 1), ``ndcg_cut_k``
discounts ``1 / log2(rank + 1)``, unlike LongMemEval's (:mod:`judges.metrics.longmemeval`)."""

from __future__ import annotations

from collections.abc import Collection, Sequence

import pytrec_eval

NAN = float("nan")

__all__ = ["standard_metrics", "standard_metrics_many"]


def standard_metrics(ranked_ids: Sequence[str], gold: Collection[str], ks: Sequence[int]) -> dict[str, float]:
    """``recall_any@k``, ``recall_all@k``, ``recall@k``, ``ndcg@k`` per k; NaN for every key when gold is empty."""
    return standard_metrics_many([(ranked_ids, gold)], ks)[0]


def standard_metrics_many(questions: Sequence[tuple[Sequence[str], Collection[str]]],
                          ks: Sequence[int]) -> list[dict[str, float]]:
    """:func:`standard_metrics` of many (ranking, gold) pairs in one trec_eval call (building the
    evaluator costs about four evaluations). Scores strictly decrease down the ranking (repeats
    dropped), so trec_eval's own tie-breaking never applies."""
    if any(k < 1 for k in ks):
        raise ValueError(f"every k must be >= 1, got {list(ks)}")
    keys = [f"{name}@{k}" for k in ks for name in ("recall_any", "recall_all", "recall", "ndcg")]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for index, (ranked_ids, gold) in enumerate(questions):
        if not gold:
            continue
        ranking = list(dict.fromkeys(ranked_ids))
        qrels[str(index)] = {doc_id: 1 for doc_id in set(gold)}
        # trec_eval needs at least one ranked document; an empty ranking scores 0 everywhere.
        run[str(index)] = {doc_id: float(len(ranking) - i) for i, doc_id in enumerate(ranking)} or {"\x00none": 0.0}
    scores: dict[str, dict[str, float]] = {}
    if qrels:
        cutoffs = ",".join(str(k) for k in sorted(set(ks)))
        measures = {f"success.{cutoffs}", f"recall.{cutoffs}", f"ndcg_cut.{cutoffs}"}
        scores = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    return [_named(scores.get(str(i)), ks, keys) for i in range(len(questions))]


def _named(scores: dict[str, float] | None, ks: Sequence[int], keys: list[str]) -> dict[str, float]:
    if scores is None:
        return {key: NAN for key in keys}
    out: dict[str, float] = {}
    for k in ks:
        recall = float(scores[f"recall_{k}"])
        out[f"recall_any@{k}"] = float(scores[f"success_{k}"])
        out[f"recall_all@{k}"] = 1.0 if recall == 1.0 else 0.0
        out[f"recall@{k}"] = recall
        out[f"ndcg@{k}"] = float(scores[f"ndcg_cut_{k}"])
    return out
