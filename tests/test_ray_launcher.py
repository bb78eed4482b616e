"""A k sweep launched through Hydra's Ray launcher on a local Ray cluster, jobs sharing one cache.

Skips unless the ``ray`` extra and the launcher plugin are installed (CI installs both).
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("ray", reason='the ray extra is not installed (pip install -e ".[ray]")')
pytest.importorskip("hydra_plugins.hydra_ray_launcher.ray_launcher",
                    reason="the Ray launcher plugin is not installed (pip install --no-deps hydra-ray-launcher==1.2.2)")

from harness.compose import compose_config  # noqa: E402
from harness.config import RunConfig  # noqa: E402
from judges.aggregate import console_table  # noqa: E402
from harness.runner import run  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


ANSI = re.compile(r"\x1b\[[0-9;]*m")
WORKER_PREFIX = re.compile(r"^\((?:_run_job) pid=(\d+)\) ?(.*)$")


def _lines_per_worker(log: str) -> dict[str, list[str]]:
    """Each Ray worker's lines as the driver printed them, prefix and colours removed, in order."""
    per_pid: dict[str, list[str]] = {}
    for line in ANSI.sub("", log).splitlines():
        match = WORKER_PREFIX.match(line)
        if match:
            per_pid.setdefault(match.group(1), []).append(match.group(2))
    return per_pid


def _contains_block(lines: list[str], block: list[str]) -> bool:
    return any(lines[i:i + len(block)] == block for i in range(len(lines) - len(block) + 1))


@pytest.mark.slow
def test_a_k_sweep_runs_as_ray_jobs_sharing_the_cache_each_printing_its_table_whole(tmp_path):
    """One Ray cluster serves both points (it takes a minute or more to start): the jobs share one
    cache, and each prints its own table whole. Ray folds alike lines of several jobs into one
    "[repeated Nx across cluster]" line unless RAY_DEDUP_LOGS=0 reaches the driver before Ray is
    imported (run.py sets it), so the variable is kept out of the test's environment."""
    cache, runs = tmp_path / "cache", tmp_path / "runs"
    # Embed the episode once here, so the Ray jobs spend their time on retrieval, not the encoder.
    run(RunConfig.from_dict(compose_config(
        ["progress=false", f"store.cache_dir={cache}", f"store.results_dir={tmp_path / 'warm'}", "dataset.limit=3"]
    )))
    env = {key: value for key, value in os.environ.items() if key != "RAY_DEDUP_LOGS"}
    proc = subprocess.run(
        [sys.executable, "run.py", "-m", "hydra/launcher=ray", "system.k=5,10,50", "dataset.limit=3",
         "progress=false", f"store.cache_dir={cache}", f"store.results_dir={runs}",
         f"hydra.sweep.dir={tmp_path / 'multirun'}", "+hydra.launcher.ray.init.num_cpus=2",
         "+hydra.launcher.ray.init.include_dashboard=false"],
        cwd=ROOT, capture_output=True, text=True, timeout=1200, env=env,
    )
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-3000:]
    assert "Ray Launcher is launching 3 jobs" in log
    assert "(_run_job pid=" in log  # the jobs ran in Ray worker processes
    assert "repeated" not in log, log[-3000:]
    per_pid = _lines_per_worker(log)
    folders = sorted((runs / "orgmem").iterdir())
    assert len(folders) == 3
    hits_per_k = set()
    for folder in folders:
        k = json.loads((folder / "config.json").read_text())["system"]["k"]
        records = [json.loads(line) for line in (folder / "records.jsonl").read_text().splitlines()]
        assert len(records) == 3
        assert {len(record["hits"]) for record in records} == {k}
        hits_per_k.add(k)
        owners = [pid for pid, lines in per_pid.items() if f"results: {folder}" in lines]
        assert len(owners) == 1, (folder, log[-3000:])
        lines = per_pid[owners[0]]
        title = f"mempp on orgmem: retrieval (k={k}, budget=40000)"
        summary = pd.read_csv(folder / "summary.csv", index_col="category")
        expected = console_table(summary, title, system_k=k).text.splitlines()
        assert _contains_block(lines, expected), "\n".join(["expected:", *expected, "printed:", *lines])
        # the write-time and read-time calls lines each wrap onto a "(cache hits ...)" line of their own
        assert sum(line.startswith("  (cache hits") for line in lines) == 2, "\n".join(lines)
    assert hits_per_k == {5, 10, 50}
    # Every job's retrievals landed in the one shared SQLite cache: 3 questions x 3 ks (k=50 was warm),
    # each a ranking and the explanation of its gold documents' placements (harness/retrieval.py:gold_docs).
    with sqlite3.connect(cache / "retrieval.sqlite") as conn:
        assert conn.execute("SELECT count(*) FROM kv").fetchone()[0] == 2 * 9
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
