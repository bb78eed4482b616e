"""Full-context baseline: the whole history in date order; the harness cuts it to the budget."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime

from baselines.scoped import DocumentShelf, ingest_ids
from memory_protocol import Document, Hit, StoreSize


class FullContextMemory:
    """Returns every (in-scope) document, oldest first; ``k`` is ignored by design."""

    name = "full_context"

    def __init__(self, respect_as_of: bool = False):
        self.shelf = DocumentShelf(respect_as_of)

    def ingest(self, documents: Iterable[Document], show_progress: bool = False) -> list[str | None]:
        requested = list(documents)
        return ingest_ids(self.shelf.add(requested), requested)

    def store_size(self) -> StoreSize:
        """Its documents' texts."""
        return self.shelf.store_size()

    def retrieve(self, query: str, as_of: date | datetime | None = None, k: int | None = None) -> list[Hit]:
        mask = self.shelf.scope(as_of)
        docs = self.shelf.documents
        order = sorted(
            (i for i in range(len(docs)) if mask[i]),
            key=lambda i: (docs[i].date is None, docs[i].date or datetime.min, i),
        )
        return [self.shelf.hit(i, 0.0) for i in order]

