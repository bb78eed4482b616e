"""The one cached client of OpenAI-compatible chat APIs: every chat call of the harness goes through it.
A completion is keyed by its canonical request (never the key) and stored the moment it arrives, so a
repeated run sends nothing; transport retries are the SDK's, an unusable 200 reply (no choices, no
text) is asked again here, and a failure is an uncached ``ChatResult(error=...)``.
"""

from __future__ import annotations

import random
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Sequence

from model_clients.batch.runner import BatchOptions, run_batches
from model_clients.call_counts import Tally
from model_clients.call_pool import CallPool, EndpointLimit, retry_after_s
from model_clients.chat_types import (  # noqa: F401 (the data types are imported from here too)
    CACHE_SCHEMA,
    BatchPlan,
    CacheMissError,
    CallsInterrupted,
    ChatRequest,
    ChatResult,
    HoldsSDK,
    LLMConfig,
    LLMCounters,
    LineOutcome,
    MissingAPIKeyError,
    attempt_of,
    decode_entry,
)
from model_clients.kvstore import KVStore, stable_hash
from model_clients.model_listing import check_model_offered

if TYPE_CHECKING:  # the SDK costs ~0.4 s to import: loaded on the first request, not for cached runs
    import openai


class LLMClient(HoldsSDK):
    """Chat completions through the ``openai`` SDK, built on the first request that needs the network
    (after the endpoint's model list, :mod:`~model_clients.model_listing`). ``limit``: the endpoint's
    limit shared with its other clients (:class:`~model_clients.call_pool.EndpointLimits`)."""

    def __init__(self, config: LLMConfig, cache: KVStore, *, sleep: Callable[[float], None] = time.sleep,
                 rng: random.Random | None = None, role: str = "model", batch_options: BatchOptions | None = None,
                 limit: EndpointLimit | None = None) -> None:
        super().__init__()
        self.config, self.cache, self.role = config, cache, role
        self._sleep = sleep
        self._rng = rng if rng is not None else random.Random()
        self._counting = Tally(LLMCounters)
        self._batch_options = batch_options or BatchOptions(poll_s=config.batch_poll_s)
        self.limit = limit if limit is not None else EndpointLimit(config.concurrency)
        self._sending = threading.local()  # the limit's round each attempt of this thread was sent in

    def __repr__(self) -> str:
        return (f"LLMClient(model={self.config.model!r}, base_url={self.config.resolved_base_url!r}, "
                f"api_key_env={self.config.api_key_env!r}, cache={str(self.cache.path)!r}, "
                f"cache_only={self.config.cache_only}, counters={self.counters})")

    @property
    def counters(self) -> LLMCounters:
        return self._counting.snapshot()

    def count(self, **deltas: int) -> None:
        self._counting.add(**deltas)

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
        """The JSON form hashed into the cache key (no credential); ``extra`` only when set, so the
        keys of plain requests are those of earlier versions."""
        return {
            **({"extra": dict(request.extra)} if request.extra else {}),
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
        """Look the requests up in the cache (one query) without sending anything."""
        keys = tuple(self.cache_key(request) for request in requests)
        hits = {key: decode_entry(raw) for key, raw in self.cache.get_many(keys).items()}
        missing = [index for index, key in enumerate(keys) if key not in hits]
        first = {keys[index]: index for index in reversed(missing)}  # each missing key's first index
        return BatchPlan(keys=keys, hits=hits, to_send=tuple(sorted(first.values())),
                         duplicates=len(missing) - len(first))

    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        """The chat-completions body a live call sends for ``request`` (a batch line carries the same)."""
        params = self.resolved_parameters(request)
        body: dict[str, Any] = {
            "model": self.config.model,
            "messages": [{"role": m["role"], "content": m["content"]} for m in request.messages],
            "temperature": params["temperature"],
        }
        body.update({name: params[name] for name in ("seed", "max_tokens") if params[name] is not None})
        body.update(request.extra)
        return body

    def complete(self, request: ChatRequest) -> ChatResult:
        """One completion: from the cache, else from the API (stored as soon as it arrives)."""
        key = self.cache_key(request)
        raw = self.cache.get(key)
        if raw is not None:
            self.count(cache_hits=1)
            return ChatResult.from_entry(key, decode_entry(raw))
        if self.config.cache_only:
            raise CacheMissError(self.config.model, key)
        self.sdk_ready()
        return self.fetch_and_store(key, request)

    def complete_many(self, requests: Sequence[ChatRequest], desc: str = "LLM", *,
                      progress: bool = True) -> list[ChatResult]:
        """Results in input order, at most ``config.concurrency`` in flight (or as provider batches);
        a failure yields ``ChatResult(error=...)``; with ``cache_only`` a miss raises before any send."""
        with self.pool(desc, progress=progress) as calls:
            return calls.results(calls.submit(requests))

    def pool(self, desc: str = "LLM", *, progress: bool = True) -> CallPool:
        """A stage's calls, submitted in parts and collected in the order asked (a context manager)."""
        return CallPool(self, desc, progress)

    def run_batches(self, wanted: dict[str, ChatRequest], desc: str, progress: bool) -> dict[str, ChatResult]:
        return run_batches(self, wanted, desc=desc, progress=progress, options=self._batch_options, sleep=self._sleep)

    def sdk_for_batches(self) -> openai.OpenAI:
        """An SDK client for the batch and file endpoints, outside ``requests_sent``."""
        return self._new_sdk(self.api_key())

    def _build_sdk(self, api_key: str) -> openai.OpenAI:
        """The live SDK client, its attempts counted and its 429s noted; a model the server does not
        list fails here."""
        import openai

        check_model_offered(self.config, self.role)  # once per endpoint and process
        hooks = {"request": [self._count_request], "response": [self._note_response]}
        return self._new_sdk(api_key, http_client=openai.DefaultHttpxClient(event_hooks=hooks))

    def _new_sdk(self, api_key: str, http_client: Any = None) -> openai.OpenAI:
        import openai

        return openai.OpenAI(api_key=api_key, base_url=self.config.resolved_base_url, timeout=self.config.timeout_s,
                             max_retries=self.config.max_retries, http_client=http_client)

    def _count_request(self, request: Any) -> None:
        """Every attempt the SDK makes (its retries included)."""
        retry = request.headers.get("x-stainless-retry-count", "0") not in ("", "0")
        self.count(requests_sent=1, retries=int(retry))
        self._sending.round = self.limit.round()

    def _note_response(self, response: Any) -> None:
        """A 429 lowers the endpoint's limit and holds new requests for its Retry-After (the SDK
        itself waits as long before retrying this one)."""
        if response.status_code == 429:
            self.limit.rate_limited(getattr(self._sending, "round", -1), retry_after_s(response.headers))

    def fetch_and_store(self, key: str, request: ChatRequest) -> ChatResult:
        """Send holding a place of the endpoint's limit; re-ask an unusable reply; cache a success at
        once; otherwise return an uncached error result naming model and endpoint."""
        self.limit.acquire()
        try:
            reasks = 0
            while True:
                attempt = self._attempt(key, request)
                if attempt.result is not None:
                    self.limit.succeeded()
                    return self.store_success(key, request.template_hash, request.run_index, attempt.result)
                if not attempt.retryable or reasks >= self.config.max_reasks:
                    suffix = f" (asked {reasks + 1} times)" if attempt.retryable else ""
                    return self.failure(key, f"{attempt.error}{suffix}")
                self.count(retries=1)
                delay = self.config.reask_delay_s * (2.0**reasks)
                self._sleep(delay / 2 + self._rng.uniform(0.0, delay / 2))
                reasks += 1
        finally:
            self.limit.release()

    def store_success(self, key: str, template_hash: str, run_index: int, result: ChatResult,
                      *, batch: bool = False) -> ChatResult:
        """Cache a completion under ``key`` and count it (``batch``: priced at the batch tier)."""
        self.cache.put_json(key, result.entry(self.config.model, template_hash, run_index))
        tokens = {"prompt_tokens": result.prompt_tokens, "completion_tokens": result.completion_tokens}
        batch_counts = ({"batch_completed": 1, "batch_prompt_tokens": result.prompt_tokens,
                         "batch_completion_tokens": result.completion_tokens} if batch else {})
        self.count(completed=1, **tokens, **batch_counts)
        return result

    def failure(self, key: str, error: str) -> ChatResult:
        """A request given up on: counted, never cached, its error naming model and endpoint."""
        self.count(failures=1)
        return ChatResult(text="", error=self.redact(f"{self.config.where}: {error}"), key=key)

    def _attempt(self, key: str, request: ChatRequest) -> LineOutcome:
        import openai

        tries = f"after {self.config.max_retries + 1} attempts"
        try:
            completion = self._client().chat.completions.create(**self.request_body(request))
        except openai.APITimeoutError:
            return LineOutcome(key, error=f"timeout ({self.config.timeout_s}s per attempt) {tries}")
        except openai.APIConnectionError as exc:
            return LineOutcome(key, error=f"connection error {tries}: {exc}")
        except openai.APIStatusError as exc:
            retried = exc.status_code in (408, 409, 429) or exc.status_code >= 500
            return LineOutcome(key, error=f"HTTP {exc.status_code} ({type(exc).__name__})"
                                          f"{' ' + tries if retried else ''}: {exc.message}")
        except openai.OpenAIError as exc:
            return LineOutcome(key, error=f"{type(exc).__name__}: {exc}")
        except ValueError as exc:  # json.JSONDecodeError and pydantic's ValidationError on a 200 reply
            return LineOutcome(key, error=f"the reply is not a valid completion ({type(exc).__name__}: {exc})",
                               retryable=True)
        return attempt_of(completion, key)
