"""A local fake of Anthropic's Message Batches endpoints for tests (stdlib only).

``FakeAnthropicBatches`` serves, on 127.0.0.1 at a free port, in the published response shapes:

* ``POST /v1/messages/batches``: checks the body as the API documents it (1 to 100,000 requests;
  ``custom_id`` unique, 1-64 of ``[a-zA-Z0-9_-]``; ``params`` with ``model``, ``messages`` and a
  ``max_tokens`` of at least 1) and answers a ``message_batch`` object, ``in_progress``; a bad body
  gets a 400 ``invalid_request_error``;
* ``GET /v1/messages/batches/{id}``: the batch, ``in_progress`` for the first ``polls_in_progress``
  retrievals of it, ``ended`` after that (with its ``request_counts`` and ``results_url``);
* ``GET /v1/messages/batches/{id}/results``: the results as JSONL, one line per request.

What becomes of each request is scriptable: ``fate(custom_id, params)`` returns
:class:`Succeeded` (the default: ``answer_fn(params)`` as the text, ``end_turn``), :class:`Errored`
(an error type and message), :class:`Expired` or :class:`Canceled`. ``expire_all=True`` makes every
batch end with all its requests expired (a batch that ran out of its 24 hours).
``echo_authorization=True`` puts the received credential headers in every error message (a careless
server), to check that clients scrub them.

Every batch creation is recorded (``created``: body, headers, body size); retrievals and result
downloads are counted per batch id.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler
from typing import Any, Callable, Iterator

import pytest

from model_clients.chat_types import register_served_model
from tests.fake_openai_server import FAKE_MODEL
from model_clients.loopback import LoopbackServer, send_bytes, send_json

JsonDict = dict[str, Any]

MAX_REQUESTS = 100_000
CUSTOM_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
BATCHES_ROUTE = "/v1/messages/batches"


@dataclass(frozen=True)
class Succeeded:
    """The request succeeds: ``text`` (None: the server's ``answer_fn``) with ``stop_reason``;
    ``text=""`` gives a message with no content block at all."""

    text: str | None = None
    stop_reason: str = "end_turn"


@dataclass(frozen=True)
class Errored:
    """The request errors with an Anthropic error object of ``error_type``."""

    error_type: str = "invalid_request_error"
    message: str = "scripted error"


@dataclass(frozen=True)
class Expired:
    """The batch's 24 hours ended before the request ran."""


@dataclass(frozen=True)
class Canceled:
    """The batch was cancelled before the request ran."""


Fate = Succeeded | Errored | Expired | Canceled


@dataclass(frozen=True)
class ReceivedBatch:
    """A creation request as the fake saw it."""

    body: JsonDict
    headers: dict[str, str]
    size: int  # bytes of the request body

    @property
    def requests(self) -> list[JsonDict]:
        return list(self.body.get("requests") or [])


def _words(text: str) -> int:
    return len(text.split())


def default_answer(params: JsonDict) -> str:
    """A deterministic function of the params: echoes the last user message and the settings."""
    users = [str(m.get("content")) for m in params.get("messages", []) if m.get("role") == "user"]
    last_user = users[-1] if users else ""
    return (
        f"claude answer to <{last_user}> "
        f"[model={params.get('model')} t={params.get('temperature')} max_tokens={params.get('max_tokens')}]"
    )


def _timestamp(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


@dataclass
class _Batch:
    batch_id: str
    created_at: datetime
    lines: list[tuple[str, JsonDict, Fate]]
    retrievals: int = 0
    result_downloads: int = 0


@dataclass
class _State:
    created: list[ReceivedBatch] = field(default_factory=list)
    batches: dict[str, _Batch] = field(default_factory=dict)


def _error(kind: str, message: str) -> JsonDict:
    return {"type": "error", "error": {"type": kind, "message": message}}


class FakeAnthropicBatches(LoopbackServer):
    """Anthropic's Message Batches endpoints bound to 127.0.0.1 on a free port. ``base_url`` is the
    OpenAI-style ``http://127.0.0.1:PORT/v1`` a config names (the native root is without ``/v1``)."""

    def __init__(
        self,
        *,
        answer_fn: Callable[[JsonDict], str] = default_answer,
        fate: Callable[[str, JsonDict], Fate | None] | None = None,
        polls_in_progress: int = 0,
        expire_all: bool = False,
        echo_authorization: bool = False,
    ) -> None:
        self.answer_fn = answer_fn
        self.fate = fate
        self.polls_in_progress = polls_in_progress
        self.expire_all = expire_all
        self.echo_authorization = echo_authorization
        self._lock = threading.Lock()
        self._state = _State()
        super().__init__(self._handle_post, self._handle_get, name="fake-anthropic", poll_s=0.02)

    def start(self) -> "FakeAnthropicBatches":
        super().start()
        register_served_model(self.base_url, FAKE_MODEL)  # the same cache keys as the compatible fake's
        return self

    # ----------------------------------------------------------------- inspection
    @property
    def created(self) -> list[ReceivedBatch]:
        with self._lock:
            return list(self._state.created)

    def retrievals(self, batch_id: str) -> int:
        with self._lock:
            return self._state.batches[batch_id].retrievals

    def result_downloads(self, batch_id: str) -> int:
        with self._lock:
            return self._state.batches[batch_id].result_downloads

    # ----------------------------------------------------------------- serving
    def _handle_post(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        if handler.path.split("?")[0].rstrip("/") != BATCHES_ROUTE:
            send_json(handler, 404, _error("not_found_error", f"no route {handler.path}"))
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            send_json(handler, 400, _error("invalid_request_error", "the body is not JSON"))
            return
        headers = {name.lower(): value for name, value in handler.headers.items()}
        with self._lock:
            self._state.created.append(ReceivedBatch(body=body, headers=headers, size=len(raw)))
        problem = _invalid(body)
        if problem:
            send_json(handler, 400, _error("invalid_request_error", problem))
            return
        lines = [(r["custom_id"], r["params"], self._fate_of(r["custom_id"], r["params"])) for r in body["requests"]]
        with self._lock:
            batch = _Batch(f"msgbatch_fake{len(self._state.batches):04d}", datetime.now(timezone.utc), lines)
            self._state.batches[batch.batch_id] = batch
            payload = self._batch_object(batch, ended=False)
        send_json(handler, 200, payload)

    def _fate_of(self, custom_id: str, params: JsonDict) -> Fate:
        if self.expire_all:
            return Expired()
        fate = self.fate(custom_id, params) if self.fate is not None else None
        return fate if fate is not None else Succeeded()

    def _handle_get(self, handler: BaseHTTPRequestHandler) -> None:
        path = handler.path.split("?")[0].rstrip("/")
        match = re.fullmatch(rf"{BATCHES_ROUTE}/([^/]+)(/results)?", path)
        echoed = self._echo(handler)
        with self._lock:
            batch = self._state.batches.get(match.group(1)) if match else None
            if batch is None:
                payload, status = _error("not_found_error", f"no batch at {handler.path}{echoed}"), 404
            elif match is not None and match.group(2):
                if batch.retrievals <= self.polls_in_progress:
                    payload, status = _error("invalid_request_error", "the batch is still in progress"), 400
                else:
                    batch.result_downloads += 1
                    payload, status = None, 200
            else:
                batch.retrievals += 1
                payload, status = self._batch_object(batch, ended=batch.retrievals > self.polls_in_progress), 200
        if payload is not None:
            send_json(handler, status, payload)
            return
        jsonl = "".join(json.dumps(self._result_line(*entry)) + "\n" for entry in batch.lines)
        send_bytes(handler, 200, jsonl.encode("utf-8"), {"Content-Type": "application/binary"})

    def _echo(self, handler: BaseHTTPRequestHandler) -> str:
        if not self.echo_authorization:
            return ""
        headers = handler.headers
        return f" (received x-api-key={headers.get('x-api-key')} authorization={headers.get('authorization')})"

    def _batch_object(self, batch: _Batch, *, ended: bool) -> JsonDict:
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        names = {Succeeded: "succeeded", Errored: "errored", Canceled: "canceled", Expired: "expired"}
        for _, _, fate in batch.lines:
            counts[names[type(fate)] if ended else "processing"] += 1
        canceled = ended and counts["canceled"] > 0
        return {
            "id": batch.batch_id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": counts,
            "created_at": _timestamp(batch.created_at),
            "expires_at": _timestamp(batch.created_at + timedelta(hours=24)),
            "ended_at": _timestamp(datetime.now(timezone.utc)) if ended else None,
            "archived_at": None,
            "cancel_initiated_at": _timestamp(batch.created_at) if canceled else None,
            "results_url": f"http://127.0.0.1:{self.port}{BATCHES_ROUTE}/{batch.batch_id}/results" if ended else None,
        }

    def _result_line(self, custom_id: str, params: JsonDict, fate: Fate) -> JsonDict:
        if isinstance(fate, Errored):
            result: JsonDict = {"type": "errored", "error": _error(fate.error_type, fate.message)}
        elif isinstance(fate, Expired):
            result = {"type": "expired"}
        elif isinstance(fate, Canceled):
            result = {"type": "canceled"}
        else:
            text = self.answer_fn(params) if fate.text is None else fate.text
            prompt = [str(params.get("system", ""))] + [str(m.get("content", "")) for m in params.get("messages", [])]
            result = {
                "type": "succeeded",
                "message": {
                    "id": f"msg_fake_{custom_id[:12]}",
                    "type": "message",
                    "role": "assistant",
                    "model": params.get("model"),
                    "content": [{"type": "text", "text": text}] if text else [],
                    "stop_reason": fate.stop_reason,
                    "stop_sequence": None,
                    "usage": {"input_tokens": sum(_words(p) for p in prompt), "output_tokens": _words(text)},
                },
            }
        return {"custom_id": custom_id, "result": result}


def _invalid(body: Any) -> str | None:
    """Why a creation body breaks the documented rules, or None."""
    requests = body.get("requests") if isinstance(body, dict) else None
    if not isinstance(requests, list) or not 1 <= len(requests) <= MAX_REQUESTS:
        return f"requests: between 1 and {MAX_REQUESTS} items are required"
    seen: set[str] = set()
    for index, request in enumerate(requests):
        custom_id = request.get("custom_id") if isinstance(request, dict) else None
        if not isinstance(custom_id, str) or not CUSTOM_ID.fullmatch(custom_id):
            return f"requests.{index}.custom_id: 1-64 of letters, digits, _ and - are required"
        if custom_id in seen:
            return f"requests.{index}.custom_id: {custom_id} is not unique"
        seen.add(custom_id)
        params = request.get("params")
        if not isinstance(params, dict) or not params.get("model") or not params.get("messages"):
            return f"requests.{index}.params: model and messages are required"
        max_tokens = params.get("max_tokens")
        if not isinstance(max_tokens, int) or max_tokens < 1:
            return f"requests.{index}.params.max_tokens: an integer of at least 1 is required"
    return None


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropicBatches]:
    """A started FakeAnthropicBatches with the default answers; stopped after the test."""
    with FakeAnthropicBatches() as server:
        yield server
