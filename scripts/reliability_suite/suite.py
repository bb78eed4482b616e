"""What every stage of the reliability suite shares: the scratch run's settings, subprocess helpers
and cache copies (``scripts/reliability.py`` runs the stages)."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.fake_openai_server import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[2]
FAKE_KEY = "sk-reliability-FAKE-7c1d9e5b3a2f4e6d8c0b"
KEY_ENV = "MEMPP_RELIABILITY_KEY"
GUARD_S = 1800  # hang guard for one subprocess


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
