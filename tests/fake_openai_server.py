"""A small local OpenAI-compatible chat and embeddings server for tests (stdlib and numpy only).

``FakeOpenAIServer`` serves ``POST /v1/chat/completions`` and ``POST /v1/embeddings`` on 127.0.0.1
at a free port, in a background thread, and answers with real ``chat.completion`` and embedding
list JSON bodies (with ``usage``). Embeddings are hashed bags of lower-case words (texts sharing
words are near), as floats or base64 as the request asks. Its behaviour is scriptable:

* ``answer_fn(body) -> str`` decides the answer text from the request body (deterministic default);
  when the request offers ``tools`` and the text is ``{"tool_calls": [{"name", "arguments"}]}``,
  the reply carries them as native ``tool_calls``;
* ``rule(body) -> Action | None`` lets a test pick an action for particular requests
  (e.g. a permanent 400 for one message, whatever the order a concurrent batch arrives in);
* ``queue(*actions)`` appends one-shot actions consumed by the next requests, in arrival order
  (``Fail(429)``, ``Fail(500)``, ``Hang(2.0)`` for a client timeout, ``Drop()`` to close the
  connection without an answer, and 200 replies of a broken shape: ``Malformed()`` (a body that is
  not JSON), ``EmptyChoices()``, ``NullContent()``);
* ``fail_after(n)`` makes every request after the first ``n`` successful ones fail hard.
* ``models=("a", "b")`` serves ``GET /v1/models`` listing those ids (None: that route answers 404,
  like a server that does not list its models); ``reject_unknown_models=True`` answers 404
  ``model_not_found`` to a chat or embeddings request naming any other model, as real servers do.

Every POST request is recorded (``requests``, ``request_count``, ``max_in_flight``); model-list
requests are counted apart (``model_list_requests``).

Answers for libraries that ask for structured output (schema-valid JSON, tool calls) are built by
``tests/schema_fixtures.py``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, Callable, Iterator

import numpy as np

try:
    import pytest
except ImportError:  # scripts/serve_fake_llm.py serves it in an install without the test extra
    pytest = None  # type: ignore[assignment]

from model_clients.chat_types import forget_served_model, register_served_model
from model_clients.loopback import LoopbackServer, completion_json, send_bytes, send_json, url_of

# What every fake says it serves (model_clients.chat_types.register_served_model): the fakes answer by
# the same rules, so the cache keys of a request are the same on every fake, whatever its free port,
# as the keys of one model on one server are. serves=None makes a fake an unregistered local server,
# keyed by its port.
FAKE_MODEL = "tests.fake_openai_server"

JsonDict = dict[str, Any]


@dataclass(frozen=True)
class Fail:
    """Answer with an HTTP error status (``retry_after`` sets the Retry-After header, in seconds)."""

    status: int
    message: str = "scripted failure"
    retry_after: str | None = None
    echo_authorization: bool = False  # put the received Authorization header in the message (like a careless server)


@dataclass(frozen=True)
class Hang:
    """Wait ``seconds`` before answering normally (or until the server stops)."""

    seconds: float


@dataclass(frozen=True)
class Drop:
    """Close the connection without sending any response (a connection error for the client)."""


@dataclass(frozen=True)
class Malformed:
    """Answer 200 with a body that is not valid JSON (a truncated completion)."""

    body: bytes = b'{"id": "chatcmpl-broken", "object": "chat.completion", "choices": [{"index": 0, "mess'


@dataclass(frozen=True)
class EmptyChoices:
    """Answer 200 with a well-formed completion whose ``choices`` list is empty."""


@dataclass(frozen=True)
class NullContent:
    """Answer 200 with a completion whose message ``content`` is null."""


Action = Fail | Hang | Drop | Malformed | EmptyChoices | NullContent


@dataclass(frozen=True)
class ReceivedRequest:
    """What the server saw: the JSON body and the Authorization header."""

    body: JsonDict
    authorization: str | None

    @property
    def last_user_content(self) -> str:
        return last_user_content(self.body)


def last_user_content(body: JsonDict) -> str:
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "user":
            return str(message.get("content", ""))
    return ""


def default_answer(body: JsonDict) -> str:
    """A deterministic function of the request: echoes the last user message and the parameters."""
    return (
        f"answer to <{last_user_content(body)}> "
        f"[model={body.get('model')} t={body.get('temperature')} seed={body.get('seed')}]"
    )


def bag_of_words_vector(text: str, dimensions: int) -> np.ndarray:
    """A deterministic stand-in embedding: each lower-case word adds 1 to a hashed coordinate."""
    vector = np.zeros(dimensions, dtype=np.float32)
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        vector[int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "little") % dimensions] += 1.0
    return vector


def _message(text: str, body: JsonDict) -> JsonDict:
    """The reply message: native ``tool_calls`` when the request offered tools and the answer text is
    ``{"tool_calls": [{"name": ..., "arguments": {...}}]}`` naming one of them, else plain text."""
    names = {tool.get("function", {}).get("name") for tool in body.get("tools") or []}
    try:
        calls = json.loads(text).get("tool_calls") if names else None
    except (json.JSONDecodeError, AttributeError):
        calls = None
    if not isinstance(calls, list) or not calls or any(not isinstance(c, dict) or c.get("name") not in names for c in calls):
        return {"role": "assistant", "content": text, "refusal": None}
    return {
        "role": "assistant",
        "content": None,
        "refusal": None,
        "tool_calls": [
            {"id": f"call_fake_{index}", "type": "function",
             "function": {"name": call["name"], "arguments": json.dumps(call.get("arguments") or {})}}
            for index, call in enumerate(calls)
        ],
    }


def _count_words(text: str) -> int:
    return len(text.split())


def chat_completion(body: JsonDict, text: str, completion_id: str) -> JsonDict:
    """The ``chat.completion`` reply carrying ``text`` for a request ``body`` (tokens: words), as the
    live route sends it and as the batch fake writes it in an output file."""
    prompt_tokens = sum(_count_words(str(m.get("content", ""))) for m in body.get("messages", []))
    message = _message(text, body)
    calls = message.get("tool_calls")
    return completion_json(completion_id, body.get("model", "unknown"), message["content"], prompt_tokens,
                           _count_words(text), "tool_calls" if calls else "stop", calls)


@dataclass
class _State:
    requests: list[ReceivedRequest] = field(default_factory=list)
    script: deque[Action] = field(default_factory=deque)
    successes: int = 0
    fail_after: int | None = None
    in_flight: int = 0
    max_in_flight: int = 0


class FakeOpenAIServer(LoopbackServer):
    """An OpenAI-compatible chat completions server bound to 127.0.0.1 on a free port."""

    def __init__(
        self,
        answer_fn: Callable[[JsonDict], str] = default_answer,
        rule: Callable[[JsonDict], Action | None] | None = None,
        answer_delay_s: Callable[[JsonDict], float] | None = None,
        embedding_dimensions: int = 64,
        models: tuple[str, ...] | None = None,
        reject_unknown_models: bool = False,
        serves: str | None = FAKE_MODEL,
    ) -> None:
        self.answer_fn = answer_fn
        self.serves = serves
        self.models = models
        self.reject_unknown_models = reject_unknown_models
        self._model_list_requests = 0
        self.embedding_dimensions = embedding_dimensions  # when a request does not name dimensions
        self.rule = rule
        self.answer_delay_s = answer_delay_s
        self._lock = threading.Lock()
        self._state = _State()
        self._stopping = threading.Event()
        super().__init__(self._handle, self._handle_get, name="fake-openai", poll_s=0.02)

    # ----------------------------------------------------------------- lifecycle
    def start(self) -> "FakeOpenAIServer":
        super().start()
        if self.serves:  # kept after stop(): a test may replay a stopped fake's replies from the cache
            register_served_model(self.base_url, self.serves)
        else:  # this port may have been an earlier fake's
            forget_served_model(self.base_url)
        return self

    def stop(self) -> None:
        self._stopping.set()  # a scripted Hang ends at once
        super().stop()

    @property
    def port(self) -> int:
        """Also after stop(): a test may build a client for a server it stopped (cache-only replays)."""
        if self.last_port is None:
            raise RuntimeError("the fake server was never started")
        return self.last_port

    @property
    def base_url(self) -> str:
        return url_of(self.port)

    # ----------------------------------------------------------------- scripting
    def queue(self, *actions: Action) -> None:
        with self._lock:
            self._state.script.extend(actions)

    def fail_after(self, successes: int | None) -> None:
        """After ``successes`` successful answers, every request fails hard (connection dropped)."""
        with self._lock:
            self._state.fail_after = successes

    # ----------------------------------------------------------------- inspection
    @property
    def requests(self) -> list[ReceivedRequest]:
        with self._lock:
            return list(self._state.requests)

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self._state.requests)

    @property
    def model_list_requests(self) -> int:
        with self._lock:
            return self._model_list_requests

    @property
    def success_count(self) -> int:
        with self._lock:
            return self._state.successes

    @property
    def in_flight(self) -> int:
        with self._lock:
            return self._state.in_flight

    @property
    def max_in_flight(self) -> int:
        with self._lock:
            return self._state.max_in_flight

    # ----------------------------------------------------------------- serving
    def _handle_get(self, handler: BaseHTTPRequestHandler) -> None:
        if handler.path.rstrip("/") != "/v1/models" or self.models is None:
            send_json(handler, 404, {"error": {"message": f"no route {handler.path}", "type": "not_found"}})
            return
        with self._lock:
            self._model_list_requests += 1
        send_json(handler, 200, {"object": "list", "data": [
            {"id": model, "object": "model", "created": 0, "owned_by": "fake"} for model in self.models]})

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        route = handler.path.rstrip("/")
        if route not in ("/v1/chat/completions", "/v1/embeddings"):
            send_json(handler, 404, {"error": {"message": f"no route {handler.path}", "type": "not_found"}})
            return
        try:
            body: JsonDict = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            send_json(handler, 400, {"error": {"message": "invalid JSON", "type": "invalid_request_error"}})
            return
        authorization = handler.headers.get("Authorization")

        with self._lock:
            state = self._state
            state.requests.append(ReceivedRequest(body=body, authorization=authorization))
            state.in_flight += 1
            state.max_in_flight = max(state.max_in_flight, state.in_flight)
            action: Action | None = state.script.popleft() if state.script else None
            hard_fail = state.fail_after is not None and state.successes >= state.fail_after
        try:
            if action is None and self.rule is not None:
                action = self.rule(body)
            if hard_fail:
                action = Drop()
            if action is None and self.reject_unknown_models and body.get("model") not in (self.models or ()):
                send_json(handler, 404, {"error": {"message": f"The model `{body.get('model')}` does not exist",
                                                   "type": "invalid_request_error", "code": "model_not_found"}})
                return
            if isinstance(action, Drop):
                handler.close_connection = True
                try:
                    handler.connection.shutdown(2)  # socket.SHUT_RDWR: the client sees a dropped connection
                except OSError:
                    pass
                return
            if isinstance(action, Fail):
                message = action.message
                if action.echo_authorization:
                    message = f"{message}: received {authorization}"
                headers = {"Retry-After": action.retry_after} if action.retry_after is not None else {}
                send_json(
                    handler,
                    action.status,
                    {"error": {"message": message, "type": "scripted_error", "code": str(action.status)}},
                    headers,
                )
                return
            if isinstance(action, Malformed):
                send_bytes(handler, 200, action.body)
                return
            if isinstance(action, Hang):
                self._stopping.wait(action.seconds)
            if self.answer_delay_s is not None:
                self._stopping.wait(self.answer_delay_s(body))
            if route == "/v1/embeddings":
                payload = self._embeddings(body)
                if send_json(handler, 200 if "data" in payload else 400, payload) and "data" in payload:
                    with self._lock:
                        self._state.successes += 1
                return
            payload = chat_completion(body, self.answer_fn(body), f"chatcmpl-fake-{len(self.requests)}")
            if isinstance(action, EmptyChoices):
                payload["choices"] = []
            elif isinstance(action, NullContent) and not payload["choices"][0]["message"].get("tool_calls"):
                payload["choices"][0]["message"]["content"] = None
                payload["choices"][0]["finish_reason"] = "length"
            if send_json(handler, 200, payload) and not isinstance(action, (EmptyChoices, NullContent)):
                with self._lock:
                    self._state.successes += 1
        finally:
            with self._lock:
                self._state.in_flight -= 1

    def _embeddings(self, body: JsonDict) -> JsonDict:
        inputs = body.get("input")
        inputs = [inputs] if isinstance(inputs, str) else inputs
        if not isinstance(inputs, list) or not inputs or any(not isinstance(t, str) or not t for t in inputs):
            return {"error": {"message": "input must be a non-empty string or list of them", "type": "invalid_request_error"}}
        dimensions = int(body.get("dimensions") or self.embedding_dimensions)
        data = []
        for index, text in enumerate(inputs):
            vector = bag_of_words_vector(text, dimensions)
            encoded: Any = (
                base64.b64encode(vector.astype("<f4").tobytes()).decode("ascii")
                if body.get("encoding_format") == "base64"
                else vector.tolist()
            )
            data.append({"object": "embedding", "index": index, "embedding": encoded})
        tokens = sum(_count_words(text) for text in inputs)
        return {
            "object": "list",
            "data": data,
            "model": body.get("model", "unknown"),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }


def fake_server() -> Iterator[FakeOpenAIServer]:
    """A started FakeOpenAIServer with the default answers; stopped after the test (a fixture)."""
    server = FakeOpenAIServer().start()
    try:
        yield server
    finally:
        server.stop()


if pytest is not None:
    fake_server = pytest.fixture(fake_server)
