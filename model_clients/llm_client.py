"""A cached, bounded-concurrency client for OpenAI-compatible chat completion APIs.

Every completion is keyed by ``stable_hash`` of the canonical request (model, endpoint -- a loopback
server by its port or by the model file it serves, see ``endpoint_identity`` --, messages,
temperature, seed, max_tokens, prompt-template hash, run index -- never the API key) and stored in a
:class:`~model_clients.kvstore.KVStore` the moment it arrives, so a repeated run costs no request and a
killed run resumes without repeating a completed one.

Transport retries are the ``openai`` SDK's (``max_retries``): 408, 409, 429, 5xx, timeouts and
connection errors, with exponential backoff and ``Retry-After`` / ``retry-after-ms`` honoured. The
SDK does not retry a 200 reply that is unusable -- a body that is not JSON, no ``choices``, or
``content: null`` -- although real endpoints send those transiently; those are asked again here, at
most ``max_reasks`` times. Anything else is permanent. A failed request is returned as
``ChatResult(error=...)`` naming model and endpoint, never cached, so the caller records it on its
question and a later run retries it.

Every live request holds a place of the endpoint's :class:`~model_clients.endpoint_limit.EndpointLimit`
(shared by the clients of one endpoint when built with the same ``limit``): at most
``config.concurrency`` in flight, fewer after an HTTP 429, whose ``Retry-After`` holds new requests.
``complete_many`` and :meth:`LLMClient.pool` send a stage's calls (:mod:`model_clients.call_pool`).

With ``LLMConfig.batch`` the uncached requests of a stage go through the provider's batch
API instead (:mod:`model_clients.batch.runner`), filling the same cache under the same keys;
``complete`` stays live.

The API key is read from the environment variable named by ``LLMConfig.api_key_env`` only when a
real request has to be sent; it is kept only inside the SDK client, never in a config, a result, a
cache entry, a repr or an error message (error texts are scrubbed of it).
"""

from __future__ import annotations

import os
import random
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Sequence

from model_clients.cache_entry import CACHE_SCHEMA, decode_entry, encode_entry, result_from_cache
from model_clients.call_pool import CallPool
from model_clients.chat_types import (
    BatchPlan,
    CacheMissError,
    CallsInterrupted,
    ChatRequest,
    ChatResult,
    LLMConfig,
    LLMCounters,
    MissingAPIKeyError,
)
from model_clients.endpoint_limit import EndpointLimit, retry_after_s
from model_clients.kvstore import KVStore, stable_hash
from model_clients.model_listing import check_model_offered
from model_clients.reply import Attempt, attempt_of
from model_clients.sdk_holder import HoldsSDK
from model_clients.tally import Tally

if TYPE_CHECKING:  # the SDK costs ~0.4 s to import: loaded on the first request, not for cached runs
    import openai

    from model_clients.batch.runner import BatchOptions
from memplusplus.api_keys import MissingAPIKey, read_api_key, redact

# The data types are defined (and listed) in model_clients.chat_types; import them from there.
__all__ = ["LLMClient"]

_ERROR_MAX_CHARS = 500


