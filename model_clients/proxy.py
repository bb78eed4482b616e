"""A local OpenAI-compatible proxy (chat, embeddings, models) in front of the cached LLM client and the
encoder, for third-party memories (Mem0, Graphiti) that bring their own ``openai`` client: their calls
are cached, counted, priced and replayable. Only the libraries it serves may spend through it: a
request without the proxy's random bearer token is answered 401 unread, a body over ``MAX_BODY_BYTES``
413 unread. JSON mode and tools travel upstream as given (keyed); a tool call or result in the history
is written into message text. ``rewrite`` may edit a body before it is keyed (a pinned "current date").
"""

from __future__ import annotations

import base64
import hmac
import json
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

import numpy as np

from model_clients.call_counts import Tally
from model_clients.chat_types import EXTRA_FIELDS, CacheMissError, ChatRequest, MissingAPIKeyError
from model_clients.kvstore import CacheDiskFull, CacheIntegrityError, stable_hash
from model_clients.llm_client import LLMClient
from model_clients.loopback import LoopbackServer, completion_json, read_body, send_json

JsonDict = dict[str, Any]
MAX_BODY_BYTES = 64 * 1024 * 1024  # a chat request of a million tokens is a few MB of JSON; past this, 413
DRAINED_BYTES = 1024 * 1024  # a refused request's body up to this size is read (and dropped), not more
PROXY_SCHEMA = 2  # part of every proxied request's template_hash (2: response_format and tools sent natively)


class ProxyError(ValueError):
    """A request the proxy cannot translate (answered with HTTP 400 and its message)."""


@dataclass(frozen=True)
class ProxyCounters:
    """Requests the proxy received (``chat_failures``: answered with an error); cache hits and
    requests sent upstream are the client's counters."""

    chat_requests: int = 0
    chat_failures: int = 0
    embedding_requests: int = 0
    embedded_texts: int = 0


