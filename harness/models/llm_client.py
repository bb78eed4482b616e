"""A cached, retrying, bounded-concurrency client for OpenAI-compatible chat completion APIs.

Every completion is keyed by ``stable_hash`` of the canonical request (model, base URL, messages,
temperature, seed, max_tokens, prompt-template hash, run index -- never the API key) and stored in a
:class:`~harness.kvstore.KVStore` the moment it arrives, so a repeated run costs no request and a
killed run resumes without repeating a completed one.

Retries are done here, not by the SDK (which is built with ``max_retries=0``): exponential backoff
with jitter on 429, 408, 5xx, timeouts and connection errors, honouring ``Retry-After`` /
``retry-after-ms``. Any other failure is permanent. A failed request is returned as
``ChatResult(error=...)`` and never cached, so the caller can record it and a later run retries it.

The API key is read from the environment variable named by ``LLMConfig.api_key_env`` only when a
real request has to be sent; it is kept only inside the SDK client, never in a config, a result, a
cache entry, a repr or an error message (error texts are scrubbed of it).
"""

from __future__ import annotations

import email.utils
import json
import math
import os
import random
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import openai
from tqdm import tqdm

from harness.kvstore import KVStore, stable_hash

__all__ = [
    "DEFAULT_OPENAI_BASE_URL",
    "NO_KEY_PLACEHOLDER",
    "BatchPlan",
    "CacheMissError",
    "ChatRequest",
    "ChatResult",
    "LLMClient",
    "LLMConfig",
    "LLMCounters",
    "MissingAPIKeyError",
]

DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"
NO_KEY_PLACEHOLDER = "EMPTY"  # what is sent when ``api_key_env`` is None (local servers that need no key)
CACHE_SCHEMA = 1  # bump to invalidate every cached completion if the canonical request form changes
_ERROR_MAX_CHARS = 500


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


class MissingAPIKeyError(RuntimeError):
    """A real request is needed but the environment variable holding the API key is unset or empty."""


@dataclass(frozen=True)
class LLMConfig:
    """How to reach one model. Holds no secret: the key is read from ``api_key_env`` when needed.

    ``api_key_env=None`` means "no key needed" (local servers): the placeholder ``"EMPTY"`` is sent.
    ``base_url=None`` means OpenAI's default endpoint; it is passed explicitly to the SDK, so an
    ``OPENAI_BASE_URL`` variable in the environment cannot silently redirect cached requests.
    """

    model: str
    base_url: str | None = None
    api_key_env: str | None = "OPENAI_API_KEY"
    temperature: float = 0.0
    seed: int | None = 0
    max_tokens: int | None = 512
    timeout_s: float = 60.0
    max_retries: int = 6
    backoff_base_s: float = 1.0
    backoff_max_s: float = 60.0
    retry_after_max_s: float = 120.0  # a longer Retry-After is clipped to this
    concurrency: int = 4
    cache_only: bool = False

    def __post_init__(self) -> None:
        if not self.model:
            raise ValueError("LLMConfig.model must be a non-empty model name")
        if self.concurrency < 1:
            raise ValueError("LLMConfig.concurrency must be >= 1")
        if self.max_retries < 0:
            raise ValueError("LLMConfig.max_retries must be >= 0")
        if self.timeout_s <= 0:
            raise ValueError("LLMConfig.timeout_s must be > 0")
        if self.backoff_base_s < 0 or self.backoff_max_s < 0 or self.retry_after_max_s < 0:
            raise ValueError("LLMConfig backoff delays must be >= 0")

    @property
    def resolved_base_url(self) -> str:
        """The endpoint actually used, without a trailing slash (part of the cache key)."""
        return (self.base_url or DEFAULT_OPENAI_BASE_URL).rstrip("/")


@dataclass(frozen=True)
class ChatRequest:
    """One chat completion to make.

    ``temperature``, ``seed`` and ``max_tokens`` override the client's config when not None.
    ``template_hash`` identifies the prompt template that produced ``messages`` and ``run_index``
    tells repeated runs of the same prompt apart (e.g. a judge run 3 times); both are part of the
    cache key but not sent to the API.
    """

    messages: Sequence[Mapping[str, str]]
    template_hash: str = ""
    run_index: int = 0
    temperature: float | None = None
    seed: int | None = None
    max_tokens: int | None = None

    def __post_init__(self) -> None:
        if not self.messages:
            raise ValueError("ChatRequest.messages must not be empty")
        for message in self.messages:
            if not isinstance(message.get("role"), str) or not isinstance(message.get("content"), str):
                raise ValueError(f"each message needs a string 'role' and 'content', got {message!r}")
        if self.run_index < 0:
            raise ValueError("ChatRequest.run_index must be >= 0")


