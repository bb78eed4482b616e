"""Views for the vector leg: the question's clauses, and the stored rows' sentences.

A long question packs topic and instructions into one embedding, and the instructions pull it
towards rows about them; a personal fact is often one sentence inside a turn about something else.
A row's similarity is its best cosine over the question and its clauses (with ``min_words`` content
words), and over its own embedding and its sentences'. More embeddings at write time, no call.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from memplusplus.store import Column, RowStore
from memplusplus.memory import top_by_similarity
from memplusplus.text import content_terms

_CLAUSE_END = re.compile(r"[,;:?!.]\s+|\s+[—–-]+\s+|[?!.]$")


def clauses(question: str, min_words: int = 3) -> list[str]:
    """The question's clauses with at least ``min_words`` content words (none if it has one clause)."""
    parts = [part.strip() for part in _CLAUSE_END.split(question) if part and part.strip()]
    kept = [part for part in parts if len(content_terms(part)) >= min_words]
    return kept if len(parts) > 1 else []


def best_view_leg(
    store: RowStore, views: np.ndarray, scope: np.ndarray, limit: int, sentences: SentenceViews | None = None
) -> list[int]:
    """In-scope rows by their best cosine over the question ``views`` (and their ``sentences``)."""
    candidates = np.flatnonzero(scope)
    if candidates.size == 0:
        return []
    similarity = (store.vectors[candidates] @ views.T).max(axis=1)
    if sentences is not None:
        similarity = np.maximum(similarity, sentences.best(views, len(store))[candidates])
    return top_by_similarity(candidates, similarity, limit)


_HEADER = re.compile(r"^\[[^\]\n]*\]\s*[^:\n]{1,60}:\s+")  # "[date] speaker: " of a conversation turn
_ABBREVIATIONS = ("Dr", "Mr", "Mrs", "Ms", "St", "Jr", "Sr", "vs", "e.g", "i.e", "etc")
_SENTENCE_END = re.compile("".join(rf"(?<!\b{re.escape(a)}\.)" for a in _ABBREVIATIONS) + r"(?<=[.!?])\s+")


def sentences(text: str, min_words: int = 4) -> list[str]:
    """The row's sentences without a ``[date] speaker:`` header, a short one joined to its neighbour;
    empty for a single sentence (the row's own embedding is that view)."""
    merged: list[str] = []
    for part in _SENTENCE_END.split(_HEADER.sub("", text.strip(), count=1)):
        part = part.strip()
        if not part:
            continue
        if merged and len(part.split()) < min_words:
            merged[-1] = f"{merged[-1]} {part}"
        else:
            merged.append(part)
    if len(merged) > 1 and len(merged[0].split()) < min_words:
        merged[:2] = [f"{merged[0]} {merged[1]}"]
    return merged if len(merged) > 1 else []


class SentenceViews:
    """Sentence embeddings of the rows of ``authors`` (None: all); ``owner[i]`` is ``vectors[i]``'s row."""

    def __init__(self, authors: frozenset[str] | None = None, min_words: int = 4) -> None:
        self.authors = authors
        self.min_words = min_words
        self.rows_seen = 0
        self._owner = Column(np.int64)
        self._vectors: Column | None = None

    @property
    def owner(self) -> np.ndarray:
        return self._owner.view

    @property
    def vectors(self) -> np.ndarray | None:
        return None if self._vectors is None else self._vectors.view

    def update(self, store: RowStore, encode: Callable[[list[str]], np.ndarray]) -> None:
        owners: list[int] = []
        texts: list[str] = []
        for seq in range(self.rows_seen, len(store)):
            row = store.rows[seq]
            if self.authors is not None and row.author not in self.authors:
                continue
            parts = sentences(row.text, self.min_words)
            owners += [seq] * len(parts)
            texts += parts
        self.rows_seen = len(store)
        if not texts:
            return
        new = np.asarray(encode(texts), dtype=np.float32)
        if self._vectors is None:
            self._vectors = Column(np.float32, width=new.shape[1])
        self._vectors.extend(new)
        self._owner.extend(np.asarray(owners, dtype=np.int64))

    def best(self, query_views: np.ndarray, n_rows: int) -> np.ndarray:
        """Each row's best cosine over its sentences and ``query_views``; -inf without sentences."""
        best = np.full(n_rows, -np.inf, dtype=np.float32)
        if self.vectors is not None:
            np.maximum.at(best, self.owner, (self.vectors @ query_views.T).max(axis=1))
        return best
