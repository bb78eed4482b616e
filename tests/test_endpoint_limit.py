"""The limit of requests in flight per endpoint: halved on HTTP 429 (once per round), held for the
reply's Retry-After, grown back by successes; shared by the clients of one endpoint."""

from __future__ import annotations

import threading
import time
from email.utils import format_datetime
from datetime import datetime, timedelta, timezone
from pathlib import Path

from model_clients.call_pool import EndpointLimit, EndpointLimits, retry_after_s
from tests.fake_openai_server import Fail, FakeOpenAIServer, JsonDict
from tests.llm_client_support import cache_path, expected_text, make_client, reqs  # noqa: F401  (fixture)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_retry_after_reads_seconds_milliseconds_and_http_dates() -> None:
    assert retry_after_s({"retry-after": "2"}) == 2.0
    assert retry_after_s({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5  # the finer one wins
    moment = datetime(2026, 1, 1, 12, 0, 5, tzinfo=timezone.utc)
    later = format_datetime(moment + timedelta(seconds=30), usegmt=True)
    assert retry_after_s({"retry-after": later}, now=lambda: moment.timestamp()) == 30.0
    assert retry_after_s({"retry-after": "soon"}) is None
    assert retry_after_s({}) is None


def test_a_429_halves_the_limit_once_per_round_and_successes_grow_it_back() -> None:
    limit = EndpointLimit(8, clock=Clock())
    rounds = [limit.acquire() for _ in range(8)]
    assert limit.limit == 8
    for sent in rounds:  # eight requests of one round refused at once: one cut, not eight
        limit.rate_limited(sent, None)
    assert limit.limit == 4
    limit.rate_limited(limit.round(), None)  # a request sent after the cut is refused too: cut again
    assert limit.limit == 2
    for _ in range(8):
        limit.release()
    successes = 0
    while limit.limit < 8:
        limit.succeeded()
        successes += 1
    # +1/limit per success: 2 to 3 takes 2, then 3, 4, 5, 6 and 7 successes
    assert successes == 2 + 3 + 4 + 5 + 6 + 7
    stats = limit.stats()
    assert (stats.ceiling, stats.lowest, stats.final, stats.rate_limited) == (8, 2, 8, 9)


def test_retry_after_holds_every_new_request_until_it_has_passed() -> None:
    clock = Clock()
    limit = EndpointLimit(4, clock=clock)
    limit.rate_limited(limit.acquire(), 3.0)
    limit.release()
    got = threading.Event()
    waiter = threading.Thread(target=lambda: (limit.acquire(), got.set()), daemon=True)
    waiter.start()
    assert not got.wait(0.3)  # the clock has not moved: still held
    clock.now += 3.0
    assert got.wait(5.0)  # the wait ends within its timeout (3 s) and re-reads the clock
    assert limit.stats().paused_s == 3.0


def test_the_answerer_and_judge_of_one_endpoint_share_one_limit_with_the_larger_ceiling() -> None:
    limits = EndpointLimits()
    answers = limits.for_endpoint("http://127.0.0.1:9/v1", None, 16)
    judge = limits.for_endpoint("http://127.0.0.1:9/v1", None, 32)
    other = limits.for_endpoint("https://api.openai.com/v1", "OPENAI_API_KEY", 4)
    assert answers is judge and answers.limit == 32
    assert other is not answers and other.limit == 4


def test_a_429_from_the_server_lowers_the_limit_waits_its_retry_after_and_the_results_stay_right(cache_path: Path) -> None:
    arrivals: list[tuple[float, str]] = []
    lock = threading.Lock()

    def rule(body: JsonDict) -> Fail | None:
        with lock:
            arrivals.append((time.monotonic(), body["messages"][-1]["content"]))
            return Fail(429, "rate limited", retry_after="0.6") if len(arrivals) == 1 else None

    server = FakeOpenAIServer(rule=rule, answer_delay_s=lambda body: 0.15).start()
    try:
        batch = reqs(40)
        client = make_client(server, cache_path, concurrency=8, max_retries=3)
        results = client.complete_many(batch, progress=False)
    finally:
        server.stop()
    assert [r.text for r in results] == [expected_text(r) for r in batch]
    assert all(r.ok for r in results)
    refused_at, refused = arrivals[0]
    assert [content for _, content in arrivals].count(refused) == 2  # the refused request reached the server, then again
    retried_at = next(at for at, content in arrivals[1:] if content == refused)
    assert retried_at - refused_at >= 0.55  # the SDK waited the Retry-After
    # nothing was sent while the Retry-After ran but the first eight (in flight at the 429)
    assert min(at for at, _ in arrivals[8:]) >= refused_at + 0.55
    stats = client.limit.stats()
    assert (stats.ceiling, stats.lowest, stats.final, stats.rate_limited) == (8, 4, 8, 1)
    assert stats.paused_s >= 0.55
    counters = client.counters
    assert (counters.requests_sent, counters.retries, counters.completed) == (41, 1, 40)
