"""`python run.py` on a machine with no data: it fetches OrgMemBench, or says in one line how to (issue 20).

The run happens in a copy of the working tree under a temporary folder, as a fresh clone would be:
no ./data, no <repo>/data, no <repo>/../shared/data, HOME and the cache root
($MEMPP_CACHE_DIR, where the data is fetched to) empty, and
$MEMPP_DATA_DIR unset. The BM25 system keeps the run short (no embedding); the full Mem++ table
(overall in_budget_recall 0.589) is the same data through the same loader.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.data_mirror import ROOT, closed_port_url, lay_out_github, serve
from tests.data_paths import needs_data

pytestmark = needs_data("orgmembench", "locomo/locomo10.json")

NOT_COPIED = shutil.ignore_patterns(".git", "outputs", "data", "__pycache__", ".pytest_cache", "*.egg-info", ".cache")


def fresh_clone(tmp_path: Path) -> Path:
    clone = tmp_path / "somewhere" / "mempp"
    shutil.copytree(ROOT, clone, ignore=NOT_COPIED)
    assert not (clone.parent.parent / "shared").exists() and not (clone / "data").exists()
    return clone


def run_py(clone: Path, home: Path, mirror: str, *overrides: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MEMPP_DATA_DIR", "XDG_CACHE_HOME", "MEMPP_RESULTS_DIR")}
    env.update(HOME=str(home), MEMPP_MIRROR=mirror, MEMPP_CACHE_DIR=str(home / "computed"))
    command = [sys.executable, "run.py", "system=bm25", "dataset.limit=3", "progress=false", *overrides]
    return subprocess.run(command, cwd=clone, env=env, capture_output=True, text=True, timeout=600)


def test_run_py_fetches_the_benchmark_into_the_user_cache_and_runs(tmp_path: Path) -> None:
    clone, home = fresh_clone(tmp_path), tmp_path / "home"
    with serve(lay_out_github(tmp_path / "mirror")) as (url, state):
        first = run_py(clone, home, url)
        assert first.returncode == 0, first.stderr
        fetched = len(state.paths())
        state.clear()
        second = run_py(clone, home, url)
        assert second.returncode == 0, second.stderr
        assert state.requests == [], "the second run finds the data in the cache"
    cache = home / "computed" / "data" / "orgmembench" / "datasets"  # the cache root moves the fetched data too
    assert fetched == 448 and len([p for p in cache.rglob("*") if p.is_file()]) == 448
    assert "orgmem: 448 file(s)" in first.stderr and "448 fetched" in first.stderr
    assert "| overall" in first.stdout and "3 questions in 1 episode(s)" in first.stdout
    assert "fetched" not in second.stderr


def test_run_py_offline_without_data_exits_2_in_one_line(tmp_path: Path) -> None:
    clone, home = fresh_clone(tmp_path), tmp_path / "home"
    proc = run_py(clone, home, closed_port_url())
    assert proc.returncode == 2
    err = proc.stderr.strip()
    assert "\n" not in err and err.startswith("error: ")
    assert "python scripts/fetch_data.py orgmem" in err and str(home / "computed" / "data") in err
    assert "Traceback" not in err
