"""An HTTP/1.1 JSON server on 127.0.0.1 at a free port, serving from a daemon thread.

The caching proxy (:mod:`model_clients.proxy`) and the tests' fake OpenAI server both serve
through it: they give the POST (and optionally GET) handler, it owns the socket and the thread.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["LoopbackServer", "ServedOnLoopback", "read_body", "send_bytes", "send_json"]

Handle = Callable[[BaseHTTPRequestHandler], None]


class _Listener(ThreadingHTTPServer):
    """A threading HTTP server whose listen backlog holds a client's burst of new connections (the
    standard library's 5 reset some of 32 opened at once)."""

    request_queue_size = 128


class LoopbackServer:
    """``on_post(handler)`` / ``on_get(handler)`` answer each request (``on_get`` None: 501)."""

    def __init__(self, on_post: Handle, on_get: Handle | None = None, *, name: str = "loopback", poll_s: float = 0.05) -> None:
        self.on_post = on_post
        self.on_get = on_get
        self.name = name
        self.poll_s = poll_s
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.last_port: int | None = None  # kept after stop()

    def start(self) -> "LoopbackServer":
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
        self._httpd.daemon_threads = True
        self.last_port = int(self._httpd.server_address[1])
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": self.poll_s}, name=self.name, daemon=True
        )
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

    @property
    def running(self) -> bool:
        return self._httpd is not None

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


class ServedOnLoopback:
    """Lifecycle of a service that owns a :class:`LoopbackServer` as ``self._server``: ``start()`` /
    ``stop()``, or a ``with`` block; ``port`` and ``base_url`` while it runs."""

    _server: LoopbackServer

    def start(self):  # type: ignore[no-untyped-def] - returns self, whatever the subclass
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    def __enter__(self):  # type: ignore[no-untyped-def]
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        return self._server.port

    @property
    def base_url(self) -> str:
        return self._server.base_url


def read_body(handler: BaseHTTPRequestHandler, *, parse: bool = True) -> Any:
    """The request's JSON body (``{}`` when empty); raises ``json.JSONDecodeError`` when it is not JSON.
    ``parse=False`` only reads it (a refused request's body, so the connection can be reused)."""
    length = int(handler.headers.get("Content-Length") or 0)
    raw = handler.rfile.read(length) if length else b""
    return json.loads(raw or b"{}") if parse else None


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
