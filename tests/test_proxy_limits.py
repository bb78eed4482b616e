"""The proxy answers a stranger before reading a byte of its body, and bounds every body (issue 31, item 7).

One 1.5 GB POST without the token took the proxy to 1.47 GB: it read the body whole to keep the
connection usable, then answered 401. Here the request's headers announce 1.5 GB; the 401 must come
back before any of the body is sent, and streaming 256 MiB after it must not grow the process.
"""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest

from model_clients.kvstore import KVStore
from model_clients.llm_client import LLMClient, LLMConfig
from model_clients.proxy import MAX_BODY_BYTES, LLMProxy

MIB = 1 << 20


def rss_bytes() -> int:
    with open("/proc/self/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


@pytest.fixture()
def proxy(tmp_path: Path):
    config = LLMConfig(model="m", base_url="http://127.0.0.1:9/v1", api_key_env=None, timeout_s=5, max_retries=0)
    with LLMProxy(LLMClient(config, KVStore(tmp_path / "llm.sqlite"))) as running:
        yield running


def _headers(proxy: LLMProxy, length: int, token: str | None) -> bytes:
    lines = ["POST /v1/chat/completions HTTP/1.1", f"Host: 127.0.0.1:{proxy.port}", "Content-Type: application/json",
             f"Content-Length: {length}"]
    if token is not None:
        lines.append(f"Authorization: Bearer {token}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii")


def _answer_before_the_body(proxy: LLMProxy, length: int, token: str | None) -> tuple[int, socket.socket]:
    """Send only the headers; the status line of the answer that comes back without the body."""
    conn = socket.create_connection(("127.0.0.1", proxy.port), timeout=5)
    conn.sendall(_headers(proxy, length, token))
    head = b""
    while b"\r\n" not in head:
        chunk = conn.recv(4096)  # a timeout here means the proxy waits for the body
        assert chunk, "the proxy closed without answering"
        head += chunk
    return int(head.split(b" ", 2)[1]), conn


def _stream(conn: socket.socket, total: int) -> int:
    """Send up to ``total`` bytes of body, 1 MiB at a time; how many were accepted before the proxy hung up."""
    sent, block = 0, b"0" * MIB
    try:
        while sent < total:
            conn.sendall(block)
            sent += len(block)
    except OSError:
        pass
    return sent


def test_a_stranger_gets_401_before_its_body_and_the_proxy_does_not_grow(proxy):
    status, conn = _answer_before_the_body(proxy, 1_500_000_000, None)
    assert status == 401
    before = rss_bytes()
    _stream(conn, 256 * MIB)
    conn.close()
    assert rss_bytes() - before < 32 * MIB  # the old proxy held every byte sent


def test_a_body_over_the_bound_gets_413_unread_even_with_the_token(proxy):
    status, conn = _answer_before_the_body(proxy, MAX_BODY_BYTES + 1, proxy.token)
    conn.close()
    assert status == 413


@pytest.mark.parametrize("length", ["-5", "12abc"])
def test_a_length_that_is_not_a_number_is_400(proxy, length):
    conn = socket.create_connection(("127.0.0.1", proxy.port), timeout=5)
    head = _headers(proxy, 0, proxy.token).replace(b"Content-Length: 0", f"Content-Length: {length}".encode())
    conn.sendall(head)
    assert conn.recv(4096).split(b" ", 2)[1] == b"400"
    conn.close()


def test_many_strangers_at_once_cost_nothing_either(proxy):
    """Eight concurrent 1.5 GB announcements: each answered 401 at once, the proxy still serves."""
    statuses: list[int] = []

    def stranger() -> None:
        status, conn = _answer_before_the_body(proxy, 1_500_000_000, "not-the-token")
        statuses.append(status)
        _stream(conn, 16 * MIB)
        conn.close()

    before = rss_bytes()
    threads = [threading.Thread(target=stranger) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert statuses == [401] * 8 and rss_bytes() - before < 32 * MIB
    status, conn = _answer_before_the_body(proxy, 1_500_000_000, None)
    conn.close()
    assert status == 401
