"""The stages run against the local fault-injecting server: kills and resume, one bad reply of each
kind, bad inputs through ``run.py``, and the search for the fake key."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

from tests.fake_openai_server import Drop, EmptyChoices, Fail, Hang, Malformed, NullContent, last_user_content

from .common import FAKE_KEY, KEY_ENV, ROOT, Suite, copy_cache, kill9, rows, wait_for


def kills(suite: Suite) -> list[list[str]]:
    """Rows of the kill stage; its complete cold run's cache becomes ``suite.warm`` for the later stages."""
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
    suite.warm = warm

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
    # every question's ranking and its gold-rank diagnosis: two entries per question (73 questions)
    entries = rows(warm / "retrieval.sqlite")
    table.append(["retrieval", f"{kept}/{entries} retrieval entries kept", f"{entries - kept} computed on resume; 0 repeated",
                  "0", "ok" if code == 0 and rows(retrieval / "retrieval.sqlite") == entries else f"rc {code}"])

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
    return table


def faults(suite: Suite) -> list[list[str]]:
    from scripts.script_common import run_with

    if suite.warm is None:
        raise RuntimeError("no warm cache: the kill stage failed")

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
        cache = copy_cache(suite.warm, suite.root / f"cache-fault-{len(table)}", ("embeddings.sqlite", "retrieval.sqlite"))
        before = len(suite.server.requests)
        suite.server.rule = rule
        suite.server.queue(*queued)
        try:
            stats = run_with(*suite.overrides(cache, "dataset.limit=3")).stats
            outcome = (f"completed: {3 - stats['answer_failures']}/3 answers, "
                       f"{stats['judge_failures']} failed judge calls")
        except Exception as exc:  # the suite reports an aborted run; it must not happen
            outcome = f"ABORTED: {type(exc).__name__}: {str(exc)[:120]}"
        finally:
            suite.server.rule = None
        sent = len(suite.server.requests) - before
        table.append([name, str(sent), outcome])
    return table


def key_leaks(suite: Suite) -> list[list[str]]:
    sent = sum(1 for r in suite.server.requests if r.authorization == f"Bearer {FAKE_KEY}")
    hydra_logs = ROOT / "outputs" / "hydra"
    files = [p for p in suite.root.rglob("*") if p.is_file()] + list(hydra_logs.rglob("*.log"))
    found = [str(p.relative_to(suite.root) if p.is_relative_to(suite.root) else p) for p in files
             if FAKE_KEY.encode() in p.read_bytes()]
    found += ["console output" for text in suite.console if FAKE_KEY in text]
    return [[f"requests that carried the fake key: {sent}", "files searched under the run's folders and caches, "
             "Hydra logs, console output", f"{len(found)} leaks" + (f": {found[:5]}" if found else "")]]


def broken_data(root: Path, data_dir: Path) -> dict[str, Path]:
    source = data_dir / "orgmembench"
    made = {}
    for name in ("benchmark_v0.0.jsonl", "corpus_index.jsonl"):
        folder = root / f"data-empty-{name}"
        shutil.copytree(source, folder / "orgmembench")
        (folder / "orgmembench" / "datasets" / "helix" / "medium" / name).write_text("")
        made[name] = folder
    huge = root / "data-huge-date" / "locomo"
    huge.mkdir(parents=True)
    conversation = {"speaker_a": "A", "speaker_b": "B", "session_1_date_time": "9" * 5_000_000,
                    "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}]}
    (huge / "locomo10.json").write_text(json.dumps([{"sample_id": "conv-1", "conversation": conversation, "qa": []}]))
    made["huge date"] = huge.parent
    return made


def bad_inputs(suite: Suite) -> list[list[str]]:
    data = broken_data(suite.root, suite.data_dir)
    cases = [
        ("system.gamma=0", ["system.gamma=0"]),
        ("system.gamma=-0.5", ["system.gamma=-0.5"]),
        ("all leg weights 0", ["system.weights={lexical:0,tag:0,vector:0}"]),
        ("unknown leg in weights", ["system.weights={lexical:1,tag:1,vectr:4}"]),
        ("answerer=openai_compatible, no model", ["answerer=openai_compatible"]),
        ("answerer=openai_compatible, no base_url", ["answerer=openai_compatible", "answerer.model=m"]),
        ("missing prompt_file", ["answerer=gpt-4.1-mini", "answerer.prompt_file=/no/such.txt"]),
        ("system.k=abc", ["system.k=abc"]),
        ("recency_reserve > k", ["system.k=5", "system.recency_reserve=6"]),
        ("empty benchmark_v0.0.jsonl", [f"dataset.data_dir={data['benchmark_v0.0.jsonl']}"]),
        ("empty corpus_index.jsonl", [f"dataset.data_dir={data['corpus_index.jsonl']}"]),
        ("a 5 MB date field (LoCoMo)", ["dataset=locomo", f"dataset.data_dir={data['huge date']}"]),
    ]
    table = []
    cache = suite.root / "cache-bad"
    for name, extra in cases:
        code, out, err = suite.run([*suite.overrides(cache, answered=False), *extra])
        lines = [line for line in err.strip().splitlines() if line.startswith("error:")]
        shown = lines[-1] if lines else err.strip()[-200:]
        verdict = "refused" if code == 2 and len(lines) == 1 and "Traceback" not in err + out else "NOT REFUSED CLEANLY"
        table.append([name, str(code), verdict, f"`{shown[:160]}`" + (f" ({len(shown)} chars)" if len(shown) > 160 else "")])
    return table
