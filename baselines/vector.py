"""Vector-only baseline: exact cosine over whole-document embeddings (first 256 word pieces)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime

import numpy as np

from baselines.scoped import DocumentShelf, ingest_ids, top_k
from memplusplus.encoder import CachedEncoder, Encoder
from memory_protocol import Document, Hit, StoreSize


class VectorMemory:
    name = "vector"

    def __init__(self, k: int = 50, respect_as_of: bool = False, encoder: CachedEncoder | None = None):
        self.k = k
        self.encoder = encoder if encoder is not None else Encoder()
        self.shelf = DocumentShelf(respect_as_of)
        self.vectors = np.zeros((0, self.encoder.dimension), dtype=np.float32)

    def ingest(self, documents: Iterable[Document], show_progress: bool = False) -> list[str | None]:
        requested = list(documents)
        added = self.shelf.add(requested)
        fresh = self.encoder.encode([doc.text for doc in added], show_progress=show_progress)
        self.vectors = np.vstack([self.vectors, fresh])
        return ingest_ids(added, requested)

    def store_size(self) -> StoreSize:
        """Its documents' texts (and vectors)."""
        return self.shelf.store_size(self.vectors.nbytes)

    def retrieve(self, query: str, as_of: date | datetime | None = None, k: int | None = None) -> list[Hit]:
        if not self.shelf.documents:
            return []
        scores = self.vectors @ self.encoder.encode_one(query)
        k = self.k if k is None else k
        return top_k(scores, self.shelf.scope(as_of), k, "vector", self.shelf, positive_only=False)

