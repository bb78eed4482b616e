"""model_clients.llm_client with the real openai SDK against a local fake server: caching, retries, bad replies, request checks."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from model_clients.kvstore import KVStore
from model_clients.llm_client import (
    ChatRequest,
    LLMConfig,
)
from tests.fake_openai_server import Drop, EmptyChoices, Fail, FakeOpenAIServer, Hang, Malformed, NullContent, last_user_content
from tests.fake_openai_server import fake_server  # noqa: F401  (a fixture)

from tests.llm_client_support import essence, expected_text, make_client, req, reqs
from tests.llm_client_support import cache_path  # noqa: F401  (a fixture)


# --------------------------------------------------------------------------- caching


def test_second_run_makes_zero_requests(fake_server: FakeOpenAIServer, cache_path: Path) -> None:
    batch = reqs(6)
    first = make_client(fake_server, cache_path).complete_many(batch, desc="first", progress=False)
    assert fake_server.request_count == 6
    assert [r.text for r in first] == [expected_text(r) for r in batch]
    assert not any(r.cached for r in first)

    second_client = make_client(fake_server, cache_path)  # a new process would open the file afresh
    second = second_client.complete_many(batch, desc="second", progress=False)
    assert fake_server.request_count == 6, "a repeated run must not send any request"
    assert all(r.cached for r in second)
    assert essence(second) == essence(first)
    counters = second_client.counters
    assert (counters.requests_sent, counters.cache_hits, counters.prompt_tokens) == (0, 6, 0)


def test_single_complete_uses_and_fills_the_cache(fake_server: FakeOpenAIServer, cache_path: Path) -> None:
    client = make_client(fake_server, cache_path)
    one = client.complete(req("alone"))
    again = client.complete(req("alone"))
    assert fake_server.request_count == 1
    assert (one.cached, again.cached) == (False, True)
    assert one.text == again.text == expected_text(req("alone"))


def test_a_local_server_on_another_port_is_served_from_the_cache_when_it_serves_the_same_model(cache_path: Path) -> None:
    # the fakes register what they serve, as the harness's llama.cpp server registers its GGUF's sha256
    with FakeOpenAIServer() as first, FakeOpenAIServer() as second:
        assert first.port != second.port
        make_client(first, cache_path).complete_many(reqs(3), progress=False)
        again = make_client(second, cache_path)
        results = again.complete_many(reqs(3), progress=False)
    assert first.request_count == 3 and second.request_count == 0
    assert all(r.cached for r in results) and again.counters.requests_sent == 0
    # issue 31: a local server that says nothing of what it serves is asked (it may serve another model)
    with FakeOpenAIServer(serves=None) as unknown:
        results = make_client(unknown, cache_path).complete_many(reqs(3), progress=False)
    assert unknown.request_count == 3 and not any(r.cached for r in results)


def test_cache_key_covers_every_input_but_not_the_key(
    fake_server: FakeOpenAIServer, cache_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = make_client(fake_server, cache_path)
    base = client.cache_key(req("x"))
    assert client.cache_key(req("x")) == base
    variants = [
        req("y"),
        req("x", template_hash="tmpl-v2"),
        req("x", run_index=1),
        req("x", temperature=0.7),
        req("x", seed=1),
        req("x", max_tokens=7),
        req("x", extra={"response_format": {"type": "json_object"}}),
    ]
    keys = {client.cache_key(v) for v in variants}
    assert base not in keys and len(keys) == len(variants)
    assert make_client(fake_server, cache_path, model="gpt-4o-mini").cache_key(req("x")) != base
    assert make_client(fake_server, cache_path, base_url="https://example.org/v1").cache_key(req("x")) != base
    assert make_client(fake_server, cache_path, base_url="http://127.0.0.1:1/v2").cache_key(req("x")) != base
    # a local server's port is part of the key unless it is known what it serves (issue 31)
    assert make_client(fake_server, cache_path, base_url="http://localhost:1/v1").cache_key(req("x")) != base
    # an override equal to the config value is the same request
    assert client.cache_key(req("x", temperature=0.0, seed=0)) == base

    monkeypatch.setenv("KEY_A", "sk-aaa")
    monkeypatch.setenv("KEY_B", "sk-bbb")
    key_a = make_client(fake_server, cache_path, api_key_env="KEY_A").cache_key(req("x"))
    key_b = make_client(fake_server, cache_path, api_key_env="KEY_B").cache_key(req("x"))
    assert key_a == key_b == base


def test_run_index_gives_separate_cache_entries(fake_server: FakeOpenAIServer, cache_path: Path) -> None:
    client = make_client(fake_server, cache_path)
    results = client.complete_many([req("judge", run_index=i) for i in range(3)], progress=False)
    assert fake_server.request_count == 3
    assert len({r.key for r in results}) == 3
    assert len(KVStore(cache_path)) == 3


def test_duplicates_in_a_batch_are_sent_once(fake_server: FakeOpenAIServer, cache_path: Path) -> None:
    client = make_client(fake_server, cache_path)
    results = client.complete_many([req("same"), req("other"), req("same"), req("same")], progress=False)
    assert fake_server.request_count == 2
    assert results[0].text == results[2].text == results[3].text == expected_text(req("same"))
    assert results[1].text == expected_text(req("other"))


def test_results_keep_input_order_and_concurrency_is_bounded(cache_path: Path) -> None:
    n = 10

    def delay(body: dict[str, Any]) -> float:  # later requests answer sooner: completion order is reversed
        return 0.02 * (n - int(last_user_content(body)[1:]))

    with FakeOpenAIServer(answer_delay_s=delay) as server:
        batch = reqs(n)
        results = make_client(server, cache_path, concurrency=3).complete_many(batch, progress=False)
        assert [r.text for r in results] == [expected_text(r) for r in batch]
        assert 2 <= server.max_in_flight <= 3


# --------------------------------------------------------------------------- retries and failures


def test_429_then_success_is_retried_honouring_retry_after(cache_path: Path) -> None:
    arrivals: list[float] = []

    def delay(body: dict[str, Any]) -> float:
        arrivals.append(time.monotonic())
        return 0.0

    with FakeOpenAIServer(answer_delay_s=delay) as server:
        server.queue(Fail(429, "rate limited", retry_after="0.4"))
        client = make_client(server, cache_path)
        started = time.monotonic()
        result = client.complete(req("q"))
        assert result.ok and result.text == expected_text(req("q"))
        assert server.request_count == 2
        assert arrivals[0] - started >= 0.4, "the SDK must wait the Retry-After before asking again"
        assert (client.counters.retries, client.counters.requests_sent, client.counters.failures) == (1, 2, 0)


def test_5xx_timeout_and_dropped_connection_are_retried(fake_server: FakeOpenAIServer, cache_path: Path) -> None:
    fake_server.queue(Fail(500, retry_after="0.01"), Hang(60.0), Drop())
    client = make_client(fake_server, cache_path, timeout_s=0.5)
    started = time.monotonic()
    result = client.complete(req("q"))
    assert result.ok and result.text == expected_text(req("q"))
    assert fake_server.request_count == 4
    assert (client.counters.retries, client.counters.requests_sent) == (3, 4)
    assert time.monotonic() - started < 50, "hang guard: the client timeout must cut the 60 s hang"


def test_retries_exhausted_is_an_uncached_error_naming_model_and_endpoint(cache_path: Path) -> None:
    with FakeOpenAIServer(rule=lambda body: Fail(503, "overloaded", retry_after="0.01")) as server:
        client = make_client(server, cache_path, max_retries=2)
        result = client.complete(req("q"))
        assert not result.ok and result.text == ""
        assert "503" in (result.error or "") and "after 3 attempts" in (result.error or "")
        assert "'gpt-4.1-mini'" in (result.error or "") and server.base_url in (result.error or "")
        assert server.request_count == 3
        assert len(KVStore(cache_path)) == 0
        assert (client.counters.failures, client.counters.retries) == (1, 2)


@pytest.mark.parametrize("fault", [Malformed(), EmptyChoices(), NullContent()], ids=["malformed", "no-choices", "null"])
def test_an_unusable_200_reply_is_asked_again(fake_server: FakeOpenAIServer, cache_path: Path, fault: Any) -> None:
    sleeps: list[float] = []
    fake_server.queue(fault, fault)
    client = make_client(fake_server, cache_path, sleep=sleeps.append, max_reasks=2)
    result = client.complete(req("q"))
    assert result.ok and result.text == expected_text(req("q"))
    assert fake_server.request_count == 3 and len(sleeps) == 2
    assert (client.counters.retries, client.counters.failures, client.counters.completed) == (2, 0, 1)


@pytest.mark.parametrize("fault", [Malformed(), EmptyChoices(), NullContent()], ids=["malformed", "no-choices", "null"])
def test_a_reply_unusable_every_time_is_recorded_and_the_batch_goes_on(cache_path: Path, fault: Any) -> None:
    def rule(body: dict[str, Any]) -> Any:
        return fault if last_user_content(body) == "BAD" else None

    with FakeOpenAIServer(rule=rule) as server:
        client = make_client(server, cache_path, max_reasks=1)
        results = client.complete_many([req("a"), req("BAD"), req("b")], progress=False)
        assert [r.ok for r in results] == [True, False, True]
        error = results[1].error or ""
        assert "asked 2 times" in error and "'gpt-4.1-mini'" in error and server.base_url in error
        assert server.request_count == 4
        assert len(KVStore(cache_path)) == 2, "a failure is not cached"


def test_permanent_400_is_recorded_and_the_batch_goes_on(cache_path: Path) -> None:
    def rule(body: dict[str, Any]) -> Fail | None:
        return Fail(400, "bad request: context too long") if last_user_content(body) == "BAD" else None

    batch = [req("a"), req("b"), req("BAD"), req("c"), req("d")]
    with FakeOpenAIServer(rule=rule) as server:
        client = make_client(server, cache_path)
        results = client.complete_many(batch, progress=False)
        assert server.request_count == 5, "a 400 must not be retried"
        assert [r.ok for r in results] == [True, True, False, True, True]
        assert "400" in (results[2].error or "") and "context too long" in (results[2].error or "")
        assert [r.text for i, r in enumerate(results) if i != 2] == [expected_text(batch[i]) for i in (0, 1, 3, 4)]
        assert len(KVStore(cache_path)) == 4, "a failure is not cached"
        assert client.counters.failures == 1

        rerun = make_client(server, cache_path).complete_many(batch, progress=False)
        assert server.request_count == 6, "only the failed request is sent again"
        assert [r.cached for r in rerun] == [True, True, False, True, True]


def test_request_validation() -> None:
    with pytest.raises(ValueError):
        ChatRequest(messages=[])
    with pytest.raises(ValueError):
        ChatRequest(messages=[{"role": "user"}])
    with pytest.raises(ValueError):
        LLMConfig(model="m", concurrency=0)
