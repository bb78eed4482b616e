"""Issue 31, point 3: two local servers that may serve different models never share cached replies.

A second server on another loopback port, answering to the same ``answerer.model``, got 0 requests
and the first server's score was reused: the cache key dropped every loopback port. Now a loopback
server is keyed by its port, or by the model file it serves when the harness started it (the
llama.cpp server registers its GGUF's sha256); a remote endpoint's keys are those of before.
"""

from __future__ import annotations

from pathlib import Path

from memory_protocol import file_sha256
from model_clients.chat_types import endpoint_identity, forget_served_model, register_served_model
from model_clients.kvstore import KVStore
from model_clients.llm_client import ChatRequest, LLMClient, LLMConfig
from tests.fake_openai_server import FakeOpenAIServer

REQUEST = ChatRequest(messages=[{"role": "user", "content": "How many lamps did I buy?"}], template_hash="t")
# The keys of this request as the code before this change computed them (git main at 9efb619):
# remote endpoints must keep theirs, or every hosted model's cache would miss at once.
REMOTE_KEYS = {
    None: "be13fc2ee5f699be2325d707d81a7f835d60e0578710e17f3698847104a72b8e",
    "https://api.anthropic.com/v1/": "cee2ea5091d24d0097296238df22d8b1d184aa39f0116e9c2fc370af04a920c1",
}


def _client(base_url: str | None, cache: KVStore) -> LLMClient:
    return LLMClient(LLMConfig(model="same-name", base_url=base_url, api_key_env=None, max_retries=0), cache)


def test_remote_endpoints_keep_their_cache_keys(tmp_path):
    cache = KVStore(tmp_path / "llm.sqlite")
    for base_url, key in REMOTE_KEYS.items():
        assert _client(base_url, cache).cache_key(REQUEST) == key


def test_a_second_local_server_on_another_port_is_asked_not_served_the_first_ones_reply(tmp_path):
    cache = KVStore(tmp_path / "llm.sqlite")
    with FakeOpenAIServer(answer_fn=lambda body: "two", serves=None) as first, \
            FakeOpenAIServer(answer_fn=lambda body: "three", serves=None) as second:
        assert _client(first.base_url, cache).complete(REQUEST).text == "two"
        again = _client(second.base_url, cache).complete(REQUEST)
        assert second.request_count == 1 and again.text == "three" and not again.cached
        assert _client(first.base_url, cache).complete(REQUEST).cached  # each keeps its own


def test_localhost_spellings_of_one_port_share_and_a_registered_server_is_keyed_by_its_weights():
    assert endpoint_identity("http://127.0.0.1:8000/v1") == endpoint_identity("http://localhost:8000/v1/")
    assert endpoint_identity("http://127.0.0.1:8000/v1") != endpoint_identity("http://127.0.0.1:8001/v1")
    try:  # the harness's llama.cpp server on two free ports, the same GGUF: one identity
        register_served_model("http://127.0.0.1:8000/v1", "gguf-sha256:aa")
        register_served_model("http://127.0.0.1:8001/v1", "gguf-sha256:aa")
        assert endpoint_identity("http://127.0.0.1:8000/v1") == endpoint_identity("http://127.0.0.1:8001/v1")
        register_served_model("http://127.0.0.1:8001/v1", "gguf-sha256:bb")
        assert endpoint_identity("http://127.0.0.1:8000/v1") != endpoint_identity("http://127.0.0.1:8001/v1")
    finally:
        forget_served_model("http://127.0.0.1:8000/v1")
        forget_served_model("http://127.0.0.1:8001/v1")
    assert endpoint_identity("https://api.openai.com/v1") == "https://api.openai.com/v1"


def test_the_local_server_registers_the_sha256_of_its_model_file(tmp_path, monkeypatch):
    from model_clients import local_server

    weights = tmp_path / "tiny.gguf"
    weights.write_bytes(b"GGUF" + b"\x00" * 64)
    seen: list[str] = []

    class Started:
        returncode = None

        def poll(self):
            return None

        def terminate(self):
            pass

        def wait(self, timeout=None):
            return 0

    monkeypatch.setattr(local_server, "_require_server_package", lambda: None)
    monkeypatch.setattr(local_server.subprocess, "Popen", lambda *a, **k: Started())
    monkeypatch.setattr(local_server, "_wait_ready", lambda *a: None)
    monkeypatch.setattr(local_server, "_first_answer", lambda *a: None)  # no real server behind Popen here
    with local_server.serve("smollm2", gguf=weights) as url:
        seen.append(endpoint_identity(url))
    assert seen[0].endswith("#gguf-sha256:" + file_sha256(Path(weights)))
    assert "#" not in endpoint_identity(url), "forgotten when the server stops"
