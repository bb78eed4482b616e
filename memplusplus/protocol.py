"""The interface every memory system in the harness offers (Mem++ and the baselines)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime
from typing import Protocol, runtime_checkable

from memplusplus.evidence import RenderedContext
from memplusplus.types import Document, Hit


@runtime_checkable
class MemorySystem(Protocol):
    name: str

    def ingest(self, documents: Iterable[Document], show_progress: bool = False) -> list[str | None]: ...

    def retrieve(self, query: str, as_of: date | datetime | None = None, k: int | None = None) -> list[Hit]: ...

    def render(self, hits: list[Hit], budget: int | None = None) -> RenderedContext: ...
