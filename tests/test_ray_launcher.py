"""A k sweep launched through Hydra's Ray launcher on a local Ray cluster, jobs sharing one cache.

Skips unless the ``ray`` extra and the launcher plugin are installed (CI installs both).
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray")
pytest.importorskip("hydra_plugins.hydra_ray_launcher.ray_launcher")

from harness.compose import compose_config  # noqa: E402
from harness.config import RunConfig  # noqa: E402
from harness.runner import run  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_a_k_sweep_runs_as_ray_jobs_sharing_the_cache(tmp_path):
    cache, runs = tmp_path / "cache", tmp_path / "runs"
    # Embed the episode once here, so the Ray jobs spend their time on retrieval, not the encoder.
    run(RunConfig.from_dict(compose_config(
        ["progress=false", f"store.cache_dir={cache}", f"store.results_dir={tmp_path / 'warm'}", "dataset.limit=3"]
    )))
    proc = subprocess.run(
        [sys.executable, "run.py", "-m", "hydra/launcher=ray", "system.k=5,10,50", "dataset.limit=3",
         "progress=false", f"store.cache_dir={cache}", f"store.results_dir={runs}",
         f"hydra.sweep.dir={tmp_path / 'multirun'}", "+hydra.launcher.ray.init.num_cpus=2",
         "+hydra.launcher.ray.init.include_dashboard=false"],
        cwd=ROOT, capture_output=True, text=True, timeout=1200,
    )
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-3000:]
    assert "Ray Launcher is launching 3 jobs" in log
    assert "(_run_job pid=" in log  # the jobs ran in Ray worker processes
    folders = sorted((runs / "orgmem").iterdir())
    assert len(folders) == 3
    hits_per_k = set()
    for folder in folders:
        k = json.loads((folder / "config.json").read_text())["system"]["k"]
        records = [json.loads(line) for line in (folder / "records.jsonl").read_text().splitlines()]
        assert len(records) == 3
        assert {len(record["hits"]) for record in records} == {k}
        hits_per_k.add(k)
    assert hits_per_k == {5, 10, 50}
    # Every job's retrievals landed in the one shared SQLite cache: 3 questions x 3 ks (k=50 was warm),
    # each a ranking and the explanation of its gold documents' placements (harness/explanations.py).
    with sqlite3.connect(cache / "retrieval.sqlite") as conn:
        assert conn.execute("SELECT count(*) FROM kv").fetchone()[0] == 2 * 9
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
