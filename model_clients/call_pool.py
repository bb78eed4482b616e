"""How a stage's calls are carried out: a :class:`CallPool` per stage and client (cached calls at once,
a key asked twice sent once, the rest on daemon threads or as provider batches), and an
:class:`EndpointLimit` per endpoint. Daemon threads, not an executor: Python joins an executor's
threads at exit, so after Ctrl-C each request in flight held the exit for its timeout (22 s seen).
"""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from dataclasses import asdict, dataclass
from email.utils import parsedate_to_datetime
from typing import Callable, Iterator, Mapping, Sequence

from tqdm import tqdm

from model_clients.chat_types import CacheMissError, CallsInterrupted, ChatClient, ChatRequest, ChatResult


class CallPool:
    """The calls of one stage (``desc``) through ``client``; as a context manager, leaving it early
    (an error, Ctrl-C) stops whatever is still queued."""

    def __init__(self, client: ChatClient, desc: str, progress: bool) -> None:
        self.client = client
        self.desc = desc
        # a stage sent as provider batches shows the batch runner's bar (lines and status) instead
        self._bar = tqdm(total=0, desc=desc, unit="req", disable=not progress or client.config.batch)
        self._progress = progress
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._results: dict[str, ChatResult] = {}
        self._wanted: dict[str, int] = {}  # key -> how many submitted requests share it
        self._held: dict[str, ChatRequest] = {}  # batch mode: sent as provider batches by _run_held
        self._queued: deque[tuple[str, ChatRequest]] = deque()
        self._workers = 0
        self._arrived: queue.SimpleQueue[tuple[str, BaseException | None]] = queue.SimpleQueue()  # key stored, or a bug
        self._submitted = 0

    def __enter__(self) -> "CallPool":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._stop.set()  # nothing queued starts; requests in flight end with the process or on their own
        self._bar.close()

    def submit(self, requests: Sequence[ChatRequest]) -> tuple[str, ...]:
        """Serve the cached ``requests`` now, queue (or hold for a batch) the others; their keys. With
        ``cache_only`` a miss raises :class:`CacheMissError` before anything is sent."""
        plan = self.client.plan(requests)
        new: list[int] = []
        seen_now: set[str] = set()
        for index, key in enumerate(plan.keys):
            if key in self._wanted or key in seen_now:
                continue
            seen_now.add(key)
            if key not in plan.hits:
                new.append(index)
        if new and self.client.config.cache_only:
            raise CacheMissError(self.client.config.model, plan.keys[new[0]], missing=len(new))
        if new:
            self.client.sdk_ready()  # a missing key or a model the server does not list fails here, before any send
        with self._lock:  # a worker storing a reply reads _wanted to move the bar
            earlier = set(self._wanted)  # keys asked before: shared, not counted as cache hits again
            hits = sum(1 for key in plan.keys if key in plan.hits and key not in earlier)
            for key in plan.keys:
                if key in plan.hits and key not in earlier:
                    self._results[key] = ChatResult.from_entry(key, plan.hits[key])
                self._wanted[key] = self._wanted.get(key, 0) + 1
            self._submitted += len(requests)
            self._bar.total += len(requests)
            self._bar.update(sum(1 for key in plan.keys if key in self._results))
        self.client.count(cache_hits=hits)
        fresh = [(plan.keys[index], requests[index]) for index in new]
        if self.client.config.batch:
            self._held.update(fresh)
        else:
            self._enqueue(fresh)
        return plan.keys

    def _enqueue(self, items: list[tuple[str, ChatRequest]]) -> None:
        with self._lock:
            self._queued.extend(items)
            start = min(self.client.config.concurrency - self._workers, len(self._queued))
            self._workers += max(0, start)
        for _ in range(start):
            threading.Thread(target=self._work, name=f"llm-{self.desc}", daemon=True).start()

    def _work(self) -> None:
        while True:
            with self._lock:
                if self._stop.is_set() or not self._queued:
                    self._workers -= 1
                    return
                key, request = self._queued.popleft()
            try:
                self._store(key, self.client.fetch_and_store(key, request))
                self._arrived.put((key, None))
            except BaseException as exc:  # a bug: raised in the caller's thread by _receive
                self._arrived.put((key, exc))

    def _store(self, key: str, result: ChatResult) -> None:
        with self._lock:
            self._results[key] = result
            self._bar.update(self._wanted[key])

    def arrivals(self, requests: Sequence[ChatRequest]) -> Iterator[tuple[int, ChatResult]]:
        """Submit ``requests``; yield ``(index, result)`` as each is known: the cached ones first, in
        order, then the others as their replies arrive."""
        keys = self.submit(requests)
        positions: dict[str, list[int]] = {}
        for index, key in enumerate(keys):
            positions.setdefault(key, []).append(index)
        done: set[str] = set()
        for index, key in enumerate(keys):
            if key in self._results:
                done.add(key)
                yield index, self._results[key]
        for key in self._receive(keys, done):
            for index in positions[key]:
                yield index, self._results[key]
        self._bar.close()  # all arrived: the bar of the next stage takes its line

    def results(self, keys: Sequence[str]) -> list[ChatResult]:
        """The results of submitted ``keys``, in that order, once all are there."""
        for _ in self._receive(keys, {key for key in keys if key in self._results}):
            pass
        return [self._results[key] for key in keys]

    def _receive(self, keys: Sequence[str], done: set[str]) -> Iterator[str]:
        """Wait for the replies to ``keys`` not in ``done``; yield each key as its result is stored."""
        missing = set(keys) - done
        if self._held and missing & set(self._held):
            for key in self._run_held():
                if key in missing:
                    missing.discard(key)
                    yield key
        try:
            while missing:
                key, bug = self._arrived.get()
                if bug is not None:
                    raise bug
                if key in missing:
                    missing.discard(key)
                    yield key
        except KeyboardInterrupt:
            raise self.interrupted() from None

    def interrupted(self) -> CallsInterrupted:
        """Ctrl-C during this stage: nothing queued starts; the error says how many replies are cached."""
        self._stop.set()
        return CallsInterrupted(f"interrupted ({self.desc}): {self._cached()} of {self._submitted} replies are "
                                f"cached; a re-run resumes and asks only the rest")

    def _run_held(self) -> list[str]:
        held, self._held = self._held, {}
        fetched = self.client.run_batches(held, self.desc, progress=self._progress)
        for key, result in fetched.items():
            self._store(key, result)
        return list(fetched)

    def _cached(self) -> int:
        return sum(count for key, count in self._wanted.items() if key in self._results and self._results[key].ok)


