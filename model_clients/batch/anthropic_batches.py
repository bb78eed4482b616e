"""Anthropic's Message Batches as a batch provider, through the ``anthropic`` SDK (an optional extra):
Claude is reached live through Anthropic's OpenAI-compatible endpoint, which has no batches, so each
line is translated (:func:`message_params`) to what that endpoint would have given Claude. Sources:
batch limits (100,000 requests or 256 MB; 24 hours; failed lines not billed):
https://platform.claude.com/docs/en/build-with-claude/batch-processing; ``custom_id`` and ``max_tokens``
rules: https://platform.claude.com/docs/en/api/messages/batches/create; what the compatible endpoint
does (system/developer messages joined, temperature capped at 1, seed and response_format ignored):
https://platform.claude.com/docs/en/api/openai-sdk
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence, TypeVar

from memory_protocol import ConfigError
from model_clients.batch.provider import BatchLine, BatchState, BatchStatus
from model_clients.chat_types import ERROR_MAX_CHARS, ChatResult, HoldsSDK, LineOutcome, LLMConfig

if TYPE_CHECKING:  # the SDK is an optional extra, imported on the first network call
    import anthropic

INSTALL_HINT = 'pip install -e ".[anthropic]"'

# "MB" read as 10^6 bytes, the smaller reading, which also leaves room for the JSON envelope.
MAX_REQUESTS_PER_BATCH = 100_000
MAX_BATCH_BYTES = 256_000_000
CUSTOM_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
# stop_reason -> the finish_reason the live (OpenAI-compatible) path records; any other kept as it is.
FINISH_REASONS: Mapping[str, str] = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length",
                                     "tool_use": "tool_calls", "refusal": "content_filter"}
# Anthropic's server-side error types (ours): a new batch may not repeat them. Any other type
# (invalid request, authentication, permission, billing, not found) would recur unchanged: final.
RETRYABLE_ERROR_TYPES = frozenset({"api_error", "overloaded_error", "rate_limit_error", "timeout_error"})
_BODY_FIELDS = frozenset({"model", "messages", "temperature", "seed", "max_tokens", "response_format"})
_Reply = TypeVar("_Reply")


class UnbatchableRequest(ConfigError):
    """A line whose request has no faithful form in Message Batches (raised before anything is sent)."""


class AnthropicBatchError(RuntimeError):
    """A call to the Message Batches endpoints failed (after the SDK's own retries)."""


def native_api_root(base_url: str) -> str:
    """The Messages API root behind an OpenAI-compatible base URL (``.../v1`` dropped; the SDK adds
    ``/v1/messages/batches``); a URL without a trailing ``/v1`` is the root already."""
    return base_url.rstrip("/").removesuffix("/v1")


def message_params(body: Mapping[str, Any]) -> dict[str, Any]:
    """The Messages API params of one OpenAI-form chat body, as the compatible endpoint reads it:
    system/developer messages joined into ``system``; ``max_tokens`` required (at least 1);
    ``temperature`` capped at 1; ``seed`` dropped (never used live either); a text
    ``response_format`` dropped. JSON mode, tools, other roles and fields have no faithful form and
    raise :class:`UnbatchableRequest` naming them (run such a role live)."""
    unknown = sorted(set(body) - _BODY_FIELDS)
    if unknown:
        raise UnbatchableRequest(f"field(s) {unknown} are not translated to Anthropic's Messages API")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise UnbatchableRequest("the body names no model")
    max_tokens = body.get("max_tokens")
    if max_tokens is None:
        raise UnbatchableRequest(
            f"max_tokens is None, but Anthropic requires it (model {model!r}): set max_tokens on this role"
        )
    if int(max_tokens) < 1:
        raise UnbatchableRequest(f"max_tokens={max_tokens}: a Message Batches request needs at least 1")
    response_format = body.get("response_format")
    if response_format is not None and dict(response_format).get("type") != "text":
        raise UnbatchableRequest(
            f"response_format {dict(response_format)!r} (JSON mode) has no counterpart in Anthropic's "
            f"Messages API; run this role without batch=true"
        )
    system: list[str] = []
    turns: list[dict[str, str]] = []
    for message in body.get("messages") or ():
        role, content = message.get("role"), message.get("content")
        if not isinstance(content, str):
            raise UnbatchableRequest(f"a {role!r} message without string content is not translated")
        if role in ("system", "developer"):
            system.append(content)
        elif role in ("user", "assistant"):
            turns.append({"role": role, "content": content})
        else:
            raise UnbatchableRequest(f"message role {role!r} is not translated to Anthropic's Messages API")
    if not turns:
        raise UnbatchableRequest("the request has no user or assistant message")
    params: dict[str, Any] = {"model": model, "max_tokens": int(max_tokens), "messages": turns}
    if system:
        params["system"] = "\n".join(system)
    if body.get("temperature") is not None:
        params["temperature"] = min(float(body["temperature"]), 1.0)
    return params


def batch_request(line: BatchLine) -> dict[str, Any]:
    """One entry of ``requests``: ``custom_id`` = the line's key, ``params`` = its Messages params."""
    if not CUSTOM_ID.fullmatch(line.key):
        raise UnbatchableRequest(f"key {line.key!r} is not a valid custom_id (1-64 of letters, digits, _ and -)")
    try:
        return {"custom_id": line.key, "params": message_params(line.body)}
    except UnbatchableRequest as exc:
        raise UnbatchableRequest(f"line {line.key}: {exc}") from None


def _encoded(request: Mapping[str, Any]) -> bytes:
    """A request entry as the SDK serialises the body (compact separators, UTF-8)."""
    return json.dumps(request, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def outcome_of(entry: Any) -> LineOutcome:
    """One line of a batch's results: a success without a text block, an expired or canceled line
    and a server-side error (:data:`RETRYABLE_ERROR_TYPES`) are worth one more batch."""
    key = str(entry.custom_id)
    result = entry.result
    kind = getattr(result, "type", None)
    if kind == "succeeded":
        message = result.message
        texts = [block.text for block in message.content or () if getattr(block, "type", None) == "text"]
        stop = message.stop_reason
        if not texts:
            return LineOutcome(key=key, error=f"the reply has no text block (stop_reason={stop})", retryable=True)
        usage = message.usage
        return LineOutcome(key=key, result=ChatResult(
            text="".join(texts), prompt_tokens=int(usage.input_tokens) if usage is not None else 0,
            completion_tokens=int(usage.output_tokens) if usage is not None else 0, key=key,
            finish_reason=FINISH_REASONS.get(stop, stop) if stop else None))
    if kind == "errored":
        error = getattr(getattr(result, "error", None), "error", None)
        error_type = str(getattr(error, "type", "unknown_error"))
        return LineOutcome(key=key, error=f"errored ({error_type}): {getattr(error, 'message', '')}"[:ERROR_MAX_CHARS],
                           retryable=error_type in RETRYABLE_ERROR_TYPES)
    if kind == "expired":
        return LineOutcome(key=key, error="expired: the batch's 24 hours ended before this request ran", retryable=True)
    if kind == "canceled":
        return LineOutcome(key=key, error="canceled: the batch was cancelled before this request ran", retryable=True)
    return LineOutcome(key=key, error=f"unknown result type {kind!r}")


def _import_anthropic() -> Any:
    try:
        import anthropic
    except ImportError:
        raise ConfigError(f"batch_api=anthropic needs the anthropic extra: {INSTALL_HINT}") from None
    return anthropic


class AnthropicBatches(HoldsSDK):
    """Message Batches for the endpoint of ``config`` (the native root of its ``base_url``, its key,
    timeout and retries). ``max_lines`` / ``max_bytes`` default to the documented limits and may be
    lowered; :meth:`submit` refuses a batch beyond them (the runner splits before that)."""

    name = "anthropic"
    # Every request stays in request_counts.processing until the whole batch has ended (the
    # MessageBatch.request_counts description in the API reference and the SDK's
    # anthropic/types/messages/message_batch.py), so no line is reported done before then.
    reports_lines_while_running = False

    def __init__(self, config: LLMConfig, *, max_lines: int = MAX_REQUESTS_PER_BATCH,
                 max_bytes: int = MAX_BATCH_BYTES) -> None:
        if config.base_url is None:
            raise ConfigError(
                f"batch_api=anthropic for model {config.model!r} needs base_url (Anthropic's endpoint, "
                "e.g. https://api.anthropic.com/v1/); none is set, which means OpenAI's"
            )
        if not 1 <= max_lines <= MAX_REQUESTS_PER_BATCH:
            raise ValueError(f"max_lines must be in 1..{MAX_REQUESTS_PER_BATCH}, not {max_lines}")
        if not 1 <= max_bytes <= MAX_BATCH_BYTES:
            raise ValueError(f"max_bytes must be in 1..{MAX_BATCH_BYTES}, not {max_bytes}")
        super().__init__()
        self.config, self.max_lines, self.max_bytes = config, max_lines, max_bytes
        self.api_root = native_api_root(config.base_url)

    def __repr__(self) -> str:
        return (f"AnthropicBatches(model={self.config.model!r}, api_root={self.api_root!r}, "
                f"api_key_env={self.config.api_key_env!r}, max_lines={self.max_lines}, max_bytes={self.max_bytes})")

    def line_bytes(self, line: BatchLine) -> int:
        """The line's bytes in the uploaded body: its request entry plus the comma before it."""
        return len(_encoded(batch_request(line))) + 1

    def submit(self, lines: Sequence[BatchLine]) -> str:
        """Create one batch (each line translated first, so an unbatchable one fails before any send)."""
        requests = [batch_request(line) for line in lines]
        if not requests:
            raise ValueError("a Message Batch needs at least one request")
        keys = [request["custom_id"] for request in requests]
        if len(set(keys)) != len(keys):
            raise ValueError("custom_id must be unique within a Message Batch: the lines repeat a key")
        if len(requests) > self.max_lines:
            raise ValueError(f"{len(requests)} lines exceed max_lines={self.max_lines} for one batch; split them")
        size = sum(len(_encoded(request)) + 1 for request in requests)
        if size > self.max_bytes:
            raise ValueError(f"{size} bytes of lines exceed max_bytes={self.max_bytes} for one batch; split them")
        return str(self._call("submit", lambda sdk: sdk.messages.batches.create(requests=requests)).id)

    def poll(self, batch_id: str) -> BatchState:
        """``pending`` until ended; then ``cancelled`` if a cancel was asked, ``expired`` if lines ran
        out of the 24 hours, else ``ended``. ``done``: the lines no longer processing."""
        batch = self._call("poll", lambda sdk: sdk.messages.batches.retrieve(batch_id))
        counts = batch.request_counts
        total = counts.processing + counts.succeeded + counts.errored + counts.canceled + counts.expired
        status: BatchStatus
        if batch.processing_status != "ended":
            status = "pending"
        elif batch.cancel_initiated_at is not None:
            status = "cancelled"
        else:
            status = "expired" if counts.expired else "ended"
        return BatchState(batch_id=str(batch.id), status=status, done=total - counts.processing, total=total,
                          provider_status=str(batch.processing_status))

    def collect(self, batch_id: str) -> list[LineOutcome]:
        """Every line of an ended batch, in the results file's order (match them by ``key``)."""
        return self._call("collect", lambda sdk: [outcome_of(each) for each in sdk.messages.batches.results(batch_id)])

    @property
    def sdk_where(self) -> str:
        return f"model {self.config.model!r} at {self.api_root} (Message Batches)"

    def _build_sdk(self, api_key: str) -> "anthropic.Anthropic":
        return _import_anthropic().Anthropic(api_key=api_key, base_url=self.api_root, timeout=self.config.timeout_s,
                                             max_retries=self.config.max_retries)

    def _call(self, what: str, call: Callable[["anthropic.Anthropic"], _Reply]) -> _Reply:
        """``call`` on the SDK client; an SDK error becomes one :class:`AnthropicBatchError` naming
        the step, the model and the endpoint, scrubbed of the key."""
        anthropic_sdk = _import_anthropic()
        sdk = self._client()
        try:
            return call(sdk)
        except anthropic_sdk.APIStatusError as exc:
            detail = f"HTTP {exc.status_code} ({type(exc).__name__}): {exc.message}"
        except anthropic_sdk.AnthropicError as exc:
            detail = f"{type(exc).__name__}: {exc}"
        where = f"Message Batches {what} for model {self.config.model!r} at {self.api_root}"
        raise AnthropicBatchError(self.redact(f"{where}: {detail}"))
