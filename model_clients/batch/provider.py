"""What every batch API offers the batch runner: submit lines, poll a batch, collect its lines. A
line's key is the live call's cache key and its ``custom_id``, so a result lands where a live one would."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Mapping, Protocol, Sequence

from model_clients.chat_types import LineOutcome

BatchStatus = Literal["pending", "ended", "expired", "failed", "cancelled"]


@dataclass(frozen=True)
class BatchLine:
    """One request of a batch: its key and the live chat-completions body (a provider translates it)."""

    key: str
    body: Mapping[str, Any]


@dataclass(frozen=True)
class BatchState:
    """A submitted batch: ``done`` of ``total`` lines finished; ``status`` ``pending`` until the
    provider stops working on it; ``provider_status`` its own word (``in_progress``, ...)."""

    batch_id: str
    status: BatchStatus
    done: int
    total: int
    provider_status: str = ""


class BatchProvider(Protocol):
    """One provider's batch endpoints: ``max_lines`` / ``max_bytes`` its documented limits of one batch,
    ``line_bytes`` a line's size as uploaded; ``reports_lines_while_running`` False for a provider
    that counts no line done before the whole batch ends (Anthropic)."""

    name: str
    max_lines: int
    max_bytes: int
    reports_lines_while_running: bool

    def line_bytes(self, line: BatchLine) -> int: ...

    def submit(self, lines: Sequence[BatchLine]) -> str: ...

    def poll(self, batch_id: str) -> BatchState: ...

    def collect(self, batch_id: str) -> list[LineOutcome]: ...

