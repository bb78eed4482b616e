"""Stages measured by other scripts and tests: issue 23's and issue 31's hostile cases, the embedded
Postgres probe, and the cache bit-rot and hostile-data tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from .suite import GUARD_S, ROOT


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


# What scripts/integrity_cases.py measured on the code before issue 31's fix (main at 9efb619), case by case.
BEFORE_ISSUE_31 = {
    "4. a run folder rewritten on a full disk (every page count 0-47)":
        "48 page counts: the previous run whole 1, the new run whole 23, a mix of both 24",
    "4. a run folder's writer killed (SIGKILL) at random moments":
        "20 kills: the previous run whole 14, the new run whole 6, a mix 0",
    "4. make_tables over a folder mixing two runs (records 73, metrics 3)":
        "exit 0; stderr: nothing (the stale metrics.json tabled)",
    "6. answerer.api_key_env=<64 hex digits> / =<AKIA… key>":
        "e3b0…: exit 0, 4 file(s) hold it; AKIA…: exit 0, 4 file(s) hold it",
    "7. the proxy sent 1.5 GB (announced) without its token":
        "HTTP 401 only after the body was sent; 256 MiB accepted; proxy peak RSS +256 MiB over its start",
    "8. run.py with store.cache_dir on a full disk":
        "exit 1; stderr: traceback, `sqlite3.OperationalError: disk I/O error`",
}


def integrity_cases(data_dir: Path) -> list[list[str]]:
    """scripts/integrity_cases.py on this checkout, beside what it measured before the fix."""
    out = _script_output(["scripts/integrity_cases.py"], data_dir)
    found = json.loads(out[out.index("\n{") + 1:])
    return [[name, BEFORE_ISSUE_31.get(name, "not measured"), str(outcome)] for name, outcome in found.items()]
