"""A thread-safe tally of integer counters whose snapshot is a frozen counters dataclass."""

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
