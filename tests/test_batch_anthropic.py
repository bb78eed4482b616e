"""Anthropic's Message Batches provider through the real ``anthropic`` SDK against a local fake.

What is pinned: the request the fake received (Messages params translated from the OpenAI-form
body, custom_id = the line's key, the key from api_key_env), the poll states, every line's outcome
(text, tokens, finish_reason; errored / expired / canceled with the right retryability), the
documented limits, and the refusals that happen before anything is sent.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from omegaconf import OmegaConf

pytest.importorskip("anthropic", reason='the anthropic extra is not installed (pip install -e ".[anthropic]")')

from memory_protocol import ConfigError
from model_clients.batch.anthropic_batches import (
    MAX_BATCH_BYTES,
    MAX_REQUESTS_PER_BATCH,
    AnthropicBatchError,
    AnthropicBatches,
    UnbatchableRequest,
    native_api_root,
)
from model_clients.batch.provider import BatchLine, BatchProvider
from model_clients.chat_types import ChatRequest, LLMConfig, MissingAPIKeyError
from model_clients.kvstore import KVStore
from model_clients.llm_client import LLMClient
from tests.fake_anthropic_batches import (
    Canceled,
    Errored,
    Expired,
    FakeAnthropicBatches,
    Succeeded,
    default_answer,
    fake_anthropic,  # noqa: F401 - the fixture
)

REPO_ROOT = Path(__file__).resolve().parents[1]
MODEL = "claude-sonnet-4-6"
KEY_ENV = "MEMPP_TEST_ANTHROPIC_KEY"
FAKE_KEY = "sk-ant-test-MEMPP-SECRET-0a1b2c3d4e5f"
SYSTEM = "You answer briefly."
# {"requests":[ ... ]}: the envelope around the entries, less the comma line_bytes counts for the first
ENVELOPE_BYTES = len(b'{"requests":[]}') - 1


def body(question: str, **fields: Any) -> dict[str, Any]:
    """A chat body in the OpenAI form the live client sends for the claude answerer."""
    return {
        "model": MODEL,
        "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}],
        "temperature": 0.0,
        "max_tokens": 64,
        **fields,
    }


def line(question: str, **fields: Any) -> BatchLine:
    return BatchLine(key=hashlib.sha256(question.encode()).hexdigest(), body=body(question, **fields))


def provider(fake: FakeAnthropicBatches, monkeypatch: pytest.MonkeyPatch, **limits: int) -> AnthropicBatches:
    monkeypatch.setenv(KEY_ENV, FAKE_KEY)
    config = LLMConfig(model=MODEL, base_url=f"{fake.base_url}/", api_key_env=KEY_ENV, seed=None, max_retries=0)
    return AnthropicBatches(config, **limits)


def expected_params(question: str) -> dict[str, Any]:
    return {
        "model": MODEL,
        "max_tokens": 64,
        "messages": [{"role": "user", "content": question}],
        "system": SYSTEM,
        "temperature": 0.0,
    }


def test_submit_sends_messages_params_with_the_key_as_custom_id(fake_anthropic: FakeAnthropicBatches,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [line("Where does Ana work?", seed=0), line("When did Bo move?", seed=0)]
    with provider(fake_anthropic, monkeypatch) as batches:
        batch_id = batches.submit(lines)

    [received] = fake_anthropic.created
    assert batch_id == "msgbatch_fake0000"
    assert received.requests == [
        {"custom_id": lines[0].key, "params": expected_params("Where does Ana work?")},
        {"custom_id": lines[1].key, "params": expected_params("When did Bo move?")},
    ]  # system hoisted out of messages, max_tokens and model kept, seed dropped
    headers = received.headers
    assert FAKE_KEY in (headers.get("x-api-key", "") + headers.get("authorization", ""))
    assert headers.get("anthropic-version")


def test_poll_stays_pending_then_collect_gives_text_tokens_and_finish_reason_per_key(
        monkeypatch: pytest.MonkeyPatch) -> None:
    questions = ["Where does Ana work?", "When did Bo move?"]
    with FakeAnthropicBatches(polls_in_progress=2) as fake, provider(fake, monkeypatch) as batches:
        batch_id = batches.submit([line(q) for q in questions])
        states = [batches.poll(batch_id) for _ in range(3)]
        outcomes = {outcome.key: outcome for outcome in batches.collect(batch_id)}

    assert [(s.status, s.done, s.total) for s in states] == [("pending", 0, 2), ("pending", 0, 2), ("ended", 2, 2)]
    assert set(outcomes) == {line(q).key for q in questions}
    for question in questions:
        outcome = outcomes[line(question).key]
        text = default_answer(expected_params(question))
        assert outcome.error is None and outcome.result is not None
        result = outcome.result
        assert (result.text, result.finish_reason, result.key, result.cached) == (text, "stop", outcome.key, False)
        # the fake reports input_tokens = words of system + messages, output_tokens = words of the text
        assert result.prompt_tokens == len(SYSTEM.split()) + len(question.split())
        assert result.completion_tokens == len(text.split())


def test_errored_expired_and_canceled_lines_are_outcomes_with_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    fates = {"bad request": Errored("invalid_request_error", "prompt is too long"),
             "overloaded": Errored("overloaded_error", "Overloaded"),
             "late": Expired(), "stopped": Canceled(), "fine": None}

    def fate(custom_id: str, params: dict[str, Any]) -> Any:
        return fates[params["messages"][-1]["content"]]

    with FakeAnthropicBatches(fate=fate) as fake, provider(fake, monkeypatch) as batches:
        batch_id = batches.submit([line(q) for q in fates])
        state = batches.poll(batch_id)
        outcomes = {outcome.key: outcome for outcome in batches.collect(batch_id)}

    assert (state.status, state.done, state.total) == ("cancelled", 5, 5)  # the fake cancelled a line
    seen = {q: (outcomes[line(q).key].error, outcomes[line(q).key].retryable) for q in fates}
    assert seen["bad request"] == ("errored (invalid_request_error): prompt is too long", False)
    assert seen["overloaded"] == ("errored (overloaded_error): Overloaded", True)
    assert seen["late"][1] is True and seen["late"][0].startswith("expired")
    assert seen["stopped"][1] is True and seen["stopped"][0].startswith("canceled")
    assert seen["fine"] == (None, False) and outcomes[line("fine").key].result.ok


def test_a_batch_that_ran_out_of_time_ends_expired_with_every_line_retryable(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeAnthropicBatches(expire_all=True) as fake, provider(fake, monkeypatch) as batches:
        batch_id = batches.submit([line("a"), line("b")])
        state = batches.poll(batch_id)
        outcomes = batches.collect(batch_id)

    assert (state.status, state.done, state.total) == ("expired", 2, 2)
    assert sorted(o.key for o in outcomes) == sorted([line("a").key, line("b").key])
    assert all(o.result is None and o.retryable and o.error.startswith("expired") for o in outcomes)


def test_stop_reasons_map_to_openai_finish_reasons_and_a_reply_without_text_is_retryable(
        monkeypatch: pytest.MonkeyPatch) -> None:
    fates = {"cut": Succeeded("Ana works at", "max_tokens"), "ends": Succeeded("Lyon.", "end_turn"),
             "silent": Succeeded("", "end_turn")}
    with FakeAnthropicBatches(fate=lambda _, params: fates[params["messages"][-1]["content"]]) as fake, \
            provider(fake, monkeypatch) as batches:
        batch_id = batches.submit([line(q) for q in fates])
        batches.poll(batch_id)
        outcomes = {o.key: o for o in batches.collect(batch_id)}

    assert (outcomes[line("cut").key].result.text, outcomes[line("cut").key].result.finish_reason) == ("Ana works at",
                                                                                                       "length")
    assert outcomes[line("ends").key].result.finish_reason == "stop"
    silent = outcomes[line("silent").key]
    assert silent.result is None and silent.retryable and "no text block" in silent.error


def test_every_system_message_is_hoisted_in_order_and_temperature_capped_at_one(
        fake_anthropic: FakeAnthropicBatches, monkeypatch: pytest.MonkeyPatch) -> None:
    messages = [{"role": "system", "content": "Rule one."}, {"role": "user", "content": "Hi"},
                {"role": "assistant", "content": "Hello"}, {"role": "developer", "content": "Rule two."},
                {"role": "user", "content": "Where?"}]
    batch_line = BatchLine(key="k" * 64, body={"model": MODEL, "messages": messages, "temperature": 1.7,
                                               "max_tokens": 8, "response_format": {"type": "text"}})
    with provider(fake_anthropic, monkeypatch) as batches:
        batches.submit([batch_line])

    [request] = fake_anthropic.created[0].requests
    assert request["params"] == {
        "model": MODEL, "max_tokens": 8, "system": "Rule one.\nRule two.", "temperature": 1.0,
        "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"},
                     {"role": "user", "content": "Where?"}],
    }


@pytest.mark.parametrize(("fields", "says"), [
    ({"response_format": {"type": "json_object"}}, "JSON mode"),
    ({"max_tokens": None}, "max_tokens is None"),
    ({"max_tokens": 0}, "at least 1"),
    ({"tools": [{"type": "function", "function": {"name": "f"}}]}, "['tools']"),
])
def test_unbatchable_requests_are_refused_before_anything_is_sent(
        fake_anthropic: FakeAnthropicBatches, monkeypatch: pytest.MonkeyPatch, fields: dict[str, Any],
        says: str) -> None:
    with provider(fake_anthropic, monkeypatch) as batches, pytest.raises(UnbatchableRequest) as raised:
        batches.submit([line("fine"), line("judge me", **fields)])
    assert says in str(raised.value) and line("judge me").key in str(raised.value)
    assert fake_anthropic.created == []


def test_line_bytes_is_each_lines_share_of_the_uploaded_body(fake_anthropic: FakeAnthropicBatches,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [line("Où travaille Ana ?"), line("When did Bo move?" * 20)]
    with provider(fake_anthropic, monkeypatch) as batches:
        batches.submit(lines)
        sizes = [batches.line_bytes(each) for each in lines]
    assert fake_anthropic.created[0].size == sum(sizes) + ENVELOPE_BYTES


def test_submit_refuses_a_batch_beyond_lowered_limits(fake_anthropic: FakeAnthropicBatches,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [line("a"), line("b"), line("c")]
    sizer = AnthropicBatches(LLMConfig(model=MODEL, base_url="http://x/v1"))
    two_lines_bytes = sum(sizer.line_bytes(each) for each in lines[:2])
    with provider(fake_anthropic, monkeypatch, max_lines=2) as batches, pytest.raises(ValueError, match="max_lines=2"):
        batches.submit(lines)
    with provider(fake_anthropic, monkeypatch, max_bytes=two_lines_bytes) as batches:
        as_protocol: BatchProvider = batches  # what the runner sees (a type check; the protocol is static)
        assert as_protocol.name == "anthropic"
        assert (batches.max_lines, batches.max_bytes) == (MAX_REQUESTS_PER_BATCH, two_lines_bytes)
        with pytest.raises(ValueError, match=f"max_bytes={two_lines_bytes}"):
            batches.submit(lines)
        batches.submit(lines[:2])
    assert [len(batch.requests) for batch in fake_anthropic.created] == [2]


def test_documented_limits_are_the_defaults() -> None:
    # Batch processing guide, "Batch limitations": 100,000 requests or 256 MB per batch.
    batches = AnthropicBatches(LLMConfig(model=MODEL, base_url="https://api.anthropic.com/v1/"))
    assert (batches.max_lines, MAX_REQUESTS_PER_BATCH) == (100_000, 100_000)
    assert batches.max_bytes == MAX_BATCH_BYTES == 256_000_000
    with pytest.raises(ValueError, match="max_lines"):
        AnthropicBatches(LLMConfig(model=MODEL, base_url="https://api.anthropic.com/v1/"), max_lines=100_001)


def test_the_native_root_is_derived_from_the_claude_configs_compatible_endpoint(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_OPENAI_BASE_URL", raising=False)
    config = OmegaConf.to_container(OmegaConf.load(REPO_ROOT / "configs/answerer/claude-sonnet-4-6.yaml"), resolve=True)
    assert config["base_url"] == "https://api.anthropic.com/v1/"
    assert native_api_root(config["base_url"]) == "https://api.anthropic.com"
    assert native_api_root("http://127.0.0.1:5123/v1") == "http://127.0.0.1:5123"
    with pytest.raises(ConfigError, match="needs base_url"):
        AnthropicBatches(LLMConfig(model=MODEL))


def test_a_live_cache_key_is_a_valid_custom_id(tmp_path: Path) -> None:
    config = LLMConfig(model=MODEL, base_url="https://api.anthropic.com/v1/", seed=None)
    client = LLMClient(config, KVStore(tmp_path / "c"))
    key = client.cache_key(ChatRequest(messages=[{"role": "user", "content": "Where?"}]))
    batches = AnthropicBatches(client.config)
    assert batches.line_bytes(BatchLine(key=key, body=body("Where?"))) > 0  # accepted as custom_id (1-64 of [\w-])
    with pytest.raises(UnbatchableRequest, match="custom_id"):
        batches.line_bytes(BatchLine(key=key + "0", body=body("Where?")))


def test_a_missing_key_fails_before_any_request(fake_anthropic: FakeAnthropicBatches,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    config = LLMConfig(model=MODEL, base_url=fake_anthropic.base_url, api_key_env=KEY_ENV)
    with pytest.raises(MissingAPIKeyError, match=KEY_ENV):
        AnthropicBatches(config).submit([line("a")])
    assert fake_anthropic.created == []


def test_an_unknown_batch_is_an_error_naming_the_model_without_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeAnthropicBatches(echo_authorization=True) as fake, provider(fake, monkeypatch) as batches, \
            pytest.raises(AnthropicBatchError) as raised:
        batches.poll("msgbatch_nope")
    message = str(raised.value)
    assert "HTTP 404" in message and MODEL in message and "poll" in message
    assert "received" in message and "***" in message and FAKE_KEY not in message  # echoed, then scrubbed


def test_collecting_a_batch_still_in_progress_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeAnthropicBatches(polls_in_progress=5) as fake, provider(fake, monkeypatch) as batches:
        batch_id = batches.submit([line("a")])
        with pytest.raises(AnthropicBatchError, match="collect .*in_progress"):
            batches.collect(batch_id)
        assert fake.result_downloads(batch_id) == 0


def test_a_missing_sdk_is_one_line_naming_the_extra(monkeypatch: pytest.MonkeyPatch,
                                                     fake_anthropic: FakeAnthropicBatches) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)  # import anthropic now raises ImportError
    with provider(fake_anthropic, monkeypatch) as batches, pytest.raises(ConfigError) as raised:
        batches.submit([line("a")])
    assert str(raised.value) == 'batch_api=anthropic needs the anthropic extra: pip install -e ".[anthropic]"'


def test_the_sdk_is_imported_only_when_a_call_is_made() -> None:
    code = ("import sys; from model_clients.batch.anthropic_batches import AnthropicBatches; "
            "from model_clients.chat_types import LLMConfig; "
            "AnthropicBatches(LLMConfig(model='m', base_url='https://api.anthropic.com/v1/')); "
            "print('anthropic' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
