"""The fault stage (one bad reply of each kind) and the key-leak search."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.fake_openai_server import Drop, EmptyChoices, Fail, Hang, Malformed, NullContent

from .suite import FAKE_KEY, KEY_ENV, ROOT, Suite, copy_cache


def faults(suite: Suite, warm: Path) -> list[list[str]]:
    from harness.compose import compose_config
    from harness.config import RunConfig
    from harness.runner import run

    os.environ[KEY_ENV] = FAKE_KEY
    cases = [
        ("malformed JSON body (200)", [Malformed()], None),
        ("empty choices (200)", [EmptyChoices()], None),
        ("content: null (200)", [NullContent()], None),
        ("429 with Retry-After: 1", [Fail(429, "rate limited", retry_after="1")], None),
        ("500", [Fail(500, "server error")], None),
        ("timeout (reply after 5 s, client waits 2 s)", [Hang(5.0)], None),
        ("connection reset", [Drop()], None),
        ("one question's reply always malformed", [], lambda body: Malformed() if "COO role" in json.dumps(body) else None),
    ]
    table = []
    for name, queued, rule in cases:
        cache = copy_cache(warm, suite.root / f"cache-fault-{len(table)}", ("embeddings.sqlite", "retrieval.sqlite"))
        before = len(suite.server.requests)
        suite.server.rule = rule
        suite.server.queue(*queued)
        try:
            config = RunConfig.from_dict(compose_config(suite.overrides(cache, "dataset.limit=3")))
            result = run(config)
            stats = result.stats
            outcome = (f"completed: {3 - stats['answer_failures']}/3 answers, "
                       f"{stats['judge_failures']} failed judge calls")
        except Exception as exc:  # the suite reports an aborted run; it must not happen
            outcome = f"ABORTED: {type(exc).__name__}: {str(exc)[:120]}"
        finally:
            suite.server.rule = None
        sent = len(suite.server.requests) - before
        table.append([name, str(sent), outcome])
    return table


# ---------------------------------------------------------------------------- key leaks
def key_leaks(suite: Suite) -> list[list[str]]:
    sent = sum(1 for r in suite.server.requests if r.authorization == f"Bearer {FAKE_KEY}")
    found = []
    for path in suite.root.rglob("*"):
        if path.is_file() and FAKE_KEY.encode() in path.read_bytes():
            found.append(str(path.relative_to(suite.root)))
    hydra_logs = ROOT / "outputs" / "hydra"
    for path in hydra_logs.rglob("*.log") if hydra_logs.exists() else []:
        if FAKE_KEY.encode() in path.read_bytes():
            found.append(str(path))
    found += ["console output" for text in suite.console if FAKE_KEY in text]
    return [[f"requests that carried the fake key: {sent}", "files searched under the run's folders and caches, "
             "Hydra logs, console output", f"{len(found)} leaks" + (f": {found[:5]}" if found else "")]]
