"""Growable numpy columns and integer posting lists: the store's arrays, appended in O(1) amortised."""

from __future__ import annotations

import numpy as np

_EMPTY = np.zeros(0, dtype=np.int32)


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


class Postings:
    """term -> sorted int32 array of row seqs; new seqs wait in a list until the term is next read."""

    def __init__(self) -> None:
        self._arrays: dict[str, np.ndarray] = {}
        self._pending: dict[str, list[int]] = {}

    def add(self, term: str, seq: int) -> None:
        self._pending.setdefault(term, []).append(seq)

    def get(self, term: str) -> np.ndarray:
        pending = self._pending.pop(term, None)
        current = self._arrays.get(term, _EMPTY)
        if pending:
            current = np.concatenate([current, np.asarray(pending, dtype=np.int32)])
            self._arrays[term] = current
        return current