def _text_of(content: Any) -> str:
    """A message content as text: a string, or the text parts of a list of content parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [str(part.get("text", "")) for part in content if isinstance(part, dict) and part.get("type") == "text"]
        if len(parts) != len(content):
            raise ProxyError("only text content parts are supported (no images or audio)")
        return "\n".join(parts)
    raise ProxyError(f"message content must be a string or a list of parts, got {type(content).__name__}")


def _messages(body: JsonDict) -> list[dict[str, str]]:
    raw = body.get("messages")
    if not isinstance(raw, list) or not raw:
        raise ProxyError("'messages' must be a non-empty list")
    out: list[dict[str, str]] = []
    for message in raw:
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise ProxyError(f"each message needs a string 'role', got {message!r}"[:300])
        role, text = message["role"], _text_of(message.get("content"))
        if role == "developer":
            role = "system"
        if role == "assistant" and message.get("tool_calls"):
            calls = [call.get("function", {}) for call in message["tool_calls"]]
            text = (text + "\n" if text else "") + json.dumps({"tool_calls": calls}, sort_keys=True)
        if role == "tool":  # a tool result, shown to a client that sends only role and text
            role, text = "user", f"Result of tool call {message.get('tool_call_id', '')}:\n{text}"
        out.append({"role": role, "content": text})
    return out


def chat_request_from_body(body: JsonDict) -> ChatRequest:
    """An OpenAI chat completions body as a cacheable :class:`ChatRequest`: the client's config
    decides the model; the body's sampling parameters override its defaults; ``n`` > 1 and
    streaming are refused."""
    if body.get("stream"):
        raise ProxyError("streaming is not supported by the caching proxy")
    if int(body.get("n") or 1) != 1:
        raise ProxyError("n > 1 is not supported by the caching proxy")
    messages = _messages(body)
    fmt = body.get("response_format")
    if fmt is not None and (not isinstance(fmt, dict) or fmt.get("type") not in ("text", "json_object", "json_schema")):
        raise ProxyError(f"unsupported response_format {fmt!r}"[:300])
    extra = {key: body[key] for key in EXTRA_FIELDS if body.get(key) is not None}
    max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
    return ChatRequest(
        messages=messages,
        extra=extra,
        template_hash=stable_hash({"proxy": PROXY_SCHEMA}),
        temperature=None if body.get("temperature") is None else float(body["temperature"]),
        seed=None if body.get("seed") is None else int(body["seed"]),
        max_tokens=None if max_tokens is None else int(max_tokens),
    )


class LLMProxy(LoopbackServer):
    """The OpenAI chat and embeddings API from ``client`` and ``encoder`` (``encode(texts) -> (n, d)``;
    None: embeddings answer 404). The client's failures (a cache miss under ``cache_only``, a missing
    key, an upstream error) are answered HTTP 400, which SDKs do not retry, and kept in ``errors``
    so the caller can raise them after the library swallowed them."""

    def __init__(self, client: LLMClient, encoder: Any | None = None, *,
                 rewrite: Callable[[JsonDict], JsonDict] | None = None) -> None:
        super().__init__(self._handle_post, self._handle_get, name="llm-proxy")
        self.client = client
        self.encoder = encoder
        self.rewrite = rewrite
        self.errors: list[str] = []
        self.token = secrets.token_urlsafe(32)  # the libraries' api_key; never a real credential
        # a bad cache entry, or a full disk under the cache: re-raised as itself (one line naming the file)
        self.integrity_error: CacheIntegrityError | CacheDiskFull | None = None
        self._tally = Tally(ProxyCounters)
        self._encode_lock = threading.Lock()

    @property
    def counters(self) -> ProxyCounters:
        return self._tally.snapshot()

    def raise_errors(self) -> None:
        """Raise the first failure the proxy answered, if any (the libraries may have swallowed it)."""
        if self.integrity_error is not None:  # one line naming the cache file and key, not a count
            raise self.integrity_error
        if self.errors:
            raise RuntimeError(f"{len(self.errors)} proxied model call(s) failed; first: {self.errors[0]}")

    def _authorised(self, handler: BaseHTTPRequestHandler) -> bool:
        """True when the request carries this proxy's token; else answered 401 from its headers alone
        (a stranger's 1.5 GB POST costs nothing) and the connection closed."""
        scheme, _, given = (handler.headers.get("Authorization") or "").partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), self.token.encode()):
            return True
        message = "this proxy serves only the libraries it was started for: send its token as the bearer api_key"
        _refuse(handler, 401, {"error": {"message": message, "type": "invalid_request_error", "code": "invalid_api_key"}})
        return False

    def _handle_get(self, handler: BaseHTTPRequestHandler) -> None:
        if not self._authorised(handler):
            return
        if handler.path.rstrip("/") == "/v1/models":
            model = self.client.config.model
            send_json(handler, 200, {"object": "list", "data": [{"id": model, "object": "model", "owned_by": "mempp"}]})
        else:
            send_json(handler, 404, _error(f"no route GET {handler.path}"))

    def _handle_post(self, handler: BaseHTTPRequestHandler) -> None:
        if not self._authorised(handler) or not _body_fits(handler):
            return
        try:
            body = read_body(handler)
            if not isinstance(body, dict):
                raise ProxyError("the request body must be a JSON object")
        except (json.JSONDecodeError, UnicodeDecodeError, ProxyError) as exc:
            send_json(handler, 400, _error(f"invalid request body: {exc}"))
            return
        route = handler.path.rstrip("/")
        try:
            if route == "/v1/chat/completions":
                status, payload = self._chat(body)
            elif route == "/v1/embeddings" and self.encoder is not None:
                status, payload = self._embeddings(body)
            else:
                status, payload = 404, _error(f"no route POST {handler.path}")
        except Exception as exc:  # answered, never crash the server thread
            if isinstance(exc, (CacheIntegrityError, CacheDiskFull)) and self.integrity_error is None:
                self.integrity_error = exc
            status, payload = 500, _error(f"proxy error: {type(exc).__name__}: {exc}")
            self.errors.append(payload["error"]["message"])
        send_json(handler, status, payload)

    def _chat(self, body: JsonDict) -> tuple[int, JsonDict]:
        self._tally.add(chat_requests=1)
        try:
            if self.rewrite is not None:
                body = self.rewrite(body)
            request = chat_request_from_body(body)
            result = self.client.complete(request)
        except CacheIntegrityError as exc:
            self.integrity_error = self.integrity_error or exc
            return self._failed(str(exc))
        except (ProxyError, ValueError, CacheMissError, MissingAPIKeyError) as exc:
            return self._failed(str(exc))
        if not result.ok:
            return self._failed(f"upstream call failed: {result.error}")
        calls = [dict(call) for call in result.tool_calls]
        return 200, completion_json(f"chatcmpl-{result.key[:24]}", self.client.config.model,
                                    result.text or None if calls else result.text, result.prompt_tokens,
                                    result.completion_tokens, result.finish_reason or ("tool_calls" if calls else "stop"),
                                    calls)

    def _failed(self, message: str) -> tuple[int, JsonDict]:
        self._tally.add(chat_failures=1)
        self.errors.append(message)
        return 400, _error(message)

    def _embeddings(self, body: JsonDict) -> tuple[int, JsonDict]:
        inputs = body.get("input")
        inputs = [inputs] if isinstance(inputs, str) else inputs
        if not isinstance(inputs, list) or not inputs or not all(isinstance(text, str) for text in inputs):
            return 400, _error("'input' must be a string or a non-empty list of strings (token ids are not supported)")
        dimension = int(getattr(self.encoder, "dimension", 0))
        wanted = body.get("dimensions")
        if wanted is not None and dimension and int(wanted) != dimension:
            return 400, _error(f"the proxy's encoder gives {dimension}-d vectors, {wanted} were asked for")
        self._tally.add(embedding_requests=1, embedded_texts=len(inputs))
        with self._encode_lock:  # one encoder, one caller at a time
            vectors = np.asarray(self.encoder.encode([text or " " for text in inputs]), dtype=np.float32)
        as_base64 = body.get("encoding_format") == "base64"
        data = [{"object": "embedding", "index": index,
                 "embedding": base64.b64encode(vector.astype("<f4").tobytes()).decode("ascii") if as_base64
                 else [float(x) for x in vector]} for index, vector in enumerate(vectors)]
        tokens = sum(len(text.split()) for text in inputs)
        identity = getattr(self.encoder, "identity", "encoder")
        return 200, {"object": "list", "data": data, "model": str(identity), "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}


def _refuse(handler: BaseHTTPRequestHandler, status: int, payload: JsonDict) -> None:
    """Answer ``status`` and close the connection; a body of at most ``DRAINED_BYTES`` is read and
    dropped first (a client that sent it whole then reads the answer cleanly), a longer one never."""
    declared = handler.headers.get("Content-Length") or "0"
    if declared.isdigit() and int(declared) <= DRAINED_BYTES:
        left = int(declared)
        while left > 0 and (chunk := handler.rfile.read(min(left, 1 << 16))):
            left -= len(chunk)
    handler.close_connection = True
    send_json(handler, status, payload, {"Connection": "close"})


def _body_fits(handler: BaseHTTPRequestHandler) -> bool:
    """True when the declared body is at most ``MAX_BODY_BYTES``; else answered 413 (400 for a length
    that is not a number) unread."""
    declared = handler.headers.get("Content-Length") or "0"
    if not declared.isdigit():
        _refuse(handler, 400, _error(f"invalid Content-Length {declared[:40]!r}"))
        return False
    if int(declared) > MAX_BODY_BYTES:
        _refuse(handler, 413, _error(f"request body of {int(declared):,} bytes; this proxy takes at most {MAX_BODY_BYTES:,}"))
        return False
    return True


def _error(message: str) -> JsonDict:
    return {"error": {"message": message, "type": "invalid_request_error", "code": None}}
