"""One question's record: where its gold evidence landed, and what the answerer would read."""

from __future__ import annotations

import math
from typing import Any

from judges.metrics.retrieval import compute_question_metrics, recall_all_at_k, recall_any_at_k
from loaders.schema import Episode, Question
from memplusplus.evidence import RenderedContext
from memplusplus.types import Hit

# Records keep at most this many hits (full context returns the whole history).
HITS_KEPT = 100
CHARS_PER_TOKEN = 4  # a rough, documented estimate for the "retrieved tokens" column


def ranked_ids(hits: list[Hit]) -> list[str]:
    """Document ids in rank order; a chunk contributes each document it holds, once."""
    seen: dict[str, None] = {}
    for hit in hits:
        for doc_id in hit.source_ids:
            seen.setdefault(doc_id, None)
    return list(seen)


def question_metrics(
    question: Question,
    hits: list[Hit],
    context: RenderedContext,
    ks: list[int],
    session_of: dict[str, str] | None,
) -> dict[str, float]:
    # LongMemEval's retrieval evaluation skips abstention questions: no gold, no score.
    abstention = bool(question.meta.get("abstention"))
    gold = [] if abstention else list(question.evidence_ids)
    gold_sessions = None
    if session_of is not None:
        gold_sessions = [] if abstention else question.meta.get("evidence_sessions")
    ranked = ranked_ids(hits)
    metrics = compute_question_metrics(
        ranked,
        gold,
        ks,
        block_starts=context.block_starts,
        budget=context.budget,
        session_of=session_of,
        gold_sessions=gold_sessions,
    ).as_dict()
    # Over everything the system returned, whatever its k (2 RAG chunks, the whole history, ...).
    everything = max(len(ranked), 1)
    metrics["recall_any@all"] = recall_any_at_k(ranked, gold, everything)
    metrics["recall_all@all"] = recall_all_at_k(ranked, gold, everything)
    return metrics


def build_record(
    episode: Episode,
    question: Question,
    hits: list[Hit],
    context: RenderedContext,
    metrics: dict[str, float],
) -> dict[str, Any]:
    read_chars = len(context.text)
    return {
        "episode": episode.episode_id,
        "qid": question.qid,
        "category": question.category,
        "question": question.text,
        "as_of": question.as_of.isoformat() if question.as_of else None,
        "gold": list(question.evidence_ids),
        "n_hits": len(hits),
        "retrieved_chars": len(context.full_text),
        "read_chars": read_chars,
        "read_tokens_est": math.ceil(read_chars / CHARS_PER_TOKEN),
        "metrics": {key: (None if isinstance(value, float) and math.isnan(value) else value) for key, value in metrics.items()},
        "hits": [
            {
                "doc_id": hit.doc_id,
                "score": round(hit.score, 8),
                "date": hit.date.isoformat() if hit.date else None,
                "author": hit.author,
                "leg_ranks": hit.leg_ranks,
                "reserve": hit.reserve,
                "gold": bool(set(hit.source_ids) & set(question.evidence_ids)),
                **({"sources": list(hit.source_ids)} if hit.sources else {}),
            }
            for hit in hits[:HITS_KEPT]
        ],
    }
