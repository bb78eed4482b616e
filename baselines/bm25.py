"""Lexical-only baseline: BM25 (bm25s) over whole documents, with Mem++'s stems and stop words."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime

import numpy as np

from baselines.scoped import DocumentShelf, ingest_ids, top_k
from memplusplus.lexical import bm25_index, bm25_scores
from memplusplus.text import content_terms, stems
from memory_protocol import Document, Hit, StoreSize


class BM25Memory:
    name = "bm25"

    def __init__(self, k: int = 50, respect_as_of: bool = False):
        self.k = k
        self.shelf = DocumentShelf(respect_as_of)
        self._index = None

    def ingest(self, documents: Iterable[Document], show_progress: bool = False) -> list[str | None]:
        requested = list(documents)
        added = self.shelf.add(requested)
        self._index = None
        return ingest_ids(added, requested)

    def _scores(self, query: str) -> np.ndarray:
        if self._index is None:  # bm25s's defaults, k1 = 1.5, b = 0.75
            self._index = bm25_index([stems(doc.text) for doc in self.shelf.documents], 1.5, 0.75)
        return bm25_scores(self._index, content_terms(query), len(self.shelf.documents))

    def store_size(self) -> StoreSize:
        """Its documents' texts (the index is built at the first query)."""
        return self.shelf.store_size()

    def retrieve(self, query: str, as_of: date | datetime | None = None, k: int | None = None) -> list[Hit]:
        if not self.shelf.documents:
            return []
        return top_k(self._scores(query), self.shelf.scope(as_of), self.k if k is None else k, "lexical", self.shelf)
