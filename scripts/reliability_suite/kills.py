"""The kill stage: ``run.py`` killed with SIGKILL in each stage, then resumed; what was kept and redone."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from tests.fake_openai_server import last_user_content

from .suite import Suite, copy_cache, kill9, rows, wait_for


def kills(suite: Suite) -> tuple[list[list[str]], Path]:
    table = []
    warm = suite.root / "cache-warm"
    # The embedding phase is timed on a cold run from its first stored slice to the run's end (model
    # loading before it is not embedding); the killed run is stopped halfway through that phase.
    proc = suite.spawn(suite.overrides(warm, answered=False))
    wait_for(lambda: rows(warm / "embeddings.sqlite") > 0, proc, "the first stored vectors")
    first_slice = time.monotonic()
    code, out, _ = suite.finish(proc)
    embedding_s = time.monotonic() - first_slice
    total = rows(warm / "embeddings.sqlite")
    assert code == 0, out

    cold = suite.root / "cache-killed-embedding"
    proc = suite.spawn(suite.overrides(cold, answered=False))
    wait_for(lambda: rows(cold / "embeddings.sqlite") > 0, proc, "the first stored vectors")
    time.sleep(embedding_s / 2)
    kill9(proc)
    kept = rows(cold / "embeddings.sqlite")
    code, out, _ = suite.run(suite.overrides(cold, answered=False))
    # metrics.json keeps the first run of a configuration; each run's own stats are history.jsonl's lines
    history = sorted((suite.root / "runs").rglob("history.jsonl"), key=os.path.getmtime)[-1]
    redone = json.loads(history.read_text().splitlines()[-1])
    embedded = redone["stats"]["embedded_texts"]
    table.append(["embedding (halfway from the first stored slice to the end)", f"{kept}/{total} vectors kept ({100 * kept / total:.0f}%)",
                  f"{embedded} texts embedded on resume; {max(0, embedded - (total - kept))} repeated",
                  "≤ 64 (one slice)", "ok" if code == 0 else f"rc {code}"])

    retrieval = copy_cache(warm, suite.root / "cache-killed-retrieval", ("embeddings.sqlite",))
    proc = suite.spawn(suite.overrides(retrieval, answered=False))
    wait_for(lambda: rows(retrieval / "retrieval.sqlite") >= 1, proc, "the first retrieval")
    kill9(proc)
    kept = rows(retrieval / "retrieval.sqlite")
    code, _, _ = suite.run(suite.overrides(retrieval, answered=False))
    table.append(["retrieval", f"{kept}/73 retrievals kept", f"{73 - kept} retrieved on resume; 0 repeated",
                  "0", "ok" if code == 0 and rows(retrieval / "retrieval.sqlite") == 73 else f"rc {code}"])

    for stage, is_stage in (("answering", lambda body: "answer to <" not in last_user_content(body)),
                            ("judging", lambda body: "answer to <" in last_user_content(body))):
        cache = copy_cache(warm, suite.root / f"cache-killed-{stage}", ("embeddings.sqlite", "retrieval.sqlite"))
        suite.server.answer_delay_s = lambda body: 0.3
        seen = len(suite.server.requests)
        args = suite.overrides(cache, "dataset.limit=20")
        proc = suite.spawn(args)
        wait_for(lambda: sum(is_stage(r.body) for r in suite.server.requests[seen:]) >= 6, proc, f"{stage} requests")
        in_flight = suite.server.in_flight
        kill9(proc)
        before = {json.dumps(r.body, sort_keys=True) for r in suite.server.requests[seen:]}
        cached = rows(cache / "llm.sqlite")
        suite.server.answer_delay_s = None
        resumed_from = len(suite.server.requests)
        code, _, _ = suite.run(args)
        again = [r for r in suite.server.requests[resumed_from:] if json.dumps(r.body, sort_keys=True) in before]
        table.append([stage, f"{cached} completions cached", f"{len(again)} requests repeated on resume",
                      f"{in_flight} in flight at the kill", "ok" if code == 0 and len(again) <= in_flight else f"rc {code}"])
    return table, warm
