"""The reliability suite: kills, faults, bad inputs and key leaks, measured and printed as tables.

    python scripts/reliability.py                 # prints the tables (a few minutes on 2 cores)
    python scripts/reliability.py --write         # also writes its part of results/RELIABILITY.md
    python scripts/reliability.py --data-dir D    # the benchmark data (default: as run.py finds it,
                                                  # $MEMPP_DATA_DIR first)

Each stage's table is printed as soon as it is measured, and with ``--write`` stored at once, so a
crash in a later stage loses nothing measured before it; a stage that fails becomes one row saying
so. ``--write`` replaces only the part of RESULTS between this script's markers (the sections other
scripts measured stay). The scratch folder is removed however the script ends.

Everything runs against a local fault-injecting OpenAI-compatible server (tests/fake_openai_server.py)
on OrgMemBench with a throwaway cache, never a real endpoint; its answers are fixtures, not scores.

* Kills: ``python run.py`` is killed with SIGKILL during embedding (halfway through a cold run's
  embedding phase, timed from its first stored slice), retrieval, answering and judging, then re-run; the table gives what was kept and the
  requests sent again on resume against those in flight at the kill.
* Faults: one bad reply of each kind (malformed JSON, empty choices, null content, 429 with
  Retry-After, 500, a timeout, a connection reset) and one question whose reply is always broken.
* Bad inputs: each meaningless setting and each broken data file; exit code and the one line shown.
* Key leaks: a fake key is sent to the server; run folders, caches, logs and console output are
  searched for it.
* Issue 23's hostile cases: cache bit-rot and hostile data files (the tests that run the harness on
  each), the embedded Postgres probe (root), and history, full disk, tables, sweeps, proxy and keys
  (``scripts/hostile_cases.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from harness.safe_write import atomic_write  # noqa: E402
from loaders.datadir import resolve_data_dir  # noqa: E402

from tests.fake_openai_server import (  # noqa: E402
    Drop, EmptyChoices, Fail, FakeOpenAIServer, Hang, Malformed, NullContent, last_user_content,
)

FAKE_KEY = "sk-reliability-FAKE-7c1d9e5b3a2f4e6d8c0b"
KEY_ENV = "MEMPP_RELIABILITY_KEY"
GUARD_S = 1800  # hang guard for one subprocess
RELIABILITY_MD = ROOT / "results" / "RELIABILITY.md"
BEGIN, END = "<!-- scripts/reliability.py: begin -->", "<!-- scripts/reliability.py: end -->"


@dataclass
class Suite:
    root: Path
    server: FakeOpenAIServer
    data_dir: Path
    console: list[str] = field(default_factory=list)

    def overrides(self, cache: Path, *extra: str, answered: bool = True) -> list[str]:
        base = [f"store.cache_dir={cache}", f"store.results_dir={self.root / 'runs'}", "progress=false"]
        if answered:
            url = self.server.base_url
            base += [
                "answerer=openai_compatible", "answerer.model=fake-answerer", f"answerer.base_url={url}",
                f"answerer.api_key_env={KEY_ENV}", "answerer.concurrency=2", "answerer.timeout_s=2",
                "judge.model=fake-judge", f"judge.base_url={url}", f"judge.api_key_env={KEY_ENV}",
                "judge.runs=1", "judge.concurrency=2", "judge.timeout_s=2",
            ]
        return base + list(extra)

    def spawn(self, args: list[str]) -> subprocess.Popen:
        env = {**os.environ, KEY_ENV: FAKE_KEY, "PYTHONPATH": str(ROOT), "MEMPP_DATA_DIR": str(self.data_dir)}
        return subprocess.Popen([sys.executable, "run.py", *args], cwd=ROOT, env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def finish(self, proc: subprocess.Popen) -> tuple[int, str, str]:
        out, err = proc.communicate(timeout=GUARD_S)
        self.console += [out, err]
        return proc.returncode, out, err

    def run(self, args: list[str]) -> tuple[int, str, str]:
        return self.finish(self.spawn(args))


def rows(path: Path) -> int:
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=60) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM kv").fetchone()[0])
    except sqlite3.OperationalError:  # the file exists, its table not yet (a run just starting)
        return 0


def wait_for(predicate, proc: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + GUARD_S
    while not predicate():
        if proc.poll() is not None:
            raise RuntimeError(f"the run ended before {what}: {proc.stderr.read()[-500:] if proc.stderr else ''}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"gave up waiting for {what}")
        time.sleep(0.05)


def kill9(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)


def copy_cache(source: Path, target: Path, names: tuple[str, ...]) -> Path:
    target.mkdir(parents=True, exist_ok=True)
    for name in names:
        for path in source.glob(f"{name}*"):
            shutil.copy2(path, target / path.name)
    return target


# ---------------------------------------------------------------------------- kills
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


# ---------------------------------------------------------------------------- faults
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


# ---------------------------------------------------------------------------- bad inputs
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


# ---------------------------------------------------------------------------- issue 23's hostile cases
def _script_output(args: list[str], data_dir: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MEMPP_DATA_DIR": str(data_dir)}
    proc = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, text=True, capture_output=True, timeout=GUARD_S)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} exited {proc.returncode}: {(proc.stderr or proc.stdout).strip()[-200:]}")
    return proc.stdout


def hostile_cases(data_dir: Path) -> list[list[str]]:
    """scripts/hostile_cases.py on this checkout: history, disk, tables, sweeps, proxy, keys."""
    out = _script_output(["scripts/hostile_cases.py"], data_dir)
    found = json.loads(out[out.index("{"):])
    return [[name, str(outcome)] for name, outcome in found.items()]


def postgres_cases(data_dir: Path) -> list[list[str]]:
    """scripts/pg_lockdown_probe.py (root only): other users, permissions, kill -9."""
    if os.geteuid() != 0:
        return [["skipped", "the probe switches to user nobody: run as root"]]
    lines = [line for line in _script_output(["scripts/pg_lockdown_probe.py"], data_dir).splitlines()
             if line.startswith("| ") and not line.startswith("| case |")]
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in lines]


def pinned_by_tests(data_dir: Path) -> list[list[str]]:
    """The cache bit-rot and hostile-data cases, each a test that runs the harness on the bad input."""
    files = ["tests/test_cache_integrity.py", "tests/test_loaders_hostile.py"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MEMPP_DATA_DIR": str(data_dir)}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", *files], cwd=ROOT,
                          env=env, text=True, capture_output=True, timeout=GUARD_S)
    rows = []
    for line in proc.stdout.splitlines():
        for verdict in ("PASSED", "FAILED", "ERROR", "SKIPPED"):
            if line.startswith(verdict + " "):
                rows.append([line[len(verdict) + 1:].split(" - ")[0], verdict.lower()])
    if not rows:
        raise RuntimeError(f"pytest gave no results (exit {proc.returncode}): {proc.stdout.strip()[-200:]}")
    return rows


def markdown(header: list[str], body: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in body])


def with_section(document: str, text: str) -> str:
    """``document`` with the part between this script's markers replaced by ``text`` (appended
    with markers when the document has none)."""
    block = f"{BEGIN}\n{text}\n{END}"
    if BEGIN in document and END in document.split(BEGIN, 1)[1]:
        head, rest = document.split(BEGIN, 1)
        return head + block + rest.split(END, 1)[1]
    return document.rstrip("\n") + "\n\n" + block + "\n"


def stage(title: str, header: list[str], measure) -> tuple[str, list[str], list[list[str]]]:
    """One section; a stage that raises becomes a single row saying what failed."""
    try:
        return title, header, measure()
    except Exception as exc:  # noqa: BLE001 - the suite reports every failure and goes on
        return title, header, [[f"stage failed: {type(exc).__name__}: {str(exc)[:200]}"] + [""] * (len(header) - 1)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write this script's part of results/RELIABILITY.md")
    parser.add_argument("--data-dir", default=None, help="benchmark data (default: as run.py finds it)")
    args = parser.parse_args()
    started = time.monotonic()
    data_dir = resolve_data_dir(args.data_dir)
    root = Path(tempfile.mkdtemp(prefix="mempp-reliability-"))
    sections: list[tuple[str, list[str], list[list[str]]]] = []

    def report(section: tuple[str, list[str], list[list[str]]]) -> None:
        sections.append(section)
        title, header, body = section
        print(f"### {title}\n\n{markdown(header, body)}\n", flush=True)
        if args.write:
            text = "\n\n".join(f"### {t}\n\n{markdown(h, b)}" for t, h, b in sections)
            note = (f"Measured by `python scripts/reliability.py --write` on {time.strftime('%Y-%m-%d')}, "
                    f"{time.monotonic() - started:.0f} s so far, data from {data_dir}.")
            current = RELIABILITY_MD.read_text(encoding="utf-8") if RELIABILITY_MD.exists() else "# Reliability\n"
            atomic_write(RELIABILITY_MD, with_section(current, f"{note}\n\n{text}"))

    try:
        with FakeOpenAIServer() as server:
            suite = Suite(root, server, data_dir)
            warm: list[Path] = []

            def kill_stage() -> list[list[str]]:
                kill_rows, cache = kills(suite)
                warm.append(cache)
                return kill_rows

            report(stage("Kills (SIGKILL) and resume", ["stage", "kept at the kill", "on resume", "bound", "resumed run"],
                         kill_stage))
            def fault_stage() -> list[list[str]]:
                if not warm:
                    raise RuntimeError("no warm cache: the kill stage failed")
                return faults(suite, warm[0])

            report(stage("Faults injected (one bad reply each, 3 questions answered and judged)",
                         ["fault", "requests sent", "outcome"], fault_stage))
            report(stage("Bad inputs", ["input", "exit code", "verdict", "what the user sees"], lambda: bad_inputs(suite)))
            report(stage("Key leaks", ["key sent", "searched", "found"], lambda: key_leaks(suite)))
        report(stage("Cache bit-rot and hostile data (issue 23, items 1-3): each case a test that runs the harness on it",
                     ["case (test)", "outcome"], lambda: pinned_by_tests(data_dir)))
        report(stage("Embedded Postgres (issue 23, items 4-5; scripts/pg_lockdown_probe.py)", ["case", "outcome"],
                     lambda: postgres_cases(data_dir)))
        report(stage("History, disk, tables, sweeps, proxy, keys (issue 23, items 6-10; scripts/hostile_cases.py)",
                     ["case", "outcome"], lambda: hostile_cases(data_dir)))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"{time.monotonic() - started:.0f} s; data {data_dir}; scratch folder {root} removed")
    failed = sum(1 for _, _, body in sections for row in body if row and row[0].startswith("stage failed"))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
