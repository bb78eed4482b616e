"""A stand-in OpenAI-compatible server for smoke runs: stdlib only, on 127.0.0.1 at a free port.

CI's fresh-install phase (``.ci/run``) runs one answered and judged benchmark run against it in a
venv that holds nothing but ``pip install -e .``, so it imports nothing beyond the package's own
loopback server (``tests/fake_openai_server.py`` needs pytest and numpy). It serves

* ``GET /v1/models``: the ids given by ``--model`` (so the harness's model check passes);
* ``POST /v1/chat/completions``: a short fixed answer, or, for a judge prompt that asks for
  its rubric ids (OrgMemBench's rubric judge, official or our own wording), a JSON object giving
  each rubric id found in the prompt half marks, or for any other request that asks for JSON, ``{"label": "CORRECT"}``.

Its answers exercise the plumbing only; they grade nothing. Usage::

    python scripts/serve_fake_llm.py --model fake-llm --url-file /tmp/url   # runs until SIGTERM / Ctrl-C
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from model_clients.loopback import LoopbackServer, read_body, send_json  # noqa: E402

ANSWER = "The evidence does not say."
_RUBRIC_ID = re.compile(r"\b(C\d+\.sub\d+)\b")  # OrgMemBench's rubric ids: C1.sub1, C1.sub2, ...


def _prompt(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content", "")) for m in body.get("messages", []) if isinstance(m, dict))


def reply_text(body: dict[str, Any]) -> str:
    """What the fake model says to one chat request."""
    prompt = _prompt(body)
    ids = dict.fromkeys(_RUBRIC_ID.findall(prompt))
    if ids and ("subpoint_scores" in prompt or "facet ids" in prompt):  # the official or our own rubric judge
        return json.dumps({"subpoint_scores": {i: 0.5 for i in ids}, "rationale": "fake judge"})
    if (body.get("response_format") or {}).get("type") in ("json_object", "json_schema") or "JSON" in prompt[-400:]:
        return json.dumps({"label": "CORRECT", "reasoning": "fake judge"})
    return ANSWER


def _completion(body: dict[str, Any], text: str, number: int) -> dict[str, Any]:
    prompt_tokens = max(1, len(_prompt(body).split()))
    completion_tokens = max(1, len(text.split()))
    return {
        "id": f"chatcmpl-fake-{number}", "object": "chat.completion", "created": int(time.time()),
        "model": body.get("model", "unknown"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


def make_server(models: list[str]) -> LoopbackServer:
    count = {"n": 0}
    lock = threading.Lock()

    def on_get(handler: BaseHTTPRequestHandler) -> None:
        if handler.path.rstrip("/").endswith("/models"):
            send_json(handler, 200, {"object": "list", "data": [{"id": m, "object": "model", "owned_by": "fake"} for m in models]})
        else:
            send_json(handler, 404, {"error": {"message": "not found", "type": "not_found"}})

    def on_post(handler: BaseHTTPRequestHandler) -> None:
        try:
            body = read_body(handler)
        except json.JSONDecodeError:
            send_json(handler, 400, {"error": {"message": "the body is not JSON", "type": "invalid_request_error"}})
            return
        if not handler.path.rstrip("/").endswith("/chat/completions"):
            send_json(handler, 404, {"error": {"message": f"{handler.path} is not served", "type": "not_found"}})
            return
        with lock:
            count["n"] += 1
            number = count["n"]
        send_json(handler, 200, _completion(body, reply_text(body), number))

    return LoopbackServer(on_post, on_get, name="fake-llm")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", default=None, help="a model id to list (repeatable; default fake-llm)")
    parser.add_argument("--url-file", type=Path, default=None, help="write the /v1 base URL here once serving")
    args = parser.parse_args(argv)
    server = make_server(args.model or ["fake-llm"]).start()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    if args.url_file is not None:
        args.url_file.write_text(server.base_url + "\n", encoding="utf-8")
    print(server.base_url, flush=True)
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
