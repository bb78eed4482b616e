"""The data of the model layer: what to call (``LLMConfig``), one request and its result, counters.

No secret lives here: a config names the environment variable that holds the key, never the key.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence
from urllib.parse import urlsplit

from memplusplus.api_keys import (
    DEFAULT_OPENAI_BASE_URL,
    NO_KEY_PLACEHOLDER,
    Endpoint,
    MissingAPIKey,
    require_at_least,
)

__all__ = [
    "DEFAULT_OPENAI_BASE_URL",
    "NO_KEY_PLACEHOLDER",
    "BatchPlan",
    "CacheMissError",
    "CallsInterrupted",
    "ChatRequest",
    "ChatResult",
    "LLMConfig",
    "LLMCounters",
    "MissingAPIKeyError",
    "EXECUTION_FIELDS",
    "endpoint_identity",
    "forget_served_model",
    "identity_fields",
    "register_served_model",
]

# How a call is carried out, never what it asks: these settings of an endpoint stay out of every
# cache key, system identity and run-folder hash, so changing them re-uses every cached result.
EXECUTION_FIELDS = frozenset(
    {"timeout_s", "max_retries", "max_reasks", "reask_delay_s", "concurrency", "cache_only",
     "price_in_per_mtok", "price_out_per_mtok", "batch", "batch_api", "batch_poll_s"}
)


def identity_fields(values: Mapping[str, Any]) -> dict[str, Any]:
    """An endpoint's settings (a config section) without the execution-only ones."""
    return {key: value for key, value in values.items() if key not in EXECUTION_FIELDS}

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "0.0.0.0")

# Loopback base URLs whose served model is known to the process that started the server (the
# harness's llama.cpp server: the sha256 of its model file), see :func:`register_served_model`. Kept
# in the environment, so the processes it starts (a sweep's jobs, a resumed stage) key alike.
SERVED_ENV = "MEMPP_SERVED_MODELS"


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
    slot = _loopback_slot(base_url)
    served = _served()
    if slot in served:
        del served[slot]
        os.environ[SERVED_ENV] = json.dumps(served, sort_keys=True)


def endpoint_identity(base_url: str) -> str:
    """What of an endpoint enters a cache key: a remote URL as it is (keys unchanged since the
    first release); a loopback server by what it serves when the process that started it said so
    (:func:`register_served_model`: the harness's llama.cpp server, keyed by its model file's
    sha256 whatever port it binds), any other loopback server with its port. Two servers on two
    ports may serve different models under the same name: they never share cached replies.
    """
    slot = _loopback_slot(base_url)
    if slot is None:
        return base_url
    served = _served().get(slot)
    if served is None:
        return slot
    parts = urlsplit(base_url)
    return f"{parts.scheme}://loopback{parts.path}".rstrip("/") + f"#{served}"


class CacheMissError(RuntimeError):
    """``cache_only=True`` and a request is not in the cache (no network call was made)."""

    def __init__(self, model: str, key: str, missing: int = 1) -> None:
        self.model = model
        self.key = key
        self.missing = missing
        more = f" ({missing} requests of this batch are missing)" if missing > 1 else ""
        super().__init__(
            f"cache_only is set but the completion for model {model!r} with cache key {key} is not "
            f"in the cache{more}; run without cache_only (with an API key) to fill it."
        )


class CallsInterrupted(KeyboardInterrupt):
    """Ctrl-C during a batch of model calls; ``message`` says how many replies are cached (a re-run
    asks only the rest)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class MissingAPIKeyError(MissingAPIKey):
    """A real request is needed but the environment variable holding the API key is unset or empty."""


@dataclass(frozen=True)
class LLMConfig(Endpoint):
    """How to reach one chat model and what to ask of it: the one endpoint type of the answerer,
    the judge and a system's write-time model (``model``, ``base_url``, ``api_key_env``,
    ``timeout_s``, ``max_retries`` come from :class:`~memplusplus.api_keys.Endpoint`). Holds no
    secret: the key is read from ``api_key_env`` when needed.

    ``api_key_env=None`` means "no key needed" (local servers): the placeholder ``"EMPTY"`` is sent.
    ``base_url=None`` means OpenAI's default endpoint; it is passed explicitly to the SDK, so an
    ``OPENAI_BASE_URL`` variable in the environment cannot silently redirect cached requests.
    """

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


EXTRA_FIELDS = ("response_format", "tools", "tool_choice", "parallel_tool_calls")


@dataclass(frozen=True)
class ChatRequest:
    """One chat completion to make.

    ``temperature``, ``seed`` and ``max_tokens`` override the client's config when not None.
    ``template_hash`` identifies the prompt template that produced ``messages`` and ``run_index``
    tells repeated runs of the same prompt apart (e.g. a judge run 3 times); both are part of the
    cache key but not sent to the API. ``extra`` holds request fields sent as they are
    (:data:`EXTRA_FIELDS`: ``response_format``, ``tools``, ``tool_choice``, ``parallel_tool_calls``);
    they are part of the cache key when set. ``omit`` names sampling settings (``seed``,
    ``max_tokens``) not sent at all, not even the config's (an upstream script that sends none).
    """

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
    """The outcome of one request. ``error`` is set (and ``text`` empty) when it failed for good.

    Token counts are those the API reported for the completion (also for a cache hit, where they
    were spent by an earlier run). ``cached`` is True when no request was made for this result.
    ``tool_calls`` are the reply's tool calls as the API gave them (``{"id", "type", "function":
    {"name", "arguments"}}``), when the request offered tools and the model called one.
    """

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


@dataclass(frozen=True)
class LLMCounters:
    """What a client did. ``requests_sent`` counts HTTP attempts (the SDK's retries and our
    re-asks included, ``retries`` counts both); ``failures`` counts requests given up on; tokens are
    those actually spent (API-reported)."""

    requests_sent: int = 0
    cache_hits: int = 0
    completed: int = 0
    failures: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # Of the completed ones, those that came back through a provider batch (their tokens included
    # in the totals above as well): priced at the batch tier.
    batch_completed: int = 0
    batch_prompt_tokens: int = 0
    batch_completion_tokens: int = 0


@dataclass(frozen=True)
class BatchPlan:
    """Which requests of a batch are served from the cache and which must be sent.

    ``to_send`` holds the index of the first request of each distinct missing cache key; later
    requests with the same key (``duplicates``) share its result without a request of their own.
    """

    keys: tuple[str, ...]
    hits: Mapping[str, Mapping[str, Any]]
    to_send: tuple[int, ...]
    duplicates: int

    @property
    def cache_hits(self) -> int:
        return sum(1 for key in self.keys if key in self.hits)
