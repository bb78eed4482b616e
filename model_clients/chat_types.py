"""The data of the model layer: what to call (``LLMConfig``), one request and its result (live, from a
batch line or from the cache), counters, the client interface the pool and batch runner use, and the
one way a client holds its provider SDK (built lazily, its key scrubbed from every error).
No secret lives here: a config names the environment variable that holds the key, never the key."""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Protocol, Sequence
from urllib.parse import urlsplit

from memplusplus.api_keys import Endpoint, read_api_key, redact, require_at_least
from memplusplus.api_keys import MissingAPIKey as MissingAPIKeyError  # noqa: F401 (a real request lacks its key)

if TYPE_CHECKING:
    from model_clients.kvstore import KVStore

# How a call is carried out, never what it asks: these settings of an endpoint stay out of every
# cache key, system identity and run-folder hash, so changing them re-uses every cached result.
EXECUTION_FIELDS = frozenset(
    {"timeout_s", "max_retries", "max_reasks", "reask_delay_s", "concurrency", "cache_only",
     "price_in_per_mtok", "price_out_per_mtok", "batch", "batch_api", "batch_poll_s"}
)
EXTRA_FIELDS = ("response_format", "tools", "tool_choice", "parallel_tool_calls")  # sent as given, keyed when set
CACHE_SCHEMA = 1  # enters every cache key: bump to invalidate every cached completion
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "0.0.0.0")
# Loopback base URL -> what it serves (the harness's llama.cpp server: its GGUF's sha256). Kept in the
# environment, so the processes it starts (a sweep's jobs, a resumed stage) key alike.
SERVED_ENV = "MEMPP_SERVED_MODELS"


def identity_fields(values: Mapping[str, Any]) -> dict[str, Any]:
    """An endpoint's settings (a config section) without the execution-only ones."""
    return {key: value for key, value in values.items() if key not in EXECUTION_FIELDS}


def _served() -> dict[str, str]:
    try:
        found = json.loads(os.environ.get(SERVED_ENV) or "{}")
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


def _loopback_slot(base_url: str) -> str | None:
    """``scheme://loopback:port/path`` for a loopback URL (any spelling of the host), else None."""
    parts = urlsplit(base_url)
    if parts.hostname not in LOOPBACK_HOSTS:
        return None
    return f"{parts.scheme}://loopback:{parts.port or ''}{parts.path.rstrip('/')}"


def register_served_model(base_url: str, identity: str) -> None:
    """Declare what the loopback server at ``base_url`` serves (e.g. ``gguf-sha256:<hex>``): its
    cache keys then name that, not the port, so a re-run on another free port finds them."""
    slot = _loopback_slot(base_url)
    if slot is None:
        raise ValueError(f"{base_url} is not a loopback URL")
    os.environ[SERVED_ENV] = json.dumps({**_served(), slot: identity}, sort_keys=True)


def forget_served_model(base_url: str) -> None:
    served = _served()
    if served.pop(_loopback_slot(base_url) or "", None) is not None:
        os.environ[SERVED_ENV] = json.dumps(served, sort_keys=True)


def endpoint_identity(base_url: str) -> str:
    """What of an endpoint enters a cache key: a remote URL as it is; a loopback server by what it
    serves when registered, any other by its port (two ports may serve two models under one name)."""
    slot = _loopback_slot(base_url)
    served = _served().get(slot) if slot is not None else None
    if slot is None or served is None:
        return slot or base_url
    parts = urlsplit(base_url)
    return f"{parts.scheme}://loopback{parts.path}".rstrip("/") + f"#{served}"


class CacheMissError(RuntimeError):
    """``cache_only=True`` and a request is not in the cache (no network call was made)."""

    def __init__(self, model: str, key: str, missing: int = 1) -> None:
        self.model, self.key, self.missing = model, key, missing
        more = f" ({missing} requests of this batch are missing)" if missing > 1 else ""
        super().__init__(
            f"cache_only is set but the completion for model {model!r} with cache key {key} is not "
            f"in the cache{more}; run without cache_only (with an API key) to fill it."
        )