@dataclass(frozen=True)
class ChatResult:
    """The outcome of one request. ``error`` is set (and ``text`` empty) when it failed for good.

    Token counts are those the API reported for the completion (also for a cache hit, where they
    were spent by an earlier run). ``cached`` is True when no request was made for this result.
    """

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
    error: str | None = None
    key: str = ""
    finish_reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class LLMCounters:
    """What a client did. ``requests_sent`` counts HTTP attempts (retries included);
    ``failures`` counts requests given up on; tokens are those actually spent (API-reported)."""

    requests_sent: int = 0
    cache_hits: int = 0
    completed: int = 0
    failures: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


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


@dataclass
class _Counting:
    """Mutable counters behind a lock (per client)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    values: dict[str, int] = field(default_factory=lambda: {name: 0 for name in LLMCounters.__dataclass_fields__})

    def add(self, **deltas: int) -> None:
        with self.lock:
            for name, delta in deltas.items():
                self.values[name] += delta

    def snapshot(self) -> LLMCounters:
        with self.lock:
            return LLMCounters(**self.values)


@dataclass(frozen=True)
class _Attempt:
    """The outcome of one HTTP attempt."""

    result: ChatResult | None = None  # success
    error: str | None = None  # failure description
    retryable: bool = False
    retry_after_s: float | None = None


class LLMClient:
    """Chat completions through the ``openai`` SDK, with a content-addressed cache and own retries.

    ``sleep`` and ``rng`` are injectable for tests; the SDK client is built lazily on the first
    request that actually needs the network (so cache-only runs need no key).
    """

    def __init__(
        self,
        config: LLMConfig,
        cache: KVStore,
        *,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.config = config
        self.cache = cache
        self._sleep = sleep
        self._rng = rng if rng is not None else random.Random()
        self._sdk_lock = threading.Lock()
        self._sdk: openai.OpenAI | None = None
        self._counting = _Counting()

    def __repr__(self) -> str:
        return (
            f"LLMClient(model={self.config.model!r}, base_url={self.config.resolved_base_url!r}, "
            f"api_key_env={self.config.api_key_env!r}, cache={str(self.cache.path)!r}, "
            f"cache_only={self.config.cache_only}, counters={self.counters})"
        )

    def __enter__(self) -> "LLMClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._sdk_lock:
            if self._sdk is not None:
                self._sdk.close()
                self._sdk = None

    @property
    def counters(self) -> LLMCounters:
        return self._counting.snapshot()

    # ------------------------------------------------------------------ keys and plans
    def resolved_parameters(self, request: ChatRequest) -> dict[str, Any]:
        """The sampling parameters sent for ``request``: its overrides, else the config's."""
        cfg = self.config
        return {
            "temperature": cfg.temperature if request.temperature is None else request.temperature,
            "seed": cfg.seed if request.seed is None else request.seed,
            "max_tokens": cfg.max_tokens if request.max_tokens is None else request.max_tokens,
        }

    def canonical_request(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON-able form hashed into the cache key. Contains no credential."""
        return {
            "schema": CACHE_SCHEMA,
            "model": self.config.model,
            "base_url": self.config.resolved_base_url,
            "messages": [{"role": m["role"], "content": m["content"]} for m in request.messages],
            "parameters": self.resolved_parameters(request),
            "template_hash": request.template_hash,
            "run_index": request.run_index,
        }

    def cache_key(self, request: ChatRequest) -> str:
        return stable_hash(self.canonical_request(request))

    def plan(self, requests: Sequence[ChatRequest]) -> BatchPlan:
        """Look the batch up in the cache (one query) without sending anything."""
        keys = tuple(self.cache_key(request) for request in requests)
        hits = {key: _decode(raw) for key, raw in self.cache.get_many(keys).items()}
        to_send: list[int] = []
        seen: set[str] = set()
        duplicates = 0
        for index, key in enumerate(keys):
            if key in hits:
                continue
            if key in seen:
                duplicates += 1
                continue
            seen.add(key)
            to_send.append(index)
        return BatchPlan(keys=keys, hits=hits, to_send=tuple(to_send), duplicates=duplicates)

    # ------------------------------------------------------------------ public calls
    def complete(self, request: ChatRequest) -> ChatResult:
        """One completion: from the cache, else from the API (stored as soon as it arrives)."""
        key = self.cache_key(request)
        raw = self.cache.get(key)
        if raw is not None:
            self._counting.add(cache_hits=1)
            return _result_from_cache(key, _decode(raw))
        if self.config.cache_only:
            raise CacheMissError(self.config.model, key)
        self._client()  # fail early and clearly if the API key is missing
        return self._fetch_and_store(key, request)

    def complete_many(
        self, requests: Sequence[ChatRequest], desc: str = "LLM", *, progress: bool = True
    ) -> list[ChatResult]:
        """Complete a batch with at most ``config.concurrency`` requests in flight.

        Results come back in input order. A failed request yields ``ChatResult(error=...)`` and the
        batch goes on. With ``cache_only`` a miss raises :class:`CacheMissError` before any request.
        """
        requests = list(requests)
        plan = self.plan(requests)
        results: list[ChatResult | None] = [None] * len(requests)
        for index, key in enumerate(plan.keys):
            if key in plan.hits:
                results[index] = _result_from_cache(key, plan.hits[key])
        self._counting.add(cache_hits=plan.cache_hits)

        if plan.to_send:
            if self.config.cache_only:
                first = plan.keys[plan.to_send[0]]
                raise CacheMissError(self.config.model, first, missing=len(plan.to_send))
            self._client()  # a missing key fails here, before any thread starts
            fetched = self._run_pool(requests, plan, desc, progress)
            for index, key in enumerate(plan.keys):
                if results[index] is None:
                    results[index] = fetched[key]
        elif progress:
            with tqdm(total=len(requests), initial=len(requests), desc=desc, unit="req"):
                pass

        assert all(result is not None for result in results)
        return [result for result in results if result is not None]

    # ------------------------------------------------------------------ internals
    def _run_pool(
        self, requests: Sequence[ChatRequest], plan: BatchPlan, desc: str, progress: bool
    ) -> dict[str, ChatResult]:
        fetched: dict[str, ChatResult] = {}
        bar = tqdm(
            total=len(requests), initial=len(requests) - len(plan.to_send) - plan.duplicates,
            desc=desc, unit="req", disable=not progress,
        )
        pending_duplicates = {key: 0 for key in plan.keys}
        for index, key in enumerate(plan.keys):
            if key not in plan.hits:
                pending_duplicates[key] += 1
        executor = ThreadPoolExecutor(max_workers=self.config.concurrency, thread_name_prefix="llm")
        try:
            futures: dict[Future[ChatResult], str] = {
                executor.submit(self._fetch_and_store, plan.keys[i], requests[i]): plan.keys[i] for i in plan.to_send
            }
            for future in as_completed(futures):
                key = futures[future]
                fetched[key] = future.result()
                bar.update(pending_duplicates[key])
        except BaseException:
            # KeyboardInterrupt or a bug: do not start queued requests; those in flight finish
            # in the background and are still cached as they arrive.
            executor.shutdown(wait=False, cancel_futures=True)
            raise
        finally:
            bar.close()
        executor.shutdown(wait=True)
        return fetched

    def _client(self) -> openai.OpenAI:
        with self._sdk_lock:
            if self._sdk is None:
                self._sdk = openai.OpenAI(
                    api_key=self._api_key(),
                    base_url=self.config.resolved_base_url,
                    timeout=self.config.timeout_s,
                    max_retries=0,  # retries are ours
                )
            return self._sdk

    def _api_key(self) -> str:
        env = self.config.api_key_env
        if env is None:
            return NO_KEY_PLACEHOLDER
        value = os.environ.get(env, "")
        if not value:
            raise MissingAPIKeyError(
                f"model {self.config.model!r} at {self.config.resolved_base_url} needs an API key, but the "
                f"environment variable {env} is not set (or empty). Set {env}, or use api_key_env=None for a "
                f"local server that needs no key."
            )
        return value

    def _fetch_and_store(self, key: str, request: ChatRequest) -> ChatResult:
        """Send with retries; cache a success at once; return an uncached error result otherwise."""
        attempt_no = 0
        while True:
            attempt = self._attempt(key, request)
            if attempt.result is not None:
                result = attempt.result
                self.cache.put_json(key, _encode(self, request, result))
                self._counting.add(
                    completed=1, prompt_tokens=result.prompt_tokens, completion_tokens=result.completion_tokens
                )
                return result
            if not attempt.retryable or attempt_no >= self.config.max_retries:
                self._counting.add(failures=1)
                suffix = "" if not attempt.retryable else f" (gave up after {attempt_no + 1} attempts)"
                return ChatResult(text="", error=self._redact(f"{attempt.error}{suffix}"), key=key)
            self._counting.add(retries=1)
            self._sleep(self._backoff_s(attempt_no, attempt.retry_after_s))
            attempt_no += 1

    def _attempt(self, key: str, request: ChatRequest) -> _Attempt:
        params = self.resolved_parameters(request)
        kwargs: dict[str, Any] = {
            "model": self.config.model,
            "messages": [{"role": m["role"], "content": m["content"]} for m in request.messages],
            "temperature": params["temperature"],
        }
        if params["seed"] is not None:
            kwargs["seed"] = params["seed"]
        if params["max_tokens"] is not None:
            kwargs["max_tokens"] = params["max_tokens"]
        self._counting.add(requests_sent=1)
        try:
            completion = self._client().chat.completions.create(**kwargs)
        except openai.APITimeoutError as exc:
            return _Attempt(error=f"timeout after {self.config.timeout_s}s: {exc}", retryable=True)
        except openai.APIConnectionError as exc:
            return _Attempt(error=f"connection error: {exc}", retryable=True)
        except openai.APIStatusError as exc:
            status = exc.status_code
            retryable = status in (408, 429) or status >= 500
            return _Attempt(
                error=f"HTTP {status} ({type(exc).__name__}): {exc.message}",
                retryable=retryable,
                retry_after_s=_retry_after_s(exc.response.headers) if retryable else None,
            )
        except openai.OpenAIError as exc:
            return _Attempt(error=f"{type(exc).__name__}: {exc}")

        if not completion.choices:
            return _Attempt(error="the API returned no choices")
        choice = completion.choices[0]
        content = choice.message.content
        if content is None:
            return _Attempt(error=f"the API returned no text content (finish_reason={choice.finish_reason})")
        usage = completion.usage
        return _Attempt(
            result=ChatResult(
                text=content,
                prompt_tokens=usage.prompt_tokens if usage is not None else 0,
                completion_tokens=usage.completion_tokens if usage is not None else 0,
                cached=False,
                key=key,
                finish_reason=choice.finish_reason,
            )
        )

    def _backoff_s(self, attempt_no: int, retry_after_s: float | None) -> float:
        """Retry-After when the server gave one (clipped), else exponential backoff with jitter."""
        if retry_after_s is not None and math.isfinite(retry_after_s) and retry_after_s >= 0:
            return min(retry_after_s, self.config.retry_after_max_s)
        ceiling = min(self.config.backoff_max_s, self.config.backoff_base_s * (2.0 ** min(attempt_no, 60)))
        return ceiling / 2 + self._rng.uniform(0.0, ceiling / 2)

    def _redact(self, text: str) -> str:
        env = self.config.api_key_env
        secrets = {os.environ.get(env, "") if env else ""}
        sdk = self._sdk
        if sdk is not None:
            secrets.add(sdk.api_key or "")
        for secret in secrets:
            if secret and secret != NO_KEY_PLACEHOLDER:
                text = text.replace(secret, "***")
        return text[:_ERROR_MAX_CHARS]


def _retry_after_s(headers: Mapping[str, str]) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date), else None."""
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) / divisor)
        except ValueError:
            pass
        if name == "retry-after":
            try:
                when = email.utils.parsedate_to_datetime(value)
            except (TypeError, ValueError):
                return None
            return max(0.0, when.timestamp() - time.time())
    return None


def _encode(client: LLMClient, request: ChatRequest, result: ChatResult) -> dict[str, Any]:
    """The cache entry: the answer plus enough of the request to audit it (no credential)."""
    return {
        "schema": CACHE_SCHEMA,
        "model": client.config.model,
        "template_hash": request.template_hash,
        "run_index": request.run_index,
        "text": result.text,
        "prompt_tokens": result.prompt_tokens,
        "completion_tokens": result.completion_tokens,
        "finish_reason": result.finish_reason,
    }


def _decode(raw: bytes) -> dict[str, Any]:
    value = json.loads(raw)
    if not isinstance(value, dict) or "text" not in value:
        raise ValueError("corrupt LLM cache entry")
    return value


def _result_from_cache(key: str, value: Mapping[str, Any]) -> ChatResult:
    return ChatResult(
        text=str(value["text"]),
        prompt_tokens=int(value.get("prompt_tokens", 0)),
        completion_tokens=int(value.get("completion_tokens", 0)),
        cached=True,
        key=key,
        finish_reason=value.get("finish_reason"),
    )
