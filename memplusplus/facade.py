"""What both Mem++ backends (in process and Postgres) share: settings, encoder, clock and ``add``."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from memplusplus.encoder import CachedEncoder, Encoder
from memplusplus.types import Document

if TYPE_CHECKING:
    from memplusplus.memory import MemPPConfig


class MemoryFacade:
    """A backend's common part; a subclass stores rows (``ingest``) and counts them (``_stored_ids``)."""

    name = "mempp"

    def __init__(
        self,
        config: MemPPConfig,
        encoder: CachedEncoder | None,
        clock: Callable[[], datetime],
    ) -> None:
        self.config = config
        self.encoder = encoder if encoder is not None else Encoder()
        self.clock = clock

    def ingest(self, documents: Iterable[Document], show_progress: bool = False) -> list[str | None]:
        raise NotImplementedError

    def _stored_ids(self) -> int:
        """How many document ids the memory holds (rows plus aliases of repeated texts)."""
        raise NotImplementedError

    def add(
        self,
        text: str,
        author: str | None = None,
        date: datetime | None = None,
        doc_id: str | None = None,
        thread: str | None = None,
    ) -> str | None:
        """Store one document; returns the id of the row holding it, or None for empty text.

        ``author`` is taken as the document's author (so, with ``tags="author"``, a tag).
        """
        auto_id = f"row-{self._stored_ids()}"
        return self.ingest([Document(doc_id or auto_id, text, author, date, thread)])[0]
