"""Why a question's gold evidence was found or lost (its record's ``gold_docs``): each gold
document's rank down to the explanation depth, its rank among the hits, whether the answerer read it
or the budget cut it, and its rank in every leg for a system that reports them (Mem++ ``diagnose``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memory_protocol import Document, Hit, Question
from memplusplus.evidence import RenderedContext
from harness.records import metric_ranking, ranked_ids

GOLD_TEXT_CHARS = 200  # enough to recognise the turn; records stay small


def explanation_depth(ks: Sequence[int], metric_depth: int | None) -> int:
    return max([*ks, metric_depth or 0])


def _rank_in(ids: Sequence[str], doc_id: str, depth: int) -> int | None:
    try:
        rank = list(ids).index(doc_id) + 1
    except ValueError:
        return None
    return rank if rank <= depth else None


def was_read(doc_id: str, context: RenderedContext) -> bool:
    """The answerer saw the start of the document's block (as ``in_budget_recall`` counts it)."""
    start = context.block_starts.get(doc_id)
    return start is not None and (context.budget is None or start < context.budget)


def gold_docs(
    question: Question,
    documents: Mapping[str, Document],
    hits: list[Hit],
    deeper: list[str] | None,
    context: RenderedContext,
    depth: int,
    placements: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    ranking = metric_ranking(hits, deeper)
    returned = ranked_ids(hits)
    entries = []
    for doc_id in dict.fromkeys(question.evidence_ids):
        doc = documents.get(doc_id)
        returned_rank = _rank_in(returned, doc_id, len(returned))
        read = was_read(doc_id, context)
        entry: dict[str, Any] = {
            "doc_id": doc_id,
            "text": None if doc is None else doc.text[:GOLD_TEXT_CHARS],
            "rank": _rank_in(ranking, doc_id, depth),
            "returned_rank": returned_rank,
            "read": read,
            "budget_cut": returned_rank is not None and not read,
        }
        placement = (placements or {}).get(doc_id)
        if placement is not None:
            entry.update(stored=placement["stored"], in_scope=placement["in_scope"],
                         legs=dict(placement["legs"]), fused_rank=placement["fused"])
        entries.append(entry)
    return entries
