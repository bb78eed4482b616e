"""Lever 5: clause views of the question for the vector leg.

A long question packs its topic and its instructions into one embedding ("Regarding the launch of
the sales portal, walk me through the supporting evidence, indicating for each whether it is
direct testimony or inference"), and the instructions pull the vector towards any row that talks
about evidence. Here the question is also embedded clause by clause (split at , ; : ? ! . and
dashes, clauses with at least ``min_words`` content words), and a row's similarity is the best over
the whole question and its clauses, so a row matching the topic clause closely ranks high even
when the rest of the question is about something else.
"""

from __future__ import annotations

import re

import numpy as np

from memplusplus.legs import top_by_similarity
from memplusplus.store import RowStore
from memplusplus.text import content_terms

_CLAUSE_END = re.compile(r"[,;:?!.]\s+|\s+[—–-]+\s+|[?!.]$")


def clauses(question: str, min_words: int = 3) -> list[str]:
    """The question's clauses with at least ``min_words`` content words (none if it has one clause)."""
    parts = [part.strip() for part in _CLAUSE_END.split(question) if part and part.strip()]
    kept = [part for part in parts if len(content_terms(part)) >= min_words]
    return kept if len(parts) > 1 else []


def best_view_leg(store: RowStore, views: np.ndarray, scope: np.ndarray, limit: int) -> list[int]:
    """In-scope rows by their best cosine over the question views (unit rows of ``views``),
    highest first, equal scores later ingest first; at most ``limit``."""
    candidates = np.flatnonzero(scope)
    if candidates.size == 0:
        return []
    return top_by_similarity(candidates, (store.vectors[candidates] @ views.T).max(axis=1), limit)
