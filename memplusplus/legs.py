"""The tag and vector legs, each over the in-scope rows only and cut to C candidates (the lexical
leg is ``memplusplus.lexical``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memplusplus.ann import AnnIndex
from memplusplus.settings import LEGS
from memplusplus.store import RowStore

__all__ = ["LEGS", "tag_leg", "top_by_similarity", "vector_leg"]


def tag_leg(store: RowStore, terms: Sequence[str], scope: np.ndarray, limit: int) -> list[int]:
    """Rows whose author tag shares a term with the question, most shared terms first, ties later
    ingest first (the paper names the leg; scoring by shared terms is our choice where it is silent)."""
    lists = [store.tag_postings.get(term) for term in set(terms)]
    lists = [seqs for seqs in lists if seqs.size]
    if not lists:
        return []
    hits = np.concatenate(lists).astype(np.int64)
    seqs, counts = np.unique(hits[scope[hits]], return_counts=True)
    if seqs.size == 0:
        return []
    order = np.lexsort((-seqs, -counts.astype(np.float64)))
    return seqs[order[:limit]].tolist()


def vector_leg(
    store: RowStore, query_vector: np.ndarray, scope: np.ndarray, limit: int, ann: AnnIndex | None = None
) -> list[int]:
    """Exact cosine (dot product of unit vectors) over in-scope rows, or over the rows an opt-in
    ``ann`` index finds when the scope is large enough; both ordered by ``top_by_similarity``."""
    candidates = np.flatnonzero(scope)
    if candidates.size == 0:
        return []
    vectors = store.vectors
    if ann is not None and candidates.size >= ann.settings.ann_min_rows:
        found = ann.search(vectors, query_vector, scope, int(candidates.size), limit)
        if found is not None:  # rescored exactly, ordered as below
            sims = vectors[found] @ query_vector
            return found[np.lexsort((-found, -sims))[:limit]].tolist()
    if 4 * candidates.size >= len(vectors):  # one product over all rows beats a gather
        sims = (vectors @ query_vector)[candidates]
    else:
        sims = vectors[candidates] @ query_vector
    return top_by_similarity(candidates, sims, limit)


def top_by_similarity(candidates: np.ndarray, sims: np.ndarray, limit: int) -> list[int]:
    """The ``limit`` best row seqs by similarity, equal similarity later ingest first
    (``argpartition`` first, keeping every row tied with the last)."""
    if candidates.size > limit:
        threshold = sims[np.argpartition(-sims, limit - 1)[:limit]].min()
        keep = np.flatnonzero(sims >= threshold)
        candidates, sims = candidates[keep], sims[keep]
    order = np.lexsort((-candidates, -sims))
    return candidates[order[:limit]].tolist()
