"""What every batch API offers the batch runner: submit lines, poll a batch, collect its lines.

A line is one chat request keyed by its cache key (the live call's key, see
:meth:`model_clients.llm_client.LLMClient.cache_key`), which is also the line's ``custom_id``
at the provider, so a collected result lands in the cache where a live call would have put it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Mapping, Protocol, Sequence

from model_clients.chat_types import ChatResult

BatchStatus = Literal["pending", "ended", "expired", "failed", "cancelled"]


@dataclass(frozen=True)
class BatchLine:
    """One request of a batch: ``key`` (its cache key and custom_id) and the chat body in the
    OpenAI chat-completions form (model, messages, temperature, seed, max_tokens, extra fields),
    which a provider translates to its own form."""

    key: str
    body: Mapping[str, Any]


@dataclass(frozen=True)
class BatchState:
    """A submitted batch as the provider reports it: ``done`` of ``total`` lines finished
    (succeeded or failed). ``status`` is ``pending`` until the provider stops working on it;
    ``provider_status`` is the provider's own word for it (``in_progress``, ``finalizing``, ...)."""

    batch_id: str
    status: BatchStatus
    done: int
    total: int
    provider_status: str = ""


@dataclass(frozen=True)
class LineOutcome:
    """One line's end: a result (``result.ok``), or ``error`` with ``retryable`` when a new batch
    may succeed (expired, cancelled, a provider-side error), not when the request itself is bad."""

    key: str
    result: ChatResult | None = None
    error: str | None = None
    retryable: bool = False


class BatchProvider(Protocol):
    """One provider's batch endpoints. ``max_lines`` / ``max_bytes`` are its documented limits for
    one batch (the runner splits beyond them); ``line_bytes`` is a line's size as uploaded.
    ``reports_lines_while_running`` is False for a provider that counts no line as done before
    the whole batch ends (Anthropic), so a progress bar cannot move until then."""

    name: str
    max_lines: int
    max_bytes: int
    reports_lines_while_running: bool

    def line_bytes(self, line: BatchLine) -> int: ...

    def submit(self, lines: Sequence[BatchLine]) -> str: ...

    def poll(self, batch_id: str) -> BatchState: ...

    def collect(self, batch_id: str) -> list[LineOutcome]: ...


__all__ = ["BatchLine", "BatchProvider", "BatchState", "BatchStatus", "LineOutcome"]
