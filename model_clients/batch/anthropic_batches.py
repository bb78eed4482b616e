"""Anthropic's Message Batches as a :class:`~model_clients.batch.provider.BatchProvider`.

Claude is reached live through Anthropic's OpenAI-compatible endpoint (``configs/answerer/
claude-sonnet-4-6.yaml``), which has no batches; batches go to the native Messages API beside it,
through the ``anthropic`` SDK (an optional extra, imported on first use):
``messages.batches.create`` (submit), ``.retrieve`` (poll), ``.results`` (collect).

A line's body is in the OpenAI chat-completions form the live client sends; :func:`message_params`
translates it to Messages API params so that Claude receives what the compatible endpoint would
have given it for the live call (see the function for each field). The line's key (its cache key,
a 64-digit sha256) is the request's ``custom_id``.

Documented limits (cited where they are used below):

* Batch processing guide, "Batch limitations": at most 100,000 requests or 256 MB per batch,
  whichever comes first; results within 24 hours, requests not processed by then expire; errored,
  canceled and expired requests are not billed.
  https://platform.claude.com/docs/en/build-with-claude/batch-processing
* "Create a Message Batch" reference: 1 to 100,000 requests; ``custom_id`` unique within the batch,
  1-64 characters of letters, digits, ``_`` and ``-``; ``max_tokens`` required.
  https://platform.claude.com/docs/en/api/messages/batches/create
* OpenAI SDK compatibility page (what the live path does with the same body): system and developer
  messages are hoisted and joined with a newline into one system prompt; ``temperature`` above 1 is
  capped at 1; ``seed`` and ``response_format`` are ignored; ``finish_reason`` is given in OpenAI's
  vocabulary. https://platform.claude.com/docs/en/api/openai-sdk

The API key is read from ``LLMConfig.api_key_env`` on the first network call and kept only inside
the SDK client; it never enters an error message (they are scrubbed of it) or a log line.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence, TypeVar

from memory_protocol import ConfigError
from memplusplus.api_keys import MissingAPIKey, read_api_key, redact
from model_clients.batch.provider import BatchLine, BatchState, BatchStatus, LineOutcome
from model_clients.chat_types import ChatResult, LLMConfig, MissingAPIKeyError
from model_clients.sdk_holder import HoldsSDK

if TYPE_CHECKING:  # the SDK is an optional extra, imported on the first network call
    import anthropic

__all__ = [
    "AnthropicBatchError",
    "AnthropicBatches",
    "FINISH_REASONS",
    "INSTALL_HINT",
    "MAX_BATCH_BYTES",
    "MAX_REQUESTS_PER_BATCH",
    "RETRYABLE_ERROR_TYPES",
    "UnbatchableRequest",
    "batch_request",
    "message_params",
    "native_api_root",
    "outcome_of",
]

INSTALL_HINT = 'pip install -e ".[anthropic]"'

# Batch processing guide, "Batch limitations" (URL in the module docstring): 100,000 requests or
# 256 MB. "MB" is read as 10^6 bytes, the smaller of its two readings, which also leaves room for
# the request's JSON envelope that line_bytes does not count.
MAX_REQUESTS_PER_BATCH = 100_000
MAX_BATCH_BYTES = 256_000_000

# "Create a Message Batch" reference: custom_id is 1-64 of [a-zA-Z0-9_-].
CUSTOM_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")

# stop_reason -> the OpenAI finish_reason the live (OpenAI-compatible) path records. The brief's two:
# end_turn -> stop, max_tokens -> length. Ours, in the same vocabulary: a stop sequence is a stop,
# a tool call is tool_calls, a refusal is content_filter. Any other reason is kept as it is.
FINISH_REASONS: Mapping[str, str] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}

# Errored lines whose error a new batch may not repeat (ours): Anthropic's server-side error types.
# Any other type (invalid_request_error, authentication, permission, billing, not_found) would be
# given again to the same request unchanged, so it is final.
RETRYABLE_ERROR_TYPES = frozenset({"api_error", "overloaded_error", "rate_limit_error", "timeout_error"})

_HOISTED_ROLES = ("system", "developer")
_TURN_ROLES = ("user", "assistant")
_BODY_FIELDS = frozenset({"model", "messages", "temperature", "seed", "max_tokens", "response_format"})
_ERROR_MAX_CHARS = 500
_Reply = TypeVar("_Reply")


class UnbatchableRequest(ConfigError):
    """A line whose request has no faithful form in Anthropic's Message Batches (raised before
    anything is sent)."""


class AnthropicBatchError(RuntimeError):
    """A call to the Message Batches endpoints failed (after the SDK's own retries)."""


def native_api_root(base_url: str) -> str:
    """The Messages API root behind an OpenAI-compatible base URL: ``https://api.anthropic.com/v1/``
    gives ``https://api.anthropic.com`` (the SDK adds ``/v1/messages/batches``), a local fake at
    ``http://127.0.0.1:PORT/v1/`` gives ``http://127.0.0.1:PORT``. A URL without a trailing ``/v1``
    is taken as the root already."""
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


def message_params(body: Mapping[str, Any]) -> dict[str, Any]:
    """The Messages API params of one OpenAI-form chat body, as the compatible endpoint reads it.

    * ``messages``: ``system`` (and ``developer``) messages are taken out of the list and joined
      with a newline into the ``system`` parameter, in their order; ``user`` and ``assistant``
      messages stay, in order. Any other role (``tool``) is refused.
    * ``max_tokens`` is required by Anthropic: the body's value is sent; None or below 1 is refused
      (there is no default to fall back on, and 0 is not accepted inside a batch).
    * ``temperature`` is sent, capped at 1 as the compatible endpoint does (Anthropic's range is 0-1).
    * ``seed`` is dropped: the Messages API has no seed, and the compatible endpoint ignores it, so
      the live call never used it either.
    * ``response_format``: ``{"type": "text"}`` (plain text, the default) is dropped; JSON mode
      (``json_object``, ``json_schema``) is refused. The Messages API has no such switch, so a
      judge that asks for JSON mode cannot be batched on Anthropic unchanged: run it live.
    * ``tools`` / ``tool_choice`` / ``parallel_tool_calls`` and any other field are refused (not
      translated here).

    Raises :class:`UnbatchableRequest` naming the field.
    """
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
        if role in _HOISTED_ROLES:
            system.append(content)
        elif role in _TURN_ROLES:
            turns.append({"role": role, "content": content})
        else:
            raise UnbatchableRequest(f"message role {role!r} is not translated to Anthropic's Messages API")
    if not turns:
        raise UnbatchableRequest("the request has no user or assistant message")

    params: dict[str, Any] = {"model": model, "max_tokens": int(max_tokens), "messages": turns}
    if system:
        params["system"] = "\n".join(system)
    temperature = body.get("temperature")
    if temperature is not None:
        params["temperature"] = min(float(temperature), 1.0)
    return params


def batch_request(line: BatchLine) -> dict[str, Any]:
    """One entry of ``requests``: ``custom_id`` = the line's key, ``params`` = its Messages params."""
    if not CUSTOM_ID.fullmatch(line.key):
        raise UnbatchableRequest(f"key {line.key!r} is not a valid custom_id (1-64 of letters, digits, _ and -)")
    try:
        params = message_params(line.body)
    except UnbatchableRequest as exc:
        raise UnbatchableRequest(f"line {line.key}: {exc}") from None
    return {"custom_id": line.key, "params": params}


def _encoded(request: Mapping[str, Any]) -> bytes:
    """A request entry as the SDK serialises the body (compact separators, UTF-8)."""
    return json.dumps(request, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def outcome_of(entry: Any) -> LineOutcome:
    """One line of a batch's results (a ``MessageBatchIndividualResponse``) as a :class:`LineOutcome`.

    * ``succeeded``: a :class:`ChatResult` with the text blocks joined, ``usage.input_tokens`` /
      ``output_tokens`` as prompt / completion tokens and ``stop_reason`` mapped by
      :data:`FINISH_REASONS`. A reply without any text block is an error worth retrying (the live
      client asks again when a reply has no text).
    * ``errored``: the error type and message; retryable only for :data:`RETRYABLE_ERROR_TYPES`.
    * ``expired`` (the batch's 24 hours ran out first) and ``canceled``: retryable.
    """
    key = str(entry.custom_id)
    result = entry.result
    kind = getattr(result, "type", None)
    if kind == "succeeded":
        message = result.message
        texts = [block.text for block in message.content or () if getattr(block, "type", None) == "text"]
        stop_reason = message.stop_reason
        if not texts:
            error = f"the reply has no text block (stop_reason={stop_reason})"
            return LineOutcome(key=key, error=error, retryable=True)
        usage = message.usage
        return LineOutcome(
            key=key,
            result=ChatResult(
                text="".join(texts),
                prompt_tokens=int(usage.input_tokens) if usage is not None else 0,
                completion_tokens=int(usage.output_tokens) if usage is not None else 0,
                cached=False,
                key=key,
                finish_reason=FINISH_REASONS.get(stop_reason, stop_reason) if stop_reason else None,
            ),
        )
    if kind == "errored":
        error = getattr(getattr(result, "error", None), "error", None)
        error_type = str(getattr(error, "type", "unknown_error"))
        message_text = str(getattr(error, "message", ""))
        return LineOutcome(
            key=key,
            error=f"errored ({error_type}): {message_text}"[:_ERROR_MAX_CHARS],
            retryable=error_type in RETRYABLE_ERROR_TYPES,
        )
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
    """Message Batches for the endpoint of ``config`` (its OpenAI-compatible ``base_url`` gives the
    native root, :func:`native_api_root`; its ``api_key_env`` the key; ``timeout_s`` and
    ``max_retries`` go to the SDK). ``max_lines`` / ``max_bytes`` default to the documented limits
    and may be lowered (tests, or a margin); :meth:`submit` refuses a batch beyond them, the runner
    splits before that."""

    name = "anthropic"
    # Every request stays in request_counts.processing until the whole batch has ended (the
    # MessageBatch.request_counts description in the API reference and the SDK's
    # anthropic/types/messages/message_batch.py), so no line is reported done before then.
    reports_lines_while_running = False

    def __init__(
        self, config: LLMConfig, *, max_lines: int = MAX_REQUESTS_PER_BATCH, max_bytes: int = MAX_BATCH_BYTES
    ) -> None:
        if config.base_url is None:
            raise ConfigError(
                f"batch_api=anthropic for model {config.model!r} needs base_url (Anthropic's endpoint, "
                "e.g. https://api.anthropic.com/v1/); none is set, which means OpenAI's"
            )
        if not 1 <= max_lines <= MAX_REQUESTS_PER_BATCH:
            raise ValueError(f"max_lines must be in 1..{MAX_REQUESTS_PER_BATCH}, not {max_lines}")
        if not 1 <= max_bytes <= MAX_BATCH_BYTES:
            raise ValueError(f"max_bytes must be in 1..{MAX_BATCH_BYTES}, not {max_bytes}")
        self.config = config
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self.api_root = native_api_root(config.base_url)
        super().__init__()
        self._sdk: anthropic.Anthropic | None = None

    def __repr__(self) -> str:
        return (
            f"AnthropicBatches(model={self.config.model!r}, api_root={self.api_root!r}, "
            f"api_key_env={self.config.api_key_env!r}, max_lines={self.max_lines}, max_bytes={self.max_bytes})"
        )

    # ------------------------------------------------------------------ BatchProvider
    def line_bytes(self, line: BatchLine) -> int:
        """The line's bytes in the uploaded body: its request entry plus the comma before it."""
        return len(_encoded(batch_request(line))) + 1

    def submit(self, lines: Sequence[BatchLine]) -> str:
        """Create one batch of ``lines`` (each translated first, so an unbatchable line fails
        before anything is sent); returns the batch id."""
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
        batch = self._call("submit", lambda sdk: sdk.messages.batches.create(requests=requests))
        return str(batch.id)

    def poll(self, batch_id: str) -> BatchState:
        """The batch's state: ``pending`` while in progress or cancelling; once ended, ``cancelled``
        when a cancel was asked, ``expired`` when lines ran out of the 24 hours, else ``ended``.
        Every ended batch can be collected (its results hold every line). ``done`` counts the lines
        no longer processing (the API moves them out of processing when the batch ends)."""
        batch = self._call("poll", lambda sdk: sdk.messages.batches.retrieve(batch_id))
        counts = batch.request_counts
        total = counts.processing + counts.succeeded + counts.errored + counts.canceled + counts.expired
        status: BatchStatus
        if batch.processing_status != "ended":
            status = "pending"
        elif batch.cancel_initiated_at is not None:
            status = "cancelled"
        elif counts.expired:
            status = "expired"
        else:
            status = "ended"
        return BatchState(batch_id=str(batch.id), status=status, done=total - counts.processing, total=total,
                          provider_status=str(batch.processing_status))

    def collect(self, batch_id: str) -> list[LineOutcome]:
        """Every line of an ended batch, in the order the results file gives them (not the
        submission order: match them by ``key``)."""
        return self._call("collect", lambda sdk: [outcome_of(each) for each in sdk.messages.batches.results(batch_id)])

    # ------------------------------------------------------------------ SDK
    def _client(self) -> "anthropic.Anthropic":
        anthropic_sdk = _import_anthropic()
        with self._sdk_lock:
            if self._sdk is None:
                self._sdk = anthropic_sdk.Anthropic(
                    api_key=self._api_key(),
                    base_url=self.api_root,
                    timeout=self.config.timeout_s,
                    max_retries=self.config.max_retries,
                )
            return self._sdk

    def _api_key(self) -> str:
        try:
            what = f"model {self.config.model!r} at {self.api_root} (Message Batches)"
            return read_api_key(self.config.api_key_env, what)
        except MissingAPIKey as exc:
            raise MissingAPIKeyError(str(exc)) from None

    def _call(self, what: str, call: Callable[["anthropic.Anthropic"], _Reply]) -> _Reply:
        """``call`` on the SDK client; an SDK error becomes one :class:`AnthropicBatchError` naming
        the step, the model and the endpoint, scrubbed of the key."""
        sdk = self._client()
        anthropic_sdk = _import_anthropic()
        try:
            return call(sdk)
        except anthropic_sdk.APIStatusError as exc:
            detail = f"HTTP {exc.status_code} ({type(exc).__name__}): {exc.message}"
        except anthropic_sdk.AnthropicError as exc:
            detail = f"{type(exc).__name__}: {exc}"
        where = f"Message Batches {what} for model {self.config.model!r} at {self.api_root}"
        raise AnthropicBatchError(self._redact(f"{where}: {detail}"))

    def _redact(self, text: str) -> str:
        secrets = {self._sdk.api_key or ""} if self._sdk is not None else set()
        return redact(text, secrets)[:_ERROR_MAX_CHARS]