MAX_PAUSE_S = 60.0  # a longer Retry-After is not waited for in full (the openai SDK caps it likewise)


@dataclass(frozen=True)
class LimitStats:
    """What the limit of one endpoint did in a run (recorded in ``metrics.json``)."""

    ceiling: int
    lowest: int
    final: int
    rate_limited: int
    max_in_flight: int
    paused_s: float

    def as_dict(self) -> dict[str, int | float]:
        return {**asdict(self), "paused_s": round(self.paused_s, 3)}


def retry_after_s(headers: Mapping[str, str], now: Callable[[], float] = time.time) -> float | None:
    """The wait a 429 asks for, in seconds: ``retry-after-ms``, else ``Retry-After`` (seconds or an
    HTTP date); None when neither is there or readable."""
    raw_ms, raw = headers.get("retry-after-ms"), headers.get("retry-after")
    readings: list[Callable[[], float]] = []
    if raw_ms is not None:
        readings.append(lambda: float(raw_ms) / 1000.0)
    if raw is not None:
        readings += [lambda: float(raw), lambda: parsedate_to_datetime(raw).timestamp() - now()]
    for reading in readings:
        try:
            return max(0.0, reading())
        except (TypeError, ValueError):
            continue
    return None


class EndpointLimit:
    """At most ``limit`` requests in flight, by additive increase and multiplicative decrease (as TCP
    and inspect_ai's adaptive connections): a 429 halves the limit once per round of requests sent
    before the previous cut, each success adds ``1 / limit`` up to ``ceiling``, a Retry-After holds
    new requests. The roles on one endpoint share one limit (no cache key effect)."""

    def __init__(self, ceiling: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        if ceiling < 1:
            raise ValueError("EndpointLimit: the ceiling must be >= 1")
        self._clock = clock
        self._cond = threading.Condition()
        self._ceiling = ceiling
        self._limit = float(ceiling)
        self._lowest = ceiling
        self._in_flight = 0
        self._max_in_flight = 0
        self._round = 0  # incremented by every cut; a 429 to a request sent in an older round cuts nothing
        self._paused_until = 0.0
        self._paused_s = 0.0
        self._rate_limited = 0

    @property
    def limit(self) -> int:
        with self._cond:
            return self._current()

    def _current(self) -> int:
        return max(1, int(self._limit))

    def raise_ceiling(self, ceiling: int) -> None:
        """Another role on this endpoint allows more in flight: the shared ceiling is the largest."""
        with self._cond:
            if ceiling > self._ceiling:
                self._limit += ceiling - self._ceiling
                self._ceiling = ceiling
                self._cond.notify_all()

    def acquire(self) -> int:
        """Wait for a free place (and for any Retry-After pause to end); return the round it was
        taken in, to hand back to :meth:`rate_limited` should the request be refused."""
        with self._cond:
            while True:
                wait = self._paused_until - self._clock()
                if wait <= 0 and self._in_flight < self._current():
                    break
                self._cond.wait(timeout=wait if wait > 0 else None)
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
            return self._round

    def release(self) -> None:
        with self._cond:
            self._in_flight -= 1
            self._cond.notify_all()

    def round(self) -> int:
        with self._cond:
            return self._round

    def succeeded(self) -> None:
        """Additive increase: about one more in flight per round of successes, up to the ceiling."""
        with self._cond:
            if self._limit < self._ceiling:
                before = self._current()
                self._limit = min(float(self._ceiling), self._limit + 1.0 / self._current())
                if self._current() > before:
                    self._cond.notify_all()

    def rate_limited(self, sent_in_round: int, wait_s: float | None) -> None:
        """A 429 to a request sent in ``sent_in_round``: halve the limit (once per round) and hold
        new requests for ``wait_s`` (the reply's Retry-After, at most :data:`MAX_PAUSE_S`)."""
        with self._cond:
            self._rate_limited += 1
            if sent_in_round == self._round:
                self._round += 1
                self._limit = max(1.0, self._current() / 2.0)
                self._lowest = min(self._lowest, self._current())
            if wait_s:
                now = self._clock()
                until = now + min(wait_s, MAX_PAUSE_S)
                if until > self._paused_until:
                    self._paused_s += until - max(now, self._paused_until)
                    self._paused_until = until

    def stats(self) -> LimitStats:
        with self._cond:
            return LimitStats(self._ceiling, self._lowest, self._current(), self._rate_limited, self._max_in_flight,
                              self._paused_s)


class EndpointLimits:
    """One :class:`EndpointLimit` per endpoint (base URL and key variable): clients of one run
    that talk to the same endpoint get the same limit, whose ceiling is the largest they ask."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._limits: dict[tuple[str, str | None], EndpointLimit] = {}

    def for_endpoint(self, base_url: str, api_key_env: str | None, ceiling: int) -> EndpointLimit:
        with self._lock:
            limit = self._limits.get((base_url, api_key_env))
            if limit is None:
                limit = self._limits[(base_url, api_key_env)] = EndpointLimit(ceiling)
            else:
                limit.raise_ceiling(ceiling)
            return limit
