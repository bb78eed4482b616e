"""What every reliability case shares: subprocess runners on a checkout, the scratch run against the
fake server, and the Markdown tables and section the suite writes (a tmpfs: tests/small_disk.py)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GUARD_S = 1800  # hang guard for one subprocess
FAKE_KEY = "sk-reliability-FAKE-7c1d9e5b3a2f4e6d8c0b"
KEY_ENV = "MEMPP_RELIABILITY_KEY"
BEGIN, END = "<!-- scripts/reliability.py: begin -->", "<!-- scripts/reliability.py: end -->"
Case = Callable[[Path, Path], str]  # (checkout, scratch folder) -> the outcome cell
Rows = list[list[str]]


def python(code: Path, script: str, cwd: Path, *args: str, env: dict[str, str] | None = None,
           with_tests: bool = True) -> subprocess.CompletedProcess:
    """``python -c script args`` importing ``code`` (and this checkout's tests/ when ``with_tests``)."""
    path = f"{code}{os.pathsep}{ROOT}" if with_tests else str(code)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script), *args], cwd=cwd,
                          env={**os.environ, "PYTHONPATH": path, **(env or {})}, capture_output=True, text=True,
                          timeout=GUARD_S)


def last_json(proc: subprocess.CompletedProcess):
    return json.loads(proc.stdout.strip().splitlines()[-1])


def stderr_shown(stderr: str, scratch: Path | None = None, width: int = 90) -> str:
    """How stderr reads: ``traceback, `<the exception>` `` or ``N line: `<the last line>…` ``."""
    err = [line.replace(str(scratch), "<scratch>") if scratch else line
           for line in stderr.strip().splitlines() if line.strip()]
    if "Traceback" in stderr:
        raised = [line for line in err if re.match(r"[\w.]+(Error|Exception): ", line)]
        return f"traceback, `{(raised or err)[-1][:90]}`"
    return f"{len(err)} line: `{err[-1][:width]}…`" if err else "nothing"


def run_py(code: Path, args: list[str], cwd: Path, env: dict[str, str] | None = None,
           script: str | None = None) -> dict:
    """``run.py args`` (or ``python -c script args``) of ``code``: exit code, last stderr line, run
    folder, its metrics.json."""
    command = [sys.executable, str(code / "run.py")] if script is None else [sys.executable, "-c", textwrap.dedent(script)]
    proc = subprocess.run([*command, *args, "progress=false"], cwd=cwd, capture_output=True, text=True, timeout=GUARD_S,
                          env={**os.environ, "PYTHONPATH": str(code), **(env or {})})
    folder = next((line.split("results: ", 1)[1] for line in proc.stdout.splitlines() if line.startswith("results: ")), None)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    errors = [line.split(":")[0] for line in lines if re.match(r"^[\w.]+(Error|Exception)\b", line)]
    last = f"traceback {errors[-1] if errors else ''}" if "Traceback" in proc.stderr else (lines[-1] if lines else "")
    return {"exit": proc.returncode, "stderr": last[:140], "folder": folder, "stdout": proc.stdout, "stderr_lines": lines,
            "stderr_text": proc.stderr, "metrics": json.loads((cwd / folder / "metrics.json").read_text()) if folder else {}}


def case_registry() -> tuple[dict[str, tuple[Case, bool]], Callable]:
    """A module's cases in definition order, and ``@case(name, needs_root=False)`` to add one."""
    cases: dict[str, tuple[Case, bool]] = {}

    def case(name: str, needs_root: bool = False) -> Callable[[Case], Case]:
        def add(function: Case) -> Case:
            cases[name] = (function, needs_root)
            return function
        return add

    return cases, case


def measure(cases: dict[str, tuple[Case, bool]], code: Path, only: str = "", prefix: str = "mempp-hostile-") -> Rows:
    """Each case (name -> (case, needs root)) on the checkout ``code``, one row each, printed as measured."""
    rows = []
    for name, (case, needs_root) in cases.items():
        if only and not any(word in name for word in only.split(",")):
            continue
        if needs_root and os.geteuid() != 0:
            rows.append([name, "skipped (needs root to mount a tmpfs)"])
            continue
        with tempfile.TemporaryDirectory(prefix=prefix) as scratch:
            rows.append([name, case(code.resolve(), Path(scratch))])
        print(f"{name}: {rows[-1][1]}", flush=True)
    return rows


# ------------------------------------------------------------------ the scratch run on the fake server
@dataclass
class Suite:
    root: Path
    server: object  # tests.fake_openai_server.FakeOpenAIServer
    data_dir: Path
    console: list[str] = field(default_factory=list)
    warm: Path | None = None  # a complete cold run's cache (the kill stage makes it)

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
    """Entries of a cache file (0 while it or its table does not exist yet)."""
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=60) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM kv").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def wait_for(predicate: Callable[[], bool], proc: subprocess.Popen, what: str) -> None:
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


# ------------------------------------------------------------------ output
def with_section(document: str, text: str) -> str:
    """``document`` with the part between the suite's markers replaced by ``text`` (appended if none)."""
    block = f"{BEGIN}\n{text}\n{END}"
    if BEGIN in document and END in document.split(BEGIN, 1)[1]:
        head, rest = document.split(BEGIN, 1)
        return head + block + rest.split(END, 1)[1]
    return document.rstrip("\n") + "\n\n" + block + "\n"


def stage(title: str, header: list[str], measure_rows: Callable[[], Rows]) -> tuple[str, list[str], Rows]:
    """One section; a stage that raises becomes a single row saying what failed."""
    try:
        return title, header, measure_rows()
    except Exception as exc:  # noqa: BLE001 - the suite reports every failure and goes on
        return title, header, [[f"stage failed: {type(exc).__name__}: {str(exc)[:200]}"] + [""] * (len(header) - 1)]
