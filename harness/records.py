"""One question's record: where its gold evidence landed, and what the answerer would read."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from harness.benchmarks import QuestionScorer
from judges.metrics.budget_chars import BlockLayout, document_spans, in_budget_gold_chars
from judges.metrics.registry import computed_ranking_metrics
from judges.metrics.retrieval import in_budget_recall
from judges.metrics.standard import standard_metrics_many
from memory_protocol import Episode, Hit, Question
from memplusplus.evidence import BLOCK_SEPARATOR, RenderedContext, block
from model_clients.cost import CHARS_PER_TOKEN

# Records keep at most this many hits (full context returns the whole history).
HITS_KEPT = 100


def ranked_ids(hits: list[Hit]) -> list[str]:
    """Document ids in rank order; a chunk contributes each document it holds, once."""
    seen: dict[str, None] = {}
    for hit in hits:
        for doc_id in hit.source_ids:
            seen.setdefault(doc_id, None)
    return list(seen)


def metric_ranking(hits: list[Hit], deeper: list[str] | None) -> list[str]:
    """The context's ranked ids, then the rest of a deeper ranking of the same system (if any)."""
    ranked = ranked_ids(hits)
    if deeper:
        ranked = list(dict.fromkeys(ranked + list(deeper)))
    return ranked


def _gold(question: Question) -> list[str]:
    # An abstention question has no evidence to find: no gold, no retrieval score.
    return [] if question.meta.get("abstention") else list(question.evidence_ids)


def block_layouts(hits: Sequence[Hit]) -> list[BlockLayout]:
    """Where each hit's block and its documents' text sit in ``render(hits)``'s full text."""
    layouts: list[BlockLayout] = []
    offset = 0
    for rank, hit in enumerate(hits, start=1):
        text = block(hit, rank)
        if layouts:
            offset += len(BLOCK_SEPARATOR)
        sources = hit.sources or ((hit.doc_id, len(text) - len(hit.text)),)
        layouts.append(BlockLayout(offset, len(text), tuple(sources)))
        offset += len(text)
    return layouts


def episode_metrics(
    questions: Sequence[Question],
    hits: Sequence[list[Hit]],
    contexts: Sequence[RenderedContext],
    ks: list[int],
    scorer: QuestionScorer | None = None,
    deeper: Sequence[list[str] | None] | None = None,
    lengths: Mapping[str, int] | None = None,
    layouts: Sequence[list[BlockLayout]] | None = None,
) -> list[dict[str, float]]:
    """Every retrieval metric of each question of one episode: the benchmark's ``scorer`` over the
    ranking extended by ``deeper``, else trec_eval's recall / nDCG; plus ``in_budget_recall``, the
    registered ranking metrics the scorer did not give (``@all``), and with ``lengths``
    ``in_budget_gold_chars`` over ``layouts`` (a system's own layout) or the ranked blocks'."""
    golds = [_gold(q) for q in questions]
    ranked = [ranked_ids(h) for h in hits]
    if scorer is None:
        rows = standard_metrics_many(list(zip(ranked, golds)), ks)
    else:
        rows = [scorer(question, metric_ranking(hits[i], deeper[i] if deeper else None), ks)
                for i, question in enumerate(questions)]
    for row, gold, ids, context in zip(rows, golds, ranked, contexts):
        row["in_budget_recall"] = in_budget_recall(gold, context.block_starts, context.budget)
        # Over what the system returned (the @all metrics: whatever its k, 2 RAG chunks, the whole history, ...).
        row.update(computed_ranking_metrics(ids, gold, ks, row))
    if lengths is not None:
        for i, (row, gold, q_hits, context) in enumerate(zip(rows, golds, hits, contexts)):
            spans = document_spans(layouts[i] if layouts is not None else block_layouts(q_hits))
            row["in_budget_gold_chars"] = in_budget_gold_chars(gold, spans, lengths, context.budget)
    return rows


def hits_per_leg(hits: Sequence[Hit]) -> dict[str, int]:
    """How many hits each leg ranked (Mem++ legs, ``mem0:<speaker>``, ``zep:fact`` / ``zep:entity``)."""
    counts: dict[str, int] = {}
    for hit in hits:
        for leg in hit.leg_ranks:
            counts[leg] = counts.get(leg, 0) + 1
    return dict(sorted(counts.items()))


def build_record(
    episode: Episode,
    question: Question,
    hits: list[Hit],
    context: RenderedContext,
    metrics: dict[str, float],
    gold_docs: list[dict[str, Any]] | None = None,
    explain_depth: int | None = None,
    leg_sizes: dict[str, int] | None = None,
) -> dict[str, Any]:
    """``gold_docs``: why each gold document was found or lost; ``leg_sizes``: rows per leg (Mem++)."""
    read_chars = len(context.text)
    return {
        "episode": episode.episode_id,
        "qid": question.qid,
        "category": question.category,
        "question": question.text,
        "as_of": question.as_of.isoformat() if question.as_of else None,
        "gold": list(question.evidence_ids),
        "reference": question.answer,
        "explain_depth": explain_depth,
        "gold_docs": gold_docs or [],
        **({"leg_sizes": leg_sizes} if leg_sizes is not None else {}),
        "n_hits": len(hits),
        "hits_per_leg": hits_per_leg(hits),
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
