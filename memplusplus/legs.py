"""The three read-time rankings, each over the in-scope rows only and cut to C candidates."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memplusplus.ann import AnnIndex
from memplusplus.cover_density import cover_density
from memplusplus.store import RowStore

LEGS = ("lexical", "tag", "vector")


def _rank(seqs: np.ndarray, scores: np.ndarray, limit: int) -> list[int]:
    """Highest score first; equal scores put the later-ingested row first."""
    if seqs.size == 0:
        return []
    order = np.lexsort((-seqs.astype(np.int64), -scores))
    return seqs[order[:limit]].astype(np.int64).tolist()


def lexical_matches(store: RowStore, terms: Sequence[str], conjunctive: bool, scope: np.ndarray) -> list[int]:
    """Row seqs in scope containing all (conjunctive) or any (disjunctive) of the terms, ascending."""
    return _matches(store, terms, conjunctive, scope).tolist()


def _matches(store: RowStore, terms: Sequence[str], conjunctive: bool, scope: np.ndarray) -> np.ndarray:
    if not terms:
        return np.zeros(0, dtype=np.int64)
    lists = [store.postings.get(term) for term in dict.fromkeys(terms)]
    if conjunctive:
        lists.sort(key=len)
        matched = lists[0]
        for other in lists[1:]:
            if matched.size == 0:
                break
            matched = np.intersect1d(matched, other, assume_unique=True)
    else:
        matched = np.unique(np.concatenate(lists))
    matched = matched.astype(np.int64)
    return matched[scope[matched]]


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
    matched = _matches(store, terms, conjunctive, scope)
    if ranker == "cover_density":
        wanted = frozenset(terms)
        scores = np.array(
            [cover_density(store.positions_of(int(seq), wanted), terms, conjunctive) for seq in matched],
            dtype=np.float64,
        )
    elif ranker == "bm25":
        if bm25_scores is None:
            raise ValueError("the bm25 ranker needs bm25_scores")
        scores = np.asarray(bm25_scores, dtype=np.float64)[matched]
    else:
        raise ValueError(f"unknown lexical ranker {ranker!r}; use 'cover_density' or 'bm25'")
    return _rank(matched, scores, limit)


def tag_leg(store: RowStore, terms: Sequence[str], scope: np.ndarray, limit: int) -> list[int]:
    """Rows whose author tag shares a term with the question, most shared terms first.

    The paper states that the leg matches question terms against author tags; scoring a row by
    the number of shared terms (ties: later ingest first) is our choice where it is silent.
    """
    lists = [store.tag_postings.get(term) for term in set(terms)]
    lists = [seqs for seqs in lists if seqs.size]
    if not lists:
        return []
    hits = np.concatenate(lists).astype(np.int64)
    hits = hits[scope[hits]]
    seqs, counts = np.unique(hits, return_counts=True)
    return _rank(seqs, counts.astype(np.float64), limit)


def vector_leg(
    store: RowStore, query_vector: np.ndarray, scope: np.ndarray, limit: int, ann: AnnIndex | None = None
) -> list[int]:
    """Exact cosine (dot product of normalised vectors) over in-scope rows.

    One matrix-vector product (over all rows when most are in scope, else over the in-scope
    rows), ``argpartition`` for the C best, then an exact sort of those (with every row tied
    with the C-th score): similarity descending, equal similarity later ingest first.
    With an ``ann`` index (``memplusplus.ann``, opt-in) and a large enough scope, the candidates
    are the rows the index finds instead of every in-scope row, ordered the same way.
    """
    candidates = np.flatnonzero(scope)
    if candidates.size == 0:
        return []
    vectors = store.vectors
    if ann is not None and candidates.size >= ann.settings.ann_min_rows:
        found = ann.search(vectors, query_vector, scope, int(candidates.size), limit)
        if found is not None:  # rescored exactly, ordered as below
            sims = vectors[found] @ query_vector
            return found[np.lexsort((-found, -sims))[:limit]].tolist()
    if 4 * candidates.size >= len(vectors):
        sims = (vectors @ query_vector)[candidates]
    else:
        sims = vectors[candidates] @ query_vector
    return top_by_similarity(candidates, sims, limit)


def top_by_similarity(candidates: np.ndarray, sims: np.ndarray, limit: int) -> list[int]:
    """The ``limit`` best of ``candidates`` (row seqs) by ``sims``: similarity descending, equal
    similarity later ingest first (``argpartition`` first, keeping every row tied with the last)."""
    if candidates.size > limit:
        threshold = sims[np.argpartition(-sims, limit - 1)[:limit]].min()
        keep = np.flatnonzero(sims >= threshold)
        candidates, sims = candidates[keep], sims[keep]
    order = np.lexsort((-candidates, -sims))
    return candidates[order[:limit]].tolist()


class BM25Index:
    """BM25 over every stored row's stem stream, rebuilt only when rows were added."""

    def __init__(self, k1: float = 1.5, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self._index = None
        self._size = -1

    def scores(self, store: RowStore, terms: Sequence[str]) -> np.ndarray:
        """One BM25 score per row (0 for rows sharing no term)."""
        import bm25s

        if self._index is None or self._size != len(store):
            corpus = [_stem_stream(store, seq) for seq in range(len(store))]
            index = bm25s.BM25(k1=self.k1, b=self.b)
            index.index([tokens or [""] for tokens in corpus], show_progress=False)
            self._index, self._size = index, len(store)
        known = [term for term in dict.fromkeys(terms) if term in self._index.vocab_dict]
        if not known:
            return np.zeros(len(store), dtype=np.float32)
        return np.asarray(self._index.get_scores(known))


def _stem_stream(store: RowStore, seq: int) -> list[str]:
    positions = store.rows[seq].positions
    return [term for _, term in sorted((p, t) for t, ps in positions.items() for p in ps)]
