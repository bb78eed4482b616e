"""What the document-level baselines share: documents in ingest order and an optional as-of filter."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime

import numpy as np

from memplusplus.scope import end_of_day, in_scope
from memory_protocol import Document, Hit, StoreSize


class DocumentShelf:
    """Non-empty documents in ingest order. ``respect_as_of`` applies Mem++'s as-of scope."""

    def __init__(self, respect_as_of: bool = False):
        self.respect_as_of = respect_as_of
        self.documents: list[Document] = []

    def add(self, documents: Iterable[Document]) -> list[Document]:
        fresh = [doc for doc in documents if doc.text.strip()]
        self.documents.extend(fresh)
        return fresh

    def scope(self, as_of: date | datetime | None) -> np.ndarray:
        theta = end_of_day(as_of) if (self.respect_as_of and as_of is not None) else None
        return np.fromiter((in_scope(d.date, theta) for d in self.documents), dtype=bool, count=len(self.documents))

    def store_size(self, extra_bytes: int = 0) -> StoreSize:
        """Nothing on disk; in memory the documents' texts (UTF-8) and ``extra_bytes`` (a baseline's arrays)."""
        return StoreSize(0, extra_bytes + sum(len(doc.text.encode("utf-8")) for doc in self.documents))

    def hit(self, index: int, score: float, leg: str | None = None, rank: int | None = None) -> Hit:
        doc = self.documents[index]
        ranks = {leg: rank} if leg is not None and rank is not None else {}
        return Hit(doc.doc_id, doc.text, doc.date, doc.author, score, ranks, False, doc.thread, evidence=doc.evidence)


def top_k(
    scores: np.ndarray, mask: np.ndarray, k: int, leg: str, shelf: DocumentShelf, positive_only: bool = True
) -> list[Hit]:
    """Best ``k`` in-scope documents (with a positive score when ``positive_only``); ties put the
    later-ingested first."""
    candidates = np.flatnonzero(mask & (scores > 0) if positive_only else mask)
    order = np.lexsort((-candidates, -scores[candidates]))[:k]
    return [shelf.hit(int(candidates[i]), float(scores[candidates[i]]), leg, rank) for rank, i in enumerate(order)]


def ingest_ids(shelf_added: list[Document], requested: list[Document]) -> list[str | None]:
    added = {doc.doc_id for doc in shelf_added}
    return [doc.doc_id if doc.doc_id in added else None for doc in requested]
