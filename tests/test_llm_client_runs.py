"""model_clients.llm_client and model_clients.cost against a local fake server: resuming a killed run, cache_only, API keys, concurrent writers, cost estimates."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from model_clients.cost import PRICES, TokenCounter, actual_spend, estimate, price_for
from model_clients.kvstore import KVStore
from model_clients.llm_client import (
    CacheMissError,
    ChatRequest,
    ChatResult,
    LLMClient,
    LLMConfig,
    MissingAPIKeyError,
)
from tests.fake_openai_server import Fail, FakeOpenAIServer, last_user_content
from tests.fake_openai_server import fake_server  # noqa: F401  (a fixture)

from tests.llm_client_support import FAKE_KEY, REPO_ROOT, essence, expected_text, make_client, req, reqs
from tests.llm_client_support import cache_path  # noqa: F401  (a fixture)


# --------------------------------------------------------------------------- resuming a killed run

_CHILD = textwrap.dedent(
    """
    import sys
    from model_clients.kvstore import KVStore
    from model_clients.llm_client import ChatRequest, LLMClient, LLMConfig
    base_url, cache_path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    requests = [ChatRequest(messages=[{"role": "system", "content": "You answer briefly."},
                                      {"role": "user", "content": f"q{i}"}], template_hash="tmpl-v1")
                for i in range(n)]
    config = LLMConfig(model="gpt-4.1-mini", base_url=base_url, api_key_env=None, concurrency=1, timeout_s=60)
    LLMClient(config, KVStore(cache_path)).complete_many(requests, progress=False)
    print("finished")
    """
)


def test_killed_run_resumes_without_repeating_completed_requests(tmp_path: Path) -> None:
    n, done_before_kill = 8, 3
    batch = reqs(n)
    cache_path = tmp_path / "killed.sqlite"
    hang = {"on": True}

    def delay(body: dict[str, Any]) -> float:
        return 900.0 if hang["on"] and int(last_user_content(body)[1:]) >= done_before_kill else 0.0

    with FakeOpenAIServer(answer_delay_s=delay) as server:
        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
        child = subprocess.Popen(
            [sys.executable, "-c", _CHILD, server.base_url, str(cache_path), str(n)],
            cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        try:
            deadline = time.monotonic() + 600  # a hang guard only: a loaded machine starts the child slowly
            while server.request_count < done_before_kill + 1 and time.monotonic() < deadline:
                assert child.poll() is None, child.stderr.read().decode() if child.stderr else ""
                time.sleep(0.02)
            assert server.request_count == done_before_kill + 1, "the child should be stuck on its 4th request"
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=10)
        assert child.returncode == -signal.SIGKILL
        assert len(KVStore(cache_path)) == done_before_kill, "every completed request was cached before the kill"

        hang["on"] = False
        seen_before = server.request_count
        resumed = make_client(server, cache_path).complete_many(batch, progress=False)
        resent = [r.last_user_content for r in server.requests[seen_before:]]
        assert sorted(resent) == sorted(f"q{i}" for i in range(done_before_kill, n))
        assert [r.cached for r in resumed] == [i < done_before_kill for i in range(n)]

    with FakeOpenAIServer() as fresh_server:
        uninterrupted = make_client(fresh_server, tmp_path / "fresh.sqlite").complete_many(batch, progress=False)
    assert essence(resumed) == essence(uninterrupted)


def test_server_failing_hard_midway_then_rerun(tmp_path: Path) -> None:
    batch = reqs(6)
    with FakeOpenAIServer() as server:
        server.fail_after(2)
        first = make_client(server, tmp_path / "c.sqlite", concurrency=1, max_retries=1).complete_many(
            batch, progress=False
        )
        assert [r.ok for r in first] == [True, True, False, False, False, False]
        assert all("connection error after 2 attempts" in (r.error or "") for r in first[2:])
        server.fail_after(None)
        seen_before = server.request_count
        second = make_client(server, tmp_path / "c.sqlite").complete_many(batch, progress=False)
        resent = sorted(r.last_user_content for r in server.requests[seen_before:])
        assert resent == [f"q{i}" for i in range(2, 6)]
        assert all(r.ok for r in second)
        assert [r.text for r in second] == [expected_text(r) for r in batch]


# --------------------------------------------------------------------------- cache_only and keys


def test_cache_only_miss_raises_without_any_request(
    fake_server: FakeOpenAIServer, cache_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMPP_UNSET_KEY", raising=False)
    offline = make_client(fake_server, cache_path, cache_only=True, api_key_env="MEMPP_UNSET_KEY")
    request = req("never asked")
    with pytest.raises(CacheMissError) as single:
        offline.complete(request)
    assert "gpt-4.1-mini" in str(single.value) and offline.cache_key(request) in str(single.value)
    with pytest.raises(CacheMissError) as batch_miss:
        offline.complete_many([request, req("other")], progress=False)
    assert "2 requests" in str(batch_miss.value)
    assert fake_server.request_count == 0

    make_client(fake_server, cache_path).complete_many([request, req("other")], progress=False)
    assert fake_server.request_count == 2
    hits = offline.complete_many([request, req("other")], progress=False)  # no key needed for hits
    assert all(r.cached and r.ok for r in hits)
    assert fake_server.request_count == 2


def test_missing_api_key_is_a_clear_error_and_no_key_sends_placeholder(
    fake_server: FakeOpenAIServer, cache_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMPP_UNSET_KEY", raising=False)
    needs_key = make_client(fake_server, cache_path, api_key_env="MEMPP_UNSET_KEY")
    with pytest.raises(MissingAPIKeyError, match="MEMPP_UNSET_KEY"):
        needs_key.complete_many(reqs(2), progress=False)
    with pytest.raises(MissingAPIKeyError, match="MEMPP_UNSET_KEY"):
        needs_key.complete(req("x"))
    assert fake_server.request_count == 0

    make_client(fake_server, cache_path, api_key_env=None).complete(req("x"))
    assert [r.authorization for r in fake_server.requests] == ["Bearer EMPTY"]


def test_api_key_never_leaks(fake_server: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMPP_TEST_KEY", FAKE_KEY)
    fake_server.rule = lambda body: (
        Fail(401, "invalid key", echo_authorization=True) if last_user_content(body) == "echo" else None
    )
    cache_path = tmp_path / "secret_check.sqlite"
    config = LLMConfig(model="gpt-4.1-mini", base_url=fake_server.base_url, api_key_env="MEMPP_TEST_KEY")
    client = LLMClient(config, KVStore(cache_path))
    results = client.complete_many([req("q0"), req("echo"), req("q1")], progress=False)

    # the key really was sent (so the checks below can fail) ...
    assert {r.authorization for r in fake_server.requests} == {f"Bearer {FAKE_KEY}"}
    # ... and a server echoing it back does not put it into our error text
    assert results[1].error is not None and "***" in results[1].error and FAKE_KEY not in results[1].error

    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("secret_check"))
    assert b"answer to <q0>" in stored, "sanity: the answers are in these files"
    assert FAKE_KEY.encode() not in stored and b"MEMPP-SECRET" not in stored
    dumps = [
        repr(client), str(client), repr(config), json.dumps(dataclasses.asdict(config)),
        repr(results), repr(client.counters), repr(actual_spend(client)), repr(estimate([req("z")], client)),
    ]
    for dump in dumps:
        assert "MEMPP-SECRET" not in dump


# --------------------------------------------------------------------------- concurrent writers


def test_two_clients_writing_one_cache_file_concurrently(fake_server: FakeOpenAIServer, cache_path: Path) -> None:
    batch_a = [req(f"q{i}") for i in range(0, 30)]
    batch_b = [req(f"q{i}") for i in range(15, 45)]
    clients = [make_client(fake_server, KVStore(cache_path)), make_client(fake_server, KVStore(cache_path))]
    barrier = threading.Barrier(2)
    outcomes: dict[int, list[ChatResult]] = {}
    errors: list[BaseException] = []

    def run(index: int, batch: list[ChatRequest]) -> None:
        try:
            barrier.wait()
            outcomes[index] = clients[index].complete_many(batch, progress=False)
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(0, batch_a)), threading.Thread(target=run, args=(1, batch_b))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=900)  # a hang guard only
    assert not errors
    assert [r.text for r in outcomes[0]] == [expected_text(r) for r in batch_a]
    assert [r.text for r in outcomes[1]] == [expected_text(r) for r in batch_b]

    conn = sqlite3.connect(cache_path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    rows = conn.execute("SELECT key, value FROM kv").fetchall()
    conn.close()
    assert len(rows) == 45
    by_text = {expected_text(r) for r in batch_a + batch_b}
    assert {json.loads(value)["text"] for _, value in rows} == by_text

    reader = make_client(fake_server, cache_path, cache_only=True)
    reread = reader.complete_many(batch_a + batch_b, progress=False)
    assert all(r.cached for r in reread)
    assert [r.text for r in reread] == [expected_text(r) for r in batch_a + batch_b]


# --------------------------------------------------------------------------- cost


def test_dry_run_estimate_matches_the_real_run(fake_server: FakeOpenAIServer, cache_path: Path) -> None:
    batch = reqs(10)
    make_client(fake_server, cache_path, max_tokens=100).complete_many(batch[:4], progress=False)
    assert fake_server.request_count == 4
    assert estimate(batch, make_client(fake_server, cache_path)).cache_hits == 0, "max_tokens is part of the key"

    # the fake server is not OpenAI's endpoint: priced only with prices given (here gpt-4.1-mini's list price)
    client = make_client(fake_server, cache_path, max_tokens=100, price_in_per_mtok=0.40, price_out_per_mtok=1.60)
    full_batch = batch + [batch[7]]  # an in-batch duplicate, free
    counter = TokenCounter("gpt-4.1-mini")
    dry = estimate(full_batch, client, token_counter=counter)
    assert fake_server.request_count == 4, "an estimate sends nothing"
    assert (dry.requests, dry.calls, dry.cache_hits, dry.duplicates) == (11, 6, 4, 1)
    expected_prompt = sum(counter.count_messages(r.messages) for r in batch[4:])
    assert dry.prompt_tokens == expected_prompt
    assert dry.completion_tokens == 600 and "upper bound" in dry.completion_basis
    assert not dry.tokens_approximate and dry.token_method.startswith("o200k_base")
    assert dry.usd == pytest.approx(expected_prompt * 0.40 / 1e6 + 600 * 1.60 / 1e6)

    results = client.complete_many(full_batch, progress=False)
    assert fake_server.request_count - 4 == dry.calls
    assert client.counters.requests_sent == dry.calls and client.counters.cache_hits == dry.cache_hits

    spend = actual_spend(client)
    sent = [r for r in results[4:10]]
    assert spend.counters.prompt_tokens == sum(r.prompt_tokens for r in sent)
    assert spend.counters.completion_tokens == sum(r.completion_tokens for r in sent)
    assert spend.usd == pytest.approx(
        spend.counters.prompt_tokens * 0.40 / 1e6 + spend.counters.completion_tokens * 1.60 / 1e6
    )

    after = estimate(full_batch, client, token_counter=counter)
    assert (after.calls, after.cache_hits, after.usd) == (0, 11, 0.0)


def test_estimate_with_expected_length_and_unknown_price(fake_server: FakeOpenAIServer, cache_path: Path) -> None:
    counter = TokenCounter("x")
    known = estimate(reqs(3), make_client(fake_server, cache_path), expected_completion_tokens=50, token_counter=counter)
    assert known.completion_tokens == 150 and "assumed 50" in known.completion_basis

    provider = LLMClient(LLMConfig(model="my-new-model"), KVStore(cache_path))  # OpenAI's endpoint, not in the table
    unknown = estimate(reqs(3), provider, expected_completion_tokens=50, token_counter=counter)
    assert unknown.price is None and unknown.usd is None and unknown.input_usd is None
    assert "n/a" in unknown.format() and "unknown" in unknown.format()
    assert actual_spend(provider).usd is None and "n/a" in actual_spend(provider).format()

    unbounded = make_client(fake_server, cache_path, max_tokens=None, price_in_per_mtok=1.0, price_out_per_mtok=2.0)
    no_length = estimate(reqs(2), unbounded, token_counter=counter)
    assert no_length.completion_tokens is None and no_length.usd is None and no_length.input_usd is not None
    assert fake_server.request_count == 0


def test_a_local_endpoint_is_priced_at_zero_unless_prices_are_given(
    fake_server: FakeOpenAIServer, cache_path: Path
) -> None:
    counter = TokenCounter("x")
    local = make_client(fake_server, cache_path, model="gpt-4.1-mini")  # OpenAI's model name, our own server
    dry = estimate(reqs(3), local, expected_completion_tokens=50, token_counter=counter)
    assert dry.usd == 0.0 and "own endpoint 127.0.0.1" in dry.format()
    local.complete_many(reqs(3), progress=False)
    assert actual_spend(local).usd == 0.0 and actual_spend(local).counters.prompt_tokens > 0

    priced = make_client(fake_server, cache_path, price_in_per_mtok=10.0, price_out_per_mtok=20.0)
    given = estimate(reqs(3, prefix="p"), priced, expected_completion_tokens=50, token_counter=counter)
    assert given.usd == pytest.approx(given.prompt_tokens * 10.0 / 1e6 + 150 * 20.0 / 1e6)
    assert LLMClient(LLMConfig(model="gpt-4.1-mini"), KVStore(cache_path)).config.resolved_base_url.startswith(
        "https://api.openai.com"
    )
    on_openai = estimate(reqs(3), LLMClient(LLMConfig(model="gpt-4.1-mini"), KVStore(cache_path)),
                         expected_completion_tokens=50, token_counter=counter)
    assert on_openai.price == PRICES["gpt-4.1-mini"]


def test_price_table_and_token_counting() -> None:
    assert set(PRICES) == {"gpt-4.1-mini", "gpt-4o-mini", "gpt-4.1", "gpt-4o", "claude-sonnet-4-6"}
    for price in PRICES.values():
        assert price.known and price.source and price.checked
    assert price_for("gpt-4o-mini-2024-07-18") == PRICES["gpt-4o-mini"]
    assert price_for("gpt-4o-mini") == PRICES["gpt-4o-mini"]
    assert price_for("gpt-5-nano") is None

