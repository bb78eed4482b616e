"""The caching OpenAI-compatible proxy: third-party SDK calls go through LLMClient and the encoder."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import numpy as np
import openai
import pytest

from model_clients.kvstore import KVStore
from model_clients.llm_client import LLMClient, LLMConfig
from model_clients.proxy import LLMProxy, chat_request_from_body
from tests.fake_openai_server import FakeOpenAIServer, fake_server  # noqa: F401  (fake_server is a fixture)
from tests.schema_fixtures import requested_schema, schema_answer, tool_call_answer


class StubEncoder:
    """A deterministic 8-d encoder that counts what it is asked to embed."""

    dimension = 8
    identity = "stub-8"

    def __init__(self) -> None:
        self.seen: list[str] = []

    def encode(self, texts: list[str]) -> np.ndarray:
        self.seen += texts
        return np.array([[len(t) + i for i in range(8)] for t in texts], dtype=np.float32)


def client_for(server: FakeOpenAIServer, path: Path, **overrides: Any) -> LLMClient:
    config = LLMConfig(model="gpt-4o-mini", base_url=server.base_url, api_key_env=None, timeout_s=10, max_retries=0, **overrides)
    return LLMClient(config, KVStore(path / "llm.sqlite"))


def sdk(proxy: LLMProxy) -> openai.OpenAI:
    return openai.OpenAI(base_url=proxy.base_url, api_key=proxy.token, max_retries=0, timeout=30)


MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Where is Oslo?"}]


def test_chat_is_cached_and_replayed(fake_server: FakeOpenAIServer, tmp_path: Path) -> None:
    with LLMProxy(client_for(fake_server, tmp_path)) as proxy:
        assert proxy.base_url.startswith("http://127.0.0.1:")
        first = sdk(proxy).chat.completions.create(model="whatever", messages=MESSAGES, temperature=0)
        again = sdk(proxy).chat.completions.create(model="whatever", messages=MESSAGES, temperature=0)
        assert first.choices[0].message.content == again.choices[0].message.content
        assert "answer to <Where is Oslo?>" in first.choices[0].message.content
        assert first.model == "gpt-4o-mini"  # the harness config decides the model, not the library
        assert fake_server.request_count == 1
        assert proxy.counters.chat_requests == 2
        assert (proxy.client.counters.cache_hits, proxy.client.counters.completed) == (1, 1)

    with LLMProxy(client_for(fake_server, tmp_path, cache_only=True)) as replay:
        text = sdk(replay).chat.completions.create(model="m", messages=MESSAGES, temperature=0).choices[0].message.content
        assert text == first.choices[0].message.content
        with pytest.raises(openai.BadRequestError, match="cache_only"):
            sdk(replay).chat.completions.create(model="m", messages=[{"role": "user", "content": "new"}])
        assert replay.counters.chat_failures == 1 and "cache_only" in replay.errors[0]
        with pytest.raises(RuntimeError, match="cache_only"):
            replay.raise_errors()
    assert fake_server.request_count == 1


def test_proxy_stops_with_its_block(fake_server: FakeOpenAIServer, tmp_path: Path) -> None:
    with LLMProxy(client_for(fake_server, tmp_path)) as proxy:
        url = proxy.base_url
    with pytest.raises(openai.APIConnectionError):
        openai.OpenAI(base_url=url, api_key="x", max_retries=0, timeout=5).chat.completions.create(model="m", messages=MESSAGES)
    with pytest.raises(RuntimeError, match="not running"):
        proxy.base_url


def test_json_schema_reaches_upstream_and_the_cache_key(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    fmt = {"type": "json_schema", "json_schema": {"name": "City", "schema": schema}}
    answer = schema_answer({"City": lambda body: {"city": "Oslo"}})
    with FakeOpenAIServer(answer_fn=answer) as server, LLMProxy(client_for(server, tmp_path)) as proxy:
        reply = sdk(proxy).chat.completions.create(model="m", messages=MESSAGES, response_format=fmt)
        assert json.loads(reply.choices[0].message.content) == {"city": "Oslo"}
        sent = server.requests[0].body
        assert sent["response_format"] == fmt  # the format travelled upstream natively, verbatim
        assert requested_schema(sent) == ("City", schema) and sent["messages"][0]["content"] == MESSAGES[0]["content"]
        # the same messages without a format are another request, not a cache hit
        plain = sdk(proxy).chat.completions.create(model="m", messages=MESSAGES)
        assert "answer to" in plain.choices[0].message.content and server.request_count == 2
        client = client_for(server, tmp_path)
    keyed = chat_request_from_body({"messages": MESSAGES, "response_format": fmt})
    other = chat_request_from_body({"messages": MESSAGES, "response_format": {"type": "json_object"}})
    assert client.cache_key(keyed) != client.cache_key(other) and other.extra == {"response_format": {"type": "json_object"}}


def test_tools_come_back_as_tool_calls(tmp_path: Path) -> None:
    tools = [{"type": "function", "function": {"name": "add_memory", "parameters": {"type": "object"}}}]
    with FakeOpenAIServer(answer_fn=tool_call_answer("add_memory", {"text": "x"})) as server:
        with LLMProxy(client_for(server, tmp_path)) as proxy:
            reply = sdk(proxy).chat.completions.create(model="m", messages=MESSAGES, tools=tools, tool_choice="auto")
        sent = server.requests[0].body
        assert sent["tools"] == tools and sent["tool_choice"] == "auto" and sent["messages"] == MESSAGES  # native
        with LLMProxy(client_for(server, tmp_path)) as proxy:  # the tool call is replayed from the cache
            again = sdk(proxy).chat.completions.create(model="m", messages=MESSAGES, tools=tools, tool_choice="auto")
        assert server.request_count == 1
    for choice in (reply.choices[0], again.choices[0]):
        assert choice.finish_reason == "tool_calls" and choice.message.content is None
        assert choice.message.tool_calls[0].function.name == "add_memory"
        assert json.loads(choice.message.tool_calls[0].function.arguments) == {"text": "x"}


def test_embeddings_come_from_the_encoder(fake_server: FakeOpenAIServer, tmp_path: Path) -> None:
    encoder = StubEncoder()
    with LLMProxy(client_for(fake_server, tmp_path), encoder) as proxy:
        out = sdk(proxy).embeddings.create(model="text-embedding-3-small", input=["ab", "abcd"])
        assert [d.embedding for d in out.data] == [[2.0 + i for i in range(8)], [4.0 + i for i in range(8)]]
        b64 = sdk(proxy).embeddings.create(model="x", input="abc", encoding_format="base64")
        assert np.frombuffer(base64.b64decode(b64.data[0].embedding), "<f4").tolist() == [3.0 + i for i in range(8)]
        with pytest.raises(openai.BadRequestError, match="8-d"):
            sdk(proxy).embeddings.create(model="x", input="abc", dimensions=1536)
        assert proxy.counters.embedded_texts == 3 and encoder.seen == ["ab", "abcd", "abc"]
    assert fake_server.request_count == 0  # embeddings never reach the chat upstream


def test_rewrite_edits_the_request_before_it_is_keyed(fake_server: FakeOpenAIServer, tmp_path: Path) -> None:
    def pin(body: dict[str, Any]) -> dict[str, Any]:
        return {**body, "messages": [{"role": "user", "content": "pinned"}]}

    with LLMProxy(client_for(fake_server, tmp_path), rewrite=pin) as proxy:
        sdk(proxy).chat.completions.create(model="m", messages=MESSAGES)
        sdk(proxy).chat.completions.create(model="m", messages=[{"role": "user", "content": "other"}])
    assert fake_server.request_count == 1 and fake_server.requests[0].last_user_content == "pinned"


def test_bad_requests_are_refused_with_a_reason(fake_server: FakeOpenAIServer, tmp_path: Path) -> None:
    with LLMProxy(client_for(fake_server, tmp_path)) as proxy:
        with pytest.raises(openai.BadRequestError, match="streaming"):
            sdk(proxy).chat.completions.create(model="m", messages=MESSAGES, stream=True)
        with pytest.raises(openai.BadRequestError, match="messages"):
            sdk(proxy).chat.completions.create(model="m", messages=[])
        with pytest.raises(openai.NotFoundError):
            sdk(proxy).embeddings.create(model="x", input="no encoder configured")
    assert fake_server.request_count == 0


# ---------------------------------------------------------------- only its own libraries (issue 23, item 9)
def _raw_post(proxy: LLMProxy, route: str, body: dict, authorization: str | None) -> tuple[int, dict]:
    import urllib.error
    import urllib.request

    headers = {"Content-Type": "application/json", **({"Authorization": authorization} if authorization else {})}
    request = urllib.request.Request(f"{proxy.base_url}{route}", data=json.dumps(body).encode(), headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 (loopback)
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_a_request_without_the_proxys_token_is_refused_and_spends_nothing(fake_server: FakeOpenAIServer, tmp_path: Path) -> None:
    body = {"model": "m", "messages": MESSAGES}
    with LLMProxy(client_for(fake_server, tmp_path), StubEncoder()) as proxy, \
            LLMProxy(client_for(fake_server, tmp_path / "other")) as other:
        assert len(proxy.token) >= 40 and proxy.token != other.token  # random per proxy
        for authorization in (None, "Bearer ", "Bearer mempp-local-proxy", f"Bearer {other.token}", proxy.token):
            status, payload = _raw_post(proxy, "/chat/completions", body, authorization)
            assert status == 401 and payload["error"]["code"] == "invalid_api_key", authorization
        assert _raw_post(proxy, "/embeddings", {"input": "x"}, None)[0] == 401
        with pytest.raises(openai.AuthenticationError):
            openai.OpenAI(base_url=proxy.base_url, api_key="sk-someone-else", max_retries=0).chat.completions.create(
                model="m", messages=MESSAGES)
        assert fake_server.request_count == 0 and proxy.counters.chat_requests == 0
        assert proxy.encoder.seen == []
        status, payload = _raw_post(proxy, "/chat/completions", body, f"Bearer {proxy.token}")
        assert status == 200 and payload["choices"][0]["message"]["content"]
        assert fake_server.request_count == 1
        # the real credential the proxy spends is never what the caller sent
        assert proxy.token not in (fake_server.requests[0].authorization or "")
