"""A stand-in OpenAI-compatible server for CI's smoke run (tests/fake_openai_server.py, no test extra needed):
models listed from ``--model``, a fixed short answer, half marks for each rubric id an OrgMemBench judge
prompt names, ``{"label": "CORRECT"}`` for other JSON requests. Plumbing only; runs until SIGTERM.

    python scripts/serve_fake_llm.py --model fake-llm --url-file /tmp/url
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.fake_openai_server import FakeOpenAIServer  # noqa: E402

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", help="a model id to list (repeatable; default fake-llm)")
    parser.add_argument("--url-file", type=Path, help="write the /v1 base URL here once serving")
    args = parser.parse_args(argv)
    server = FakeOpenAIServer(answer_fn=reply_text, models=tuple(args.model or ["fake-llm"]), serves=None).start()
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
