"""A stand-in OpenAI-compatible server for CI's smoke run (stdlib and the package's loopback server only):
models listed from ``--model``, a fixed short answer, half marks for each rubric id an OrgMemBench judge
prompt names, ``{"label": "CORRECT"}`` for other JSON requests. Plumbing only; runs until SIGTERM.

    python scripts/serve_fake_llm.py --model fake-llm --url-file /tmp/url
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from model_clients.loopback import LoopbackServer, completion_json, read_body, send_json  # noqa: E402

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


def make_server(models: list[str]) -> LoopbackServer:
    numbers = itertools.count(1)  # next() on it is atomic under the GIL

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
        text = reply_text(body)
        send_json(handler, 200, completion_json(f"chatcmpl-fake-{next(numbers)}", body.get("model", "unknown"), text,
                                                max(1, len(_prompt(body).split())), max(1, len(text.split()))))

    return LoopbackServer(on_post, on_get, name="fake-llm")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", help="a model id to list (repeatable; default fake-llm)")
    parser.add_argument("--url-file", type=Path, help="write the /v1 base URL here once serving")
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
    server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
