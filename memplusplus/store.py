"""Append-only rows: nothing is deleted, only a row's state changes.

A row keeps its document whole (text, author, date, thread), its ingest sequence number and
time, its state sigma and what the read-time legs need: the positional stems of its full text,
the stems of its tag (if its author is indexed as one), and its embedding.

sigma holds two independent facts (paper §3.1, §3.3, Algorithm 2, Appendix A): whether the row
is active or archived, and an optional "superseded by" link. Only archiving takes a row out of
the read scope; a superseded row stays active, retrievable with its own date, and still blocks
an exact repeat of itself in its author scope.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum

import numpy as np

from memplusplus.encoder import DIMENSION
from memplusplus.text import content_terms, positional_stems


class RowState(str, Enum):
    """Active or archived; supersession is a separate link (``Row.superseded_by``), not a state."""

    ACTIVE = "active"
    ARCHIVED = "archived"


@dataclass
class Row:
    seq: int
    doc_id: str
    text: str
    author: str | None
    date: datetime | None
    thread: str | None
    ingested_at: datetime
    state: RowState = RowState.ACTIVE
    superseded_by: str | None = None
    positions: dict[str, list[int]] = field(default_factory=dict, repr=False)
    author_terms: frozenset[str] = frozenset()
    evidence: str = "header"

    @property
    def active(self) -> bool:
        return self.state is RowState.ACTIVE

    @property
    def recency(self) -> datetime:
        """The row's date, or its ingest time when it has none (for the recency reserve)."""
        return self.date if self.date is not None else self.ingested_at


class RowStore:
    """Rows in ingest order with an inverted index (stem -> row seqs) and an embedding matrix."""

    def __init__(self, dimension: int = DIMENSION) -> None:
        self.rows: list[Row] = []
        self.by_doc_id: dict[str, int] = {}
        self.aliases: dict[str, str] = {}
        self.postings: dict[str, list[int]] = {}
        self._active_texts: dict[tuple[str | None, str], int] = {}
        self._vectors = np.zeros((0, dimension), dtype=np.float32)
        self._count_with_vectors = 0

    def __len__(self) -> int:
        return len(self.rows)

    def active_duplicate(self, author: str | None, text: str) -> Row | None:
        """An active row (superseded or not) by the same author with exactly this text.
        "Duplicate" as exact text equality is our reading where the paper is silent."""
        seq = self._active_texts.get((author, text))
        return None if seq is None else self.rows[seq]

    def append(
        self,
        doc_id: str,
        text: str,
        author: str | None,
        date: datetime | None,
        thread: str | None,
        ingested_at: datetime,
        vector: np.ndarray,
        tag: str | None = None,
        evidence: str = "header",
    ) -> Row:
        """Store one row; ``tag`` is the text the tag leg indexes for it (None: no tag)."""
        if doc_id in self.by_doc_id or doc_id in self.aliases:
            raise ValueError(f"duplicate doc_id {doc_id!r}: ids must be unique within a memory")
        row = Row(
            seq=len(self.rows),
            doc_id=doc_id,
            text=text,
            author=author,
            date=date,
            thread=thread,
            ingested_at=ingested_at,
            positions=positional_stems(text),
            author_terms=frozenset(content_terms(tag or "")),
            evidence=evidence,
        )
        self.rows.append(row)
        self.by_doc_id[doc_id] = row.seq
        self._active_texts[(author, text)] = row.seq
        for term in row.positions:
            self.postings.setdefault(term, []).append(row.seq)
        self._append_vector(vector)
        return row

    def _append_vector(self, vector: np.ndarray) -> None:
        if self._count_with_vectors == len(self._vectors):
            grown = np.zeros((max(64, 2 * len(self._vectors)), self._vectors.shape[1]), dtype=np.float32)
            grown[: self._count_with_vectors] = self._vectors[: self._count_with_vectors]
            self._vectors = grown
        self._vectors[self._count_with_vectors] = vector
        self._count_with_vectors += 1

    @property
    def vectors(self) -> np.ndarray:
        return self._vectors[: self._count_with_vectors]

    def add_alias(self, doc_id: str, existing: Row) -> None:
        """Record that ``doc_id`` was a repeat of ``existing`` and added no row."""
        self.aliases[doc_id] = existing.doc_id

    def archive(self, seq: int) -> None:
        """Take the row out of every scope (it stays stored) and stop it blocking repeats."""
        row = self.rows[seq]
        if row.active and self._active_texts.get((row.author, row.text)) == seq:
            del self._active_texts[(row.author, row.text)]
        row.state = RowState.ARCHIVED

    def supersede(self, seq: int, by_doc_id: str) -> None:
        """Link the row to the one that supersedes it; its state (active or archived) is unchanged."""
        self.rows[seq].superseded_by = by_doc_id
