"""An HTTP/1.1 JSON server on 127.0.0.1 at a free port, serving from a daemon thread: the base of the
caching proxy (:mod:`model_clients.proxy`), CI's stand-in model and the tests' fake servers."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Handle = Callable[[BaseHTTPRequestHandler], None]


class _Listener(ThreadingHTTPServer):
    """A listen backlog that holds a client's burst of new connections (the standard library's 5
    reset some of 32 opened at once)."""

    request_queue_size = 128
    daemon_threads = True


class LoopbackServer:
    """``on_post(handler)`` / ``on_get(handler)`` answer each request (``on_get`` None: 501), while a
    ``with`` block (or ``start()`` / ``stop()``) lasts; a service subclasses it with its own handlers."""

    def __init__(self, on_post: Handle, on_get: Handle | None = None, *, name: str = "loopback",
                 poll_s: float = 0.05) -> None:
        self.on_post, self.on_get, self.name, self.poll_s = on_post, on_get, name, poll_s
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.last_port: int | None = None  # kept after stop()

    def start(self) -> Any:
        if self._httpd is not None:
            return self
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - keep stderr quiet
                return

            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                server.on_post(self)

            def do_GET(self) -> None:  # noqa: N802
                if server.on_get is None:
                    send_json(self, 501, {"error": {"message": "GET is not served", "type": "not_implemented"}})
                else:
                    server.on_get(self)

        self._httpd = _Listener(("127.0.0.1", 0), Handler)
        self.last_port = int(self._httpd.server_address[1])
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": self.poll_s},
                                        name=self.name, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None or self.last_port is None:
            raise RuntimeError(f"the {self.name} server is not running; start() it first")
        return self.last_port

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL (``/v1``)."""
        return url_of(self.port)


def url_of(port: int) -> str:
    return f"http://127.0.0.1:{port}/v1"


def read_body(handler: BaseHTTPRequestHandler) -> Any:
    """The request's JSON body (``{}`` when empty; ``json.JSONDecodeError`` when it is not JSON)."""
    length = int(handler.headers.get("Content-Length") or 0)
    return json.loads((handler.rfile.read(length) if length else b"") or b"{}")


def send_json(handler: BaseHTTPRequestHandler, status: int, payload: Any, headers: dict[str, str] | None = None) -> bool:
    return send_bytes(handler, status, json.dumps(payload).encode("utf-8"), headers)


def send_bytes(handler: BaseHTTPRequestHandler, status: int, data: bytes, headers: dict[str, str] | None = None) -> bool:
    """Answer with ``data`` as JSON content; False when the client had already gone."""
    try:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)
        handler.wfile.flush()
        return True
    except (BrokenPipeError, ConnectionResetError):
        return False


def completion_json(completion_id: str, model: str, text: str | None, prompt_tokens: int, completion_tokens: int,
                    finish_reason: str = "stop", tool_calls: list[Any] | None = None) -> dict[str, Any]:
    """A ``chat.completion`` reply as the OpenAI API sends it."""
    message = {"role": "assistant", "content": text, "refusal": None, **({"tool_calls": tool_calls} if tool_calls else {})}
    return {"id": completion_id, "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens}}
