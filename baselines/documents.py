"""The document-level baselines: full context, BM25 and vector search over whole documents, each
with Mem++'s as-of scope when ``respect_as_of``."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime

import numpy as np

from memplusplus.encoder import CachedEncoder, Encoder
from memplusplus.lexical import bm25_index, bm25_scores
from memplusplus.ranking import end_of_day, in_scope
from memplusplus.text import content_terms, stems
from memory_protocol import Document, Hit, StoreSize


def ingest_ids(added: list[Document], requested: list[Document]) -> list[str | None]:
    """Each requested document's id, None for one that was not stored (empty text)."""
    kept = {doc.doc_id for doc in added}
    return [doc.doc_id if doc.doc_id in kept else None for doc in requested]


class DocumentMemory:
    """Non-empty documents in ingest order; a subclass indexes what ``_added`` hands it."""

    name = "documents"

    def __init__(self, respect_as_of: bool = False):
        self.respect_as_of = respect_as_of
        self.documents: list[Document] = []

    def ingest(self, documents: Iterable[Document], show_progress: bool = False) -> list[str | None]:
        requested = list(documents)
        fresh = [doc for doc in requested if doc.text.strip()]
        self.documents.extend(fresh)
        self._added(fresh, show_progress)
        return ingest_ids(fresh, requested)

    def _added(self, documents: list[Document], show_progress: bool) -> None:
        """Index newly stored documents (nothing to index by default)."""

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

    def top_k(self, scores: np.ndarray, as_of: date | datetime | None, k: int, leg: str, positive_only: bool) -> list[Hit]:
        """Best ``k`` in-scope documents (with a positive score when ``positive_only``), ties later ingest first."""
        mask = self.scope(as_of)
        candidates = np.flatnonzero(mask & (scores > 0) if positive_only else mask)
        order = np.lexsort((-candidates, -scores[candidates]))[:k]
        return [self.hit(int(candidates[i]), float(scores[candidates[i]]), leg, rank) for rank, i in enumerate(order)]


class FullContextMemory(DocumentMemory):
    """Every (in-scope) document, oldest first; ``k`` is ignored by design (the harness cuts to the budget)."""

    name = "full_context"

    def retrieve(self, query: str, as_of: date | datetime | None = None, k: int | None = None) -> list[Hit]:
        mask = self.scope(as_of)
        docs = self.documents
        order = sorted((i for i in range(len(docs)) if mask[i]),
                       key=lambda i: (docs[i].date is None, docs[i].date or datetime.min, i))
        return [self.hit(i, 0.0) for i in order]


class BM25Memory(DocumentMemory):
    """BM25 (bm25s, its defaults k1 = 1.5, b = 0.75) with Mem++'s stems and stop words; the index is
    built at the first query."""

    name = "bm25"

    def __init__(self, k: int = 50, respect_as_of: bool = False):
        super().__init__(respect_as_of)
        self.k = k
        self._index = None

    def _added(self, documents: list[Document], show_progress: bool) -> None:
        self._index = None

    def retrieve(self, query: str, as_of: date | datetime | None = None, k: int | None = None) -> list[Hit]:
        if not self.documents:
            return []
        if self._index is None:
            self._index = bm25_index([stems(doc.text) for doc in self.documents], 1.5, 0.75)
        scores = bm25_scores(self._index, content_terms(query), len(self.documents))
        return self.top_k(scores, as_of, self.k if k is None else k, "lexical", positive_only=True)


class VectorMemory(DocumentMemory):
    """Exact cosine over whole-document embeddings (first 256 word pieces)."""

    name = "vector"

    def __init__(self, k: int = 50, respect_as_of: bool = False, encoder: CachedEncoder | None = None):
        super().__init__(respect_as_of)
        self.k = k
        self.encoder = encoder if encoder is not None else Encoder()
        self.vectors = np.zeros((0, self.encoder.dimension), dtype=np.float32)

    def _added(self, documents: list[Document], show_progress: bool) -> None:
        fresh = self.encoder.encode([doc.text for doc in documents], show_progress=show_progress)
        self.vectors = np.vstack([self.vectors, fresh])

    def store_size(self, extra_bytes: int = 0) -> StoreSize:
        return super().store_size(extra_bytes + self.vectors.nbytes)

    def retrieve(self, query: str, as_of: date | datetime | None = None, k: int | None = None) -> list[Hit]:
        if not self.documents:
            return []
        scores = self.vectors @ self.encoder.encode_one(query)
        return self.top_k(scores, as_of, self.k if k is None else k, "vector", positive_only=False)
