"""A thread-safe tally of integer counters whose snapshot is a frozen counters dataclass, and the
field-wise difference and sum of two such snapshots (nested counters dataclasses included)."""

from __future__ import annotations

import dataclasses
import threading
from typing import Any, Generic, TypeVar

C = TypeVar("C")


class Tally(Generic[C]):
    """Mutable counts, one per field of the dataclass ``kind``, behind a lock."""

    def __init__(self, kind: type[C]) -> None:
        self._kind = kind
        self._lock = threading.Lock()
        self.values: dict[str, int] = {f.name: 0 for f in dataclasses.fields(kind)}  # type: ignore[arg-type]

    def add(self, **deltas: int) -> None:
        with self._lock:
            for name, delta in deltas.items():
                self.values[name] += delta

    def snapshot(self) -> C:
        with self._lock:
            values: dict[str, Any] = dict(self.values)
        return self._kind(**values)


def difference(after: C, before: C) -> C:
    """``after - before``, field by field (what happened between two snapshots)."""
    return _combine(after, before, -1)


def total(first: C, second: C) -> C:
    """``first + second``, field by field."""
    return _combine(first, second, 1)


def _combine(first: Any, second: Any, sign: int) -> Any:
    if dataclasses.is_dataclass(first):
        return type(first)(**{f.name: _combine(getattr(first, f.name), getattr(second, f.name), sign) for f in dataclasses.fields(first)})
    return first + sign * second
