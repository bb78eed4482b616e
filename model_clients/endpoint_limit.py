"""How many requests one endpoint gets at once: additive increase, multiplicative decrease (as TCP, and
inspect_ai's adaptive connections): a 429 halves the limit once per round of requests sent before the
previous cut (a burst of 429s is one cut), each success adds ``1 / limit`` up to the ceiling, and a
429's Retry-After holds new requests. The roles on one endpoint share one limit (no cache key effect).
"""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass
from email.utils import parsedate_to_datetime
from typing import Callable, Mapping

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
    """At most ``limit`` requests in flight (``acquire`` / ``release``); ``limit`` starts at
    ``ceiling``, halves on a 429 and grows back by successes. ``clock`` is injectable for tests."""

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