class CallsInterrupted(KeyboardInterrupt):
    """Ctrl-C during a stage's model calls; ``message`` says how many replies are cached."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class LLMConfig(Endpoint):
    """One chat endpoint (answerer, judge or a system's write-time model) and what to ask of it.
    ``api_key_env=None``: no key needed (local servers). ``base_url=None``: OpenAI's, passed to the SDK
    explicitly so an ``OPENAI_BASE_URL`` in the environment cannot silently redirect cached requests."""

    temperature: float = 0.0
    seed: int | None = 0
    max_tokens: int | None = 512
    # max_retries (Endpoint) are the SDK's: 408/409/429/5xx, timeouts, connection errors; honours Retry-After
    max_reasks: int = 2  # ours: a 200 reply that is not JSON, has no choices or no text is asked again
    reask_delay_s: float = 1.0  # before the first re-ask; doubled for each further one
    concurrency: int = 4
    cache_only: bool = False
    price_in_per_mtok: float | None = None  # USD per 1M tokens, overriding the price table (not in the key)
    price_out_per_mtok: float | None = None
    # The provider's batch API instead of live calls (half price, results within 24 h); same cache keys.
    batch: bool = False
    batch_api: str = "auto"  # auto (anthropic for api.anthropic.com, else openai) | openai | anthropic
    batch_poll_s: float = 60.0  # seconds between two polls of a submitted batch

    def __post_init__(self) -> None:
        if not self.model:
            raise ValueError("LLMConfig.model must be a non-empty model name")
        require_at_least(1, "LLMConfig", concurrency=self.concurrency)
        require_at_least(0, "LLMConfig", max_retries=self.max_retries, max_reasks=self.max_reasks,
                         reask_delay_s=self.reask_delay_s)
        if self.timeout_s <= 0:
            raise ValueError("LLMConfig.timeout_s must be > 0")
        if self.batch_poll_s < 0:
            raise ValueError("LLMConfig.batch_poll_s must be >= 0")
        if self.batch_api not in ("auto", "openai", "anthropic"):
            raise ValueError(f"LLMConfig.batch_api must be auto, openai or anthropic, not {self.batch_api!r}")

    @property
    def endpoint(self) -> str:
        """The endpoint as the cache key sees it (:func:`endpoint_identity`)."""
        return endpoint_identity(self.resolved_base_url)

    @property
    def where(self) -> str:
        """``model 'x' at <url>``: how errors name this endpoint."""
        return f"model {self.model!r} at {self.resolved_base_url}"


@dataclass(frozen=True)
class ChatRequest:
    """One chat completion. ``temperature``/``seed``/``max_tokens`` override the config when set;
    ``template_hash`` (the prompt template) and ``run_index`` (repeats, e.g. a judge run 3 times) are
    keyed, not sent; ``extra`` (:data:`EXTRA_FIELDS`) is sent and keyed; ``omit`` names sampling
    settings not sent at all, not even the config's (an upstream script that sends none)."""

    messages: Sequence[Mapping[str, str]]
    template_hash: str = ""
    run_index: int = 0
    temperature: float | None = None
    seed: int | None = None
    max_tokens: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    omit: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.messages:
            raise ValueError("ChatRequest.messages must not be empty")
        for message in self.messages:
            if not isinstance(message.get("role"), str) or not isinstance(message.get("content"), str):
                raise ValueError(f"each message needs a string 'role' and 'content', got {message!r}")
        if self.run_index < 0:
            raise ValueError("ChatRequest.run_index must be >= 0")
        if set(self.omit) - {"seed", "max_tokens"}:
            raise ValueError(f"ChatRequest.omit: only seed and max_tokens can be left out, got {list(self.omit)}")
        unknown = sorted(set(self.extra) - set(EXTRA_FIELDS))
        if unknown:
            raise ValueError(f"ChatRequest.extra: unsupported field(s) {unknown}; supported: {list(EXTRA_FIELDS)}")


@dataclass(frozen=True)
class ChatResult:
    """One request's outcome: ``error`` set (``text`` empty) when it failed for good. Tokens are the
    API's (also for a cache hit, spent by an earlier run); ``cached``: no request was made for it;
    ``tool_calls`` as the API gave them (``{"id", "type", "function": {"name", "arguments"}}``)."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
    error: str | None = None
    key: str = ""
    finish_reason: str | None = None
    tool_calls: tuple[Mapping[str, Any], ...] = ()

    @property
    def ok(self) -> bool:
        return self.error is None

    def entry(self, model: str, template_hash: str, run_index: int) -> dict[str, Any]:
        """The cache entry of this result: the answer and what audits its request, never a credential."""
        return {"schema": CACHE_SCHEMA, "model": model, "template_hash": template_hash, "run_index": run_index,
                "text": self.text, "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "finish_reason": self.finish_reason, **({"tool_calls": list(self.tool_calls)} if self.tool_calls else {})}

    @classmethod
    def from_entry(cls, key: str, value: Mapping[str, Any]) -> "ChatResult":
        return cls(text=str(value["text"]), prompt_tokens=int(value.get("prompt_tokens", 0)),
                   completion_tokens=int(value.get("completion_tokens", 0)), cached=True, key=key,
                   finish_reason=value.get("finish_reason"), tool_calls=tuple(value.get("tool_calls") or ()))


def decode_entry(raw: bytes) -> dict[str, Any]:
    value = json.loads(raw)
    if not isinstance(value, dict) or "text" not in value:
        raise ValueError("corrupt LLM cache entry")
    return value


@dataclass(frozen=True)
class LineOutcome:
    """One try at a request (a live call or a batch line): a result, or ``error``; ``retryable`` when
    asking again may succeed (a 200 reply without choices or text, an expired batch line)."""

    key: str
    result: ChatResult | None = None
    error: str | None = None
    retryable: bool = False


def attempt_of(completion: Any, key: str) -> LineOutcome:
    """An SDK ``ChatCompletion`` (a live reply or a batch's output line) as a :class:`LineOutcome`."""
    if not completion.choices:
        return LineOutcome(key, error="the API returned no choices", retryable=True)
    choice = completion.choices[0]
    calls = tuple(call.model_dump(include={"id", "type", "function"}) for call in choice.message.tool_calls or ())
    content = "" if choice.message.content is None and calls else choice.message.content
    if content is None:
        return LineOutcome(key, error=f"the API returned no text content (finish_reason={choice.finish_reason})",
                           retryable=True)
    usage = completion.usage
    return LineOutcome(key, ChatResult(text=content, prompt_tokens=usage.prompt_tokens if usage is not None else 0,
                                       completion_tokens=usage.completion_tokens if usage is not None else 0, key=key,
                                       finish_reason=choice.finish_reason, tool_calls=calls))


@dataclass(frozen=True)
class LLMCounters:
    """What a client did. ``requests_sent`` counts HTTP attempts (the SDK's retries and our re-asks
    included, ``retries`` counts both); ``failures``: requests given up on; tokens as the API reported."""

    requests_sent: int = 0
    cache_hits: int = 0
    completed: int = 0
    failures: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # Of the completed ones, those that came back through a provider batch (also in the totals above):
    # priced at the batch tier.
    batch_completed: int = 0
    batch_prompt_tokens: int = 0
    batch_completion_tokens: int = 0


@dataclass(frozen=True)
class BatchPlan:
    """Which requests the cache serves and which must be sent: ``to_send`` holds the first index of
    each distinct missing key; later ones with that key (``duplicates``) share its result."""

    keys: tuple[str, ...]
    hits: Mapping[str, Mapping[str, Any]]
    to_send: tuple[int, ...]
    duplicates: int

    @property
    def cache_hits(self) -> int:
        return sum(1 for key in self.keys if key in self.hits)


class ChatClient(Protocol):
    """What the call pool and the batch runner use of :class:`~model_clients.llm_client.LLMClient`
    (typed here, so that neither imports the client that imports them)."""

    config: LLMConfig
    role: str
    cache: KVStore

    def plan(self, requests: Sequence[ChatRequest]) -> BatchPlan: ...
    def count(self, **deltas: int) -> None: ...
    def sdk_ready(self) -> None: ...
    def fetch_and_store(self, key: str, request: ChatRequest) -> ChatResult: ...
    def request_body(self, request: ChatRequest) -> dict[str, Any]: ...
    def store_success(self, key: str, template_hash: str, run_index: int, result: ChatResult, *,
                      batch: bool = False) -> ChatResult: ...
    def failure(self, key: str, error: str) -> ChatResult: ...
    def redact(self, text: str) -> str: ...
    def sdk_for_batches(self) -> Any: ...
    def run_batches(self, wanted: dict[str, ChatRequest], desc: str, progress: bool) -> dict[str, ChatResult]: ...


ERROR_MAX_CHARS = 500


class HoldsSDK:
    """Base of a client holding its provider SDK client in ``_sdk`` (None until built): on first use
    it reads the key, then the subclass's ``_build_sdk(api_key)`` constructs the client with it."""

    config: LLMConfig
    _sdk: Any = None

    def __init__(self) -> None:
        self._sdk_lock = threading.Lock()
        self._sdk = None

    @property
    def sdk_where(self) -> str:
        """How a missing-key error names this client's endpoint."""
        return self.config.where

    def _build_sdk(self, api_key: str) -> Any:
        raise NotImplementedError

    def sdk_ready(self) -> None:
        """Build the SDK client now: a missing key (or whatever ``_build_sdk`` checks) fails here."""
        self._client()

    def _client(self) -> Any:
        with self._sdk_lock:
            if self._sdk is None:
                self._sdk = self._build_sdk(self.api_key())
            return self._sdk

    def api_key(self) -> str:
        """The key (raises ``MissingAPIKeyError`` naming :attr:`sdk_where` and the variable when unset)."""
        return read_api_key(self.config.api_key_env, self.sdk_where)

    def redact(self, text: str) -> str:
        """``text`` without the API key, cut to the error length kept."""
        env = self.config.api_key_env
        secrets = {os.environ.get(env, "") if env else "", getattr(self._sdk, "api_key", None) or ""}
        return redact(text, secrets)[:ERROR_MAX_CHARS]

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._sdk_lock:
            if self._sdk is not None:
                self._sdk.close()
                self._sdk = None