class LLMClient(HoldsSDK):
    """Chat completions through the ``openai`` SDK, with a content-addressed cache and own retries.

    ``sleep`` and ``rng`` are injectable for tests; the SDK client is built lazily on the first
    request that actually needs the network (so cache-only runs need no key). Before that first
    request the endpoint's model list is asked once (:mod:`model_clients.model_listing`): a model
    it does not offer raises ``UnknownModelError`` naming ``role`` before anything is sent.
    ``limit``: the endpoint's limit of requests in flight, shared with the other clients of that
    endpoint (:class:`~model_clients.endpoint_limit.EndpointLimits`); its own when None.
    """

    def __init__(
        self,
        config: LLMConfig,
        cache: KVStore,
        *,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        role: str = "model",
        batch_options: "BatchOptions | None" = None,
        limit: EndpointLimit | None = None,
    ) -> None:
        self.config = config
        self.role = role
        self.cache = cache
        self._sleep = sleep
        self._rng = rng if rng is not None else random.Random()
        super().__init__()
        self._sdk: openai.OpenAI | None = None
        self._counting = Tally(LLMCounters)
        self._batch_options = batch_options
        self.limit = limit if limit is not None else EndpointLimit(config.concurrency)
        self._sending = threading.local()  # the limit's round each attempt of this thread was sent in

    def __repr__(self) -> str:
        return (
            f"LLMClient(model={self.config.model!r}, base_url={self.config.resolved_base_url!r}, "
            f"api_key_env={self.config.api_key_env!r}, cache={str(self.cache.path)!r}, "
            f"cache_only={self.config.cache_only}, counters={self.counters})"
        )

    @property
    def counters(self) -> LLMCounters:
        return self._counting.snapshot()

    # ------------------------------------------------------------------ keys and plans
    def resolved_parameters(self, request: ChatRequest) -> dict[str, Any]:
        """The sampling parameters sent for ``request``: its overrides, else the config's."""
        cfg = self.config
        params = {
            "temperature": cfg.temperature if request.temperature is None else request.temperature,
            "seed": cfg.seed if request.seed is None else request.seed,
            "max_tokens": cfg.max_tokens if request.max_tokens is None else request.max_tokens,
        }
        return {**params, **{name: None for name in request.omit}}

    def canonical_request(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON-able form hashed into the cache key. Contains no credential. ``extra`` enters
        only when set, so the keys of plain requests are those of earlier versions."""
        extra = {"extra": dict(request.extra)} if request.extra else {}
        return {
            **extra,
            "schema": CACHE_SCHEMA,
            "model": self.config.model,
            "base_url": self.config.endpoint,
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
        hits = {key: decode_entry(raw) for key, raw in self.cache.get_many(keys).items()}
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
            return result_from_cache(key, decode_entry(raw))
        if self.config.cache_only:
            raise CacheMissError(self.config.model, key)
        self._client()  # fail early and clearly if the API key is missing or the model is not offered
        return self.fetch_and_store(key, request)

    def complete_many(
        self, requests: Sequence[ChatRequest], desc: str = "LLM", *, progress: bool = True
    ) -> list[ChatResult]:
        """Complete a batch with at most ``config.concurrency`` requests in flight, or, with
        ``config.batch``, as provider batches (:mod:`model_clients.batch.runner`: same keys, same
        cache entries, resumable).

        Results come back in input order. A failed request yields ``ChatResult(error=...)`` and the
        batch goes on. With ``cache_only`` a miss raises :class:`CacheMissError` before any request.
        """
        with self.pool(desc, progress=progress) as calls:
            return calls.results(calls.submit(requests))

    def pool(self, desc: str = "LLM", *, progress: bool = True) -> CallPool:
        """A stage's calls, submitted in parts and collected in the order asked
        (:class:`~model_clients.call_pool.CallPool`); use it as a context manager."""
        return CallPool(self, desc, progress)

    def count(self, **deltas: int) -> None:
        self._counting.add(**deltas)

    def sdk_ready(self) -> None:
        """Build the SDK client now: a missing key or a model the server does not list fails here."""
        self._client()

    def run_batches(self, wanted: dict[str, ChatRequest], desc: str, progress: bool) -> dict[str, ChatResult]:
        """``config.batch``: ``wanted`` (key -> request) as provider batches (model_clients.batch.runner)."""
        from model_clients.batch.runner import BatchOptions, run_batches

        options = self._batch_options or BatchOptions(poll_s=self.config.batch_poll_s)
        return run_batches(self, wanted, desc=desc, progress=progress, options=options, sleep=self._sleep)

    def sdk_for_batches(self) -> openai.OpenAI:
        """An SDK client on this endpoint and key for the batch and file endpoints: its uploads and
        polls are not chat requests, so they stay out of ``requests_sent``."""
        return self._new_sdk()

    def redact(self, text: str) -> str:
        """``text`` without the API key (and cut to the error length kept)."""
        return self._redact(text)

    def _client(self) -> openai.OpenAI:
        import openai

        with self._sdk_lock:
            if self._sdk is None:
                api_key = self._api_key()
                check_model_offered(self.config, self.role)  # once per endpoint and process
                hooks = {"request": [self._count_request], "response": [self._note_response]}
                self._sdk = self._new_sdk(api_key, http_client=openai.DefaultHttpxClient(event_hooks=hooks))
            return self._sdk

    def _new_sdk(self, api_key: str | None = None, http_client: Any = None) -> openai.OpenAI:
        """An SDK client on this endpoint, key, timeout and retry budget (``http_client``: the SDK's
        default when None)."""
        import openai

        return openai.OpenAI(api_key=api_key if api_key is not None else self._api_key(),
                             base_url=self.config.resolved_base_url, timeout=self.config.timeout_s,
                             max_retries=self.config.max_retries, http_client=http_client)

    def _count_request(self, request: Any) -> None:
        """Called by the HTTP client for every attempt the SDK makes (its retries included)."""
        retry = request.headers.get("x-stainless-retry-count", "0") not in ("", "0")
        self._counting.add(requests_sent=1, retries=int(retry))
        self._sending.round = self.limit.round()

    def _note_response(self, response: Any) -> None:
        """Called by the HTTP client for every reply: a 429 lowers the endpoint's limit and holds new
        requests for its Retry-After (the SDK itself waits as long before retrying this one)."""
        if response.status_code == 429:
            self.limit.rate_limited(getattr(self._sending, "round", -1), retry_after_s(response.headers))

    def _api_key(self) -> str:
        try:
            return read_api_key(self.config.api_key_env, f"model {self.config.model!r} at {self.config.resolved_base_url}")
        except MissingAPIKey as exc:
            raise MissingAPIKeyError(str(exc)) from None

    def _where(self) -> str:
        return f"model {self.config.model!r} at {self.config.resolved_base_url}"

    def fetch_and_store(self, key: str, request: ChatRequest) -> ChatResult:
        """Send, holding a place of the endpoint's limit (the SDK retries transport failures);
        re-ask an unusable reply; cache a success at once; return an uncached error result naming
        model and endpoint otherwise."""
        self.limit.acquire()
        try:
            return self._fetch_and_store(key, request)
        finally:
            self.limit.release()

    def _fetch_and_store(self, key: str, request: ChatRequest) -> ChatResult:
        reasks = 0
        while True:
            attempt = self._attempt(key, request)
            if attempt.result is not None:
                self.limit.succeeded()
                return self.store_success(key, request.template_hash, request.run_index, attempt.result)
            if not attempt.reask or reasks >= self.config.max_reasks:
                suffix = f" (asked {reasks + 1} times)" if attempt.reask else ""
                return self.failure(key, f"{attempt.error}{suffix}")
            self._counting.add(retries=1)
            delay = self.config.reask_delay_s * (2.0**reasks)
            self._sleep(delay / 2 + self._rng.uniform(0.0, delay / 2))
            reasks += 1

    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        """The chat-completions body a live call sends for ``request`` (a batch line carries the same)."""
        params = self.resolved_parameters(request)
        body: dict[str, Any] = {
            "model": self.config.model,
            "messages": [{"role": m["role"], "content": m["content"]} for m in request.messages],
            "temperature": params["temperature"],
        }
        if params["seed"] is not None:
            body["seed"] = params["seed"]
        if params["max_tokens"] is not None:
            body["max_tokens"] = params["max_tokens"]
        body.update(request.extra)
        return body

    def store_success(self, key: str, template_hash: str, run_index: int, result: ChatResult,
                      *, batch: bool = False) -> ChatResult:
        """Cache a completion at once, under ``key``, with the entry a live call writes; count it
        (``batch``: it came back through a provider batch, priced at the batch tier)."""
        self.cache.put_json(key, encode_entry(self.config.model, template_hash, run_index, result))
        tokens = {"prompt_tokens": result.prompt_tokens, "completion_tokens": result.completion_tokens}
        batch_counts = ({"batch_completed": 1, "batch_prompt_tokens": result.prompt_tokens,
                         "batch_completion_tokens": result.completion_tokens} if batch else {})
        self._counting.add(completed=1, **tokens, **batch_counts)
        return result

    def failure(self, key: str, error: str) -> ChatResult:
        """A request given up on: counted, never cached, its error naming model and endpoint."""
        self._counting.add(failures=1)
        return ChatResult(text="", error=self._redact(f"{self._where()}: {error}"), key=key)

    def _attempt(self, key: str, request: ChatRequest) -> Attempt:
        kwargs = self.request_body(request)
        import openai

        tries = f"after {self.config.max_retries + 1} attempts"
        try:
            completion = self._client().chat.completions.create(**kwargs)
        except openai.APITimeoutError:
            return Attempt(error=f"timeout ({self.config.timeout_s}s per attempt) {tries}")
        except openai.APIConnectionError as exc:
            return Attempt(error=f"connection error {tries}: {exc}")
        except openai.APIStatusError as exc:
            status = exc.status_code
            retried = status in (408, 409, 429) or status >= 500
            return Attempt(error=f"HTTP {status} ({type(exc).__name__}){' ' + tries if retried else ''}: {exc.message}")
        except openai.OpenAIError as exc:
            return Attempt(error=f"{type(exc).__name__}: {exc}")
        except ValueError as exc:  # json.JSONDecodeError and pydantic's ValidationError on a 200 reply
            return Attempt(error=f"the reply is not a valid completion ({type(exc).__name__}: {exc})", reask=True)
        return attempt_of(completion, key)

    def _redact(self, text: str) -> str:
        env = self.config.api_key_env
        secrets = {os.environ.get(env, "") if env else ""}
        sdk = self._sdk
        if sdk is not None:
            secrets.add(sdk.api_key or "")
        return redact(text, secrets)[:_ERROR_MAX_CHARS]
