"""Lexical-only baseline: BM25 (bm25s) over whole documents, with Mem++'s stems and stop words."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime
from typing import TYPE_CHECKING

import numpy as np

from baselines.scoped import DocumentShelf, ingest_ids, top_k
from memplusplus.text import content_terms, positional_stems
from memory_protocol.documents import Document, Hit

if TYPE_CHECKING:  # bm25s pulls scipy (~0.1 s): imported when a BM25 index is first built
    import bm25s


def stem_sequence(text: str) -> list[str]:
    positions = positional_stems(text)
    return [term for _, term in sorted((p, t) for t, ps in positions.items() for p in ps)]


class BM25Memory:
    name = "bm25"

    def __init__(self, k: int = 50, respect_as_of: bool = False):
        self.k = k
        self.shelf = DocumentShelf(respect_as_of)
        self._index: bm25s.BM25 | None = None

    def ingest(self, documents: Iterable[Document], show_progress: bool = False) -> list[str | None]:
        requested = list(documents)
        added = self.shelf.add(requested)
        self._index = None
        return ingest_ids(added, requested)

    def _scores(self, query: str) -> np.ndarray:
        if self._index is None:
            import bm25s

            self._index = bm25s.BM25()
            corpus = [stem_sequence(doc.text) or [""] for doc in self.shelf.documents]
            self._index.index(corpus, show_progress=False)
        terms = [t for t in content_terms(query) if t in self._index.vocab_dict]
        if not terms:
            return np.zeros(len(self.shelf.documents), dtype=np.float32)
        return self._index.get_scores(terms)

    def retrieve(self, query: str, as_of: date | datetime | None = None, k: int | None = None) -> list[Hit]:
        if not self.shelf.documents:
            return []
        return top_k(self._scores(query), self.shelf.scope(as_of), self.k if k is None else k, "lexical", self.shelf)

