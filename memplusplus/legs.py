"""The three read-time rankings, each over the in-scope rows only and cut to C candidates."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memplusplus.cover_density import cover_density
from memplusplus.store import RowStore

LEGS = ("lexical", "tag", "vector")


def _rank(scores: dict[int, float], limit: int) -> list[int]:
    """Highest score first; equal scores put the later-ingested row first."""
    ordered = sorted(scores.items(), key=lambda item: (-item[1], -item[0]))
    return [seq for seq, _ in ordered[:limit]]


def lexical_matches(store: RowStore, terms: Sequence[str], conjunctive: bool, scope: np.ndarray) -> list[int]:
    """Row seqs in scope containing all (conjunctive) or any (disjunctive) of the terms."""
    if not terms:
        return []
    posting_sets = [set(store.postings.get(term, ())) for term in terms]
    matched = set.intersection(*posting_sets) if conjunctive else set.union(*posting_sets)
    return sorted(seq for seq in matched if scope[seq])


def lexical_leg(
    store: RowStore,
    terms: Sequence[str],
    conjunctive: bool,
    scope: np.ndarray,
    limit: int,
    ranker: str = "cover_density",
    bm25_scores: np.ndarray | None = None,
) -> list[int]:
    """Matching rows ranked by cover density (default) or by precomputed BM25 scores."""
    matched = lexical_matches(store, terms, conjunctive, scope)
    if ranker == "cover_density":
        scores = {seq: cover_density(store.rows[seq].positions, terms, conjunctive) for seq in matched}
    elif ranker == "bm25":
        if bm25_scores is None:
            raise ValueError("the bm25 ranker needs bm25_scores")
        scores = {seq: float(bm25_scores[seq]) for seq in matched}
    else:
        raise ValueError(f"unknown lexical ranker {ranker!r}; use 'cover_density' or 'bm25'")
    return _rank(scores, limit)


def tag_leg(store: RowStore, terms: Sequence[str], scope: np.ndarray, limit: int) -> list[int]:
    """Rows whose author tag shares a term with the question, most shared terms first.

    The paper states that the leg matches question terms against author tags; scoring a row by
    the number of shared terms (ties: later ingest first) is our choice where it is silent.
    """
    wanted = set(terms)
    if not wanted:
        return []
    scores = {
        row.seq: float(len(row.author_terms & wanted))
        for row in store.rows
        if scope[row.seq] and row.author_terms & wanted
    }
    return _rank(scores, limit)


def vector_leg(store: RowStore, query_vector: np.ndarray, scope: np.ndarray, limit: int) -> list[int]:
    """Exact cosine (dot product of normalised vectors) over in-scope rows."""
    candidates = np.flatnonzero(scope)
    if candidates.size == 0:
        return []
    sims = store.vectors[candidates] @ query_vector
    # Sort by similarity descending, then by seq descending (later ingest first) on ties.
    order = np.lexsort((-candidates, -sims))
    return [int(seq) for seq in candidates[order[:limit]]]
