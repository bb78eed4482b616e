"""Append-only rows (nothing is deleted, only a row's state changes) and the columns the legs scan:
dates, active flags, embeddings (growable numpy columns, appended in O(1) amortised) and posting lists
of tag stems (the text's terms: ``memplusplus.lexical.PositionIndex``).

sigma holds two independent facts (paper §3.1, §3.3, Algorithm 2): active or archived, and an
optional "superseded by" link. Only archiving takes a row out of scope; a superseded row stays
active, retrievable with its own date, and still blocks an exact repeat in its author scope.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np

from memplusplus.encoder import DIMENSION
from memplusplus.ranking import UNDATED, date_key
from memplusplus.text import content_terms


class Column:
    """A 1-d (or row-of-vectors) array grown by doubling; ``view`` is the filled prefix."""

    def __init__(self, dtype: type, width: int | None = None, fill: object = 0) -> None:
        shape = (0,) if width is None else (0, width)
        self._data = np.zeros(shape, dtype=dtype)
        self._fill = fill
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def _reserve(self, needed: int) -> None:
        if needed <= len(self._data):
            return
        capacity = max(64, 2 * len(self._data), needed)
        shape = (capacity, *self._data.shape[1:])
        # zeros (calloc) leaves the unused tail unmapped until written; full touches every page.
        grown = np.zeros(shape, self._data.dtype) if self._fill == 0 else np.full(shape, self._fill, self._data.dtype)
        grown[: self._size] = self._data[: self._size]
        self._data = grown

    def append(self, value: object) -> None:
        self._reserve(self._size + 1)
        self._data[self._size] = value
        self._size += 1

    def extend(self, values: np.ndarray) -> None:
        self._reserve(self._size + len(values))
        self._data[self._size : self._size + len(values)] = values
        self._size += len(values)

    def __setitem__(self, index: int, value: object) -> None:
        self._data[index] = value

    @property
    def view(self) -> np.ndarray:
        return self._data[: self._size]


@dataclass(slots=True)
class Row:
    seq: int
    doc_id: str
    text: str
    author: str | None
    date: datetime | None
    thread: str | None
    ingested_at: datetime
    archived: bool = False
    superseded_by: str | None = None
    author_terms: frozenset[str] = frozenset()
    evidence: str = "header"

    @property
    def active(self) -> bool:
        return not self.archived

    @property
    def recency(self) -> datetime:
        return self.date if self.date is not None else self.ingested_at


class RowStore:
    def __init__(self, dimension: int = DIMENSION) -> None:
        self.rows: list[Row] = []
        self.by_doc_id: dict[str, int] = {}
        self.aliases: dict[str, str] = {}
        self.tag_postings: dict[str, list[int]] = {}  # tag stem -> row seqs, ascending
        self._active_texts: dict[tuple[str | None, str], int] = {}
        self._tag_terms: dict[str, frozenset[str]] = {}
        self._vectors = Column(np.float32, width=dimension)
        self._dates = Column(np.int64, fill=UNDATED)
        self._active = Column(np.bool_)

    def __len__(self) -> int:
        return len(self.rows)

    def active_duplicate(self, author: str | None, text: str) -> Row | None:
        """An active row by the same author with exactly this text (our reading of "duplicate")."""
        seq = self._active_texts.get((author, text))
        return None if seq is None else self.rows[seq]

    def append(self, doc_id: str, text: str, author: str | None, date: datetime | None, thread: str | None,
               ingested_at: datetime, vector: np.ndarray, tag: str | None = None, evidence: str = "header") -> Row:
        """Store one row; ``tag`` is the text the tag leg indexes for it (None: no tag)."""
        if doc_id in self.by_doc_id or doc_id in self.aliases:
            raise ValueError(f"duplicate doc_id {doc_id!r}: ids must be unique within a memory")
        seq = len(self.rows)
        row = Row(seq, doc_id, text, author, date, thread, ingested_at, author_terms=self._tag_stems(tag), evidence=evidence)
        self.rows.append(row)
        self.by_doc_id[doc_id] = seq
        self._active_texts[(author, text)] = seq
        for term in row.author_terms:
            self.tag_postings.setdefault(term, []).append(seq)
        self._vectors.append(vector)
        self._dates.append(date_key(date))
        self._active.append(True)
        return row

    def _tag_stems(self, tag: str | None) -> frozenset[str]:
        if not tag:
            return frozenset()
        if tag not in self._tag_terms:
            self._tag_terms[tag] = frozenset(content_terms(tag))
        return self._tag_terms[tag]

    @property
    def vectors(self) -> np.ndarray:
        return self._vectors.view

    @property
    def dates(self) -> np.ndarray:
        return self._dates.view

    @property
    def active(self) -> np.ndarray:
        return self._active.view

    def scope_mask(self, theta: datetime | None) -> np.ndarray:
        """Active rows dated up to ``theta`` (None: every active row, undated ones included)."""
        if theta is None:
            return self.active.copy()
        return self.active & (self.dates <= date_key(theta))

    def archive(self, seq: int) -> None:
        row = self.rows[seq]
        if row.active and self._active_texts.get((row.author, row.text)) == seq:
            del self._active_texts[(row.author, row.text)]
        row.archived = True
        self._active[seq] = False

    def supersede(self, seq: int, by_doc_id: str) -> None:
        self.rows[seq].superseded_by = by_doc_id
