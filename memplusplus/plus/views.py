"""Levers 5 and 6, views for the vector leg: clauses of the question, and sentences of the rows (below).

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
from collections.abc import Callable

import numpy as np

from memplusplus.columns import Column
from memplusplus.legs import top_by_similarity
from memplusplus.store import RowStore
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
    """In-scope rows by their best cosine over the question views (unit rows of ``views``), a row
    also by its ``sentences`` views when given; highest first, equal scores later ingest first; at
    most ``limit``."""
    candidates = np.flatnonzero(scope)
    if candidates.size == 0:
        return []
    similarity = (store.vectors[candidates] @ views.T).max(axis=1)
    if sentences is not None:
        similarity = np.maximum(similarity, sentences.best(views, len(store))[candidates])
    return top_by_similarity(candidates, similarity, limit)


# ----- lever 6: sentence views of the stored rows ------------------------------------------------
#
# A personal fact is often one sentence inside a turn about something else ("Can you suggest a
# cough remedy? By the way, I saw Dr. Patel on the 3rd."), and the row's one embedding is about the
# main topic. Here each row with two or more sentences also gets one embedding per sentence, and the
# vector leg scores a row by its best cosine over its own embedding and its sentences'. These are
# more embeddings at write time, no generative call; the row itself is stored whole as before.

_HEADER = re.compile(r"^\[[^\]\n]*\]\s*[^:\n]{1,60}:\s+")  # "[date] speaker: " of a conversation turn
_ABBREVIATIONS = ("Dr", "Mr", "Mrs", "Ms", "St", "Jr", "Sr", "vs", "e.g", "i.e", "etc")
_SENTENCE_END = re.compile("".join(rf"(?<!\b{re.escape(a)}\.)" for a in _ABBREVIATIONS) + r"(?<=[.!?])\s+")


def sentences(text: str, min_words: int = 4) -> list[str]:
    """The row's sentences, without a leading ``[date] speaker:`` header (the row keeps its date and
    author). A sentence under ``min_words`` words joins the one before it (the first one joins the
    next). Empty when the row holds a single sentence: its own embedding is that view."""
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
    """Sentence embeddings of the stored rows: ``owner[i]`` is the row seq of ``vectors[i]``.

    Grown as rows are appended (the store is append-only; the columns grow in O(1) amortised); only
    rows whose author is in ``authors`` get views (None: every row).
    """

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
        """Embed the sentences of the rows appended since the last update."""
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
        """Each row's best cosine over its sentences and ``query_views`` (unit rows); -inf for a row
        without sentence views."""
        best = np.full(n_rows, -np.inf, dtype=np.float32)
        if self.vectors is not None:
            np.maximum.at(best, self.owner, (self.vectors @ query_views.T).max(axis=1))
        return best
