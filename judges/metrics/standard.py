"""Standard document-level recall and nDCG (OrgMemBench, LoCoMo), computed by trec_eval.

``pytrec_eval`` (the ``pytrec-eval-terrier`` wheel, as BEIR uses) evaluates one ranking against
binary relevance: ``success_k`` is our ``recall_any@k``, ``recall_k`` the share of gold found (so
``recall_all@k`` is ``recall_k == 1``), ``ndcg_cut_k`` the usual nDCG with discount
``1 / log2(rank + 1)`` for 1-based ranks. That discount differs from LongMemEval's (which leaves the
first two positions undiscounted), so LongMemEval keeps its own code in
:mod:`judges.metrics.longmemeval`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import pytrec_eval

NAN = float("nan")

__all__ = ["standard_metrics"]


def standard_metrics(ranked_ids: Sequence[str], gold: Collection[str], ks: Sequence[int]) -> dict[str, float]:
    """``recall_any@k``, ``recall_all@k``, ``recall@k``, ``ndcg@k`` per k; NaN for every key when gold is empty.

    The ranking is given by position (repeats after the first are ignored); scores handed to
    trec_eval strictly decrease down the ranking, so its own tie-breaking never applies.
    """
    if any(k < 1 for k in ks):
        raise ValueError(f"every k must be >= 1, got {list(ks)}")
    gold_set = set(gold)
    keys = [f"{name}@{k}" for k in ks for name in ("recall_any", "recall_all", "recall", "ndcg")]
    if not gold_set:
        return {key: NAN for key in keys}
    ranking = list(dict.fromkeys(ranked_ids))
    cutoffs = ",".join(str(k) for k in sorted(set(ks)))
    evaluator = pytrec_eval.RelevanceEvaluator(
        {"q": {doc_id: 1 for doc_id in gold_set}}, {f"success.{cutoffs}", f"recall.{cutoffs}", f"ndcg_cut.{cutoffs}"}
    )
    # trec_eval needs at least one ranked document; an empty ranking scores 0 everywhere.
    run = {"q": {doc_id: float(len(ranking) - i) for i, doc_id in enumerate(ranking)} or {"\x00none": 0.0}}
    scores = evaluator.evaluate(run)["q"]
    out: dict[str, float] = {}
    for k in ks:
        recall = float(scores[f"recall_{k}"])
        out[f"recall_any@{k}"] = float(scores[f"success_{k}"])
        out[f"recall_all@{k}"] = 1.0 if recall == 1.0 else 0.0
        out[f"recall@{k}"] = recall
        out[f"ndcg@{k}"] = float(scores[f"ndcg_cut_{k}"])
    return out
