"""The data tests find the data as the harness does, and CI fails when one of them skips (issue 24)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.data_paths import DATA_ROOT, data_skip_as_failure, find_data_root

ROOT = Path(__file__).resolve().parents[1]
EMPTY_FILE_TESTS = ["tests/test_bad_settings.py", "-k", "empty_data_file", "-q", "-p", "no:cacheprovider"]


def test_the_data_root_follows_mempp_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMPP_DATA_DIR", str(tmp_path))
    assert find_data_root() == tmp_path.resolve()


def report(reason: str) -> SimpleNamespace:
    return SimpleNamespace(skipped=True, outcome="skipped", longrepr=("tests/test_x.py", 3, f"Skipped: {reason}"))


def test_a_data_skip_fails_only_when_data_is_required():
    required = {"MEMPP_REQUIRE_DATA": "1"}
    data_skip = report("benchmark data not found: orgmembench is not in /somewhere")
    data_skip_as_failure(data_skip, environ={})
    assert data_skip.outcome == "skipped"
    data_skip_as_failure(data_skip, environ=required)
    assert data_skip.outcome == "failed" and "benchmark data not found" in data_skip.longrepr
    other = report('the mem0 extra is not installed (pip install -e ".[mem0]")')
    data_skip_as_failure(other, environ=required)
    assert other.outcome == "skipped"


def pytest_run(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", *EMPTY_FILE_TESTS], cwd=ROOT, env={**os.environ, **env},
                          capture_output=True, text=True, timeout=600)


@pytest.mark.skipif(DATA_ROOT is None or not (DATA_ROOT / "orgmembench").is_dir(), reason="benchmark data not found: orgmembench")
def test_the_empty_file_tests_run_on_data_named_by_mempp_data_dir_and_fail_in_ci_without_it(tmp_path):
    # Before: they looked only at <repo>/../shared/data and skipped for data elsewhere.
    elsewhere = tmp_path / "my-data"
    elsewhere.mkdir()
    (elsewhere / "orgmembench").symlink_to(DATA_ROOT / "orgmembench", target_is_directory=True)
    found = pytest_run({"MEMPP_DATA_DIR": str(elsewhere), "MEMPP_REQUIRE_DATA": "1"})
    assert found.returncode == 0 and "2 passed" in found.stdout, found.stdout[-2000:]
    empty = tmp_path / "empty"
    empty.mkdir()
    missing = pytest_run({"MEMPP_DATA_DIR": str(empty), "MEMPP_REQUIRE_DATA": "1"})
    assert missing.returncode == 1 and "2 failed" in missing.stdout, missing.stdout[-2000:]
    assert "MEMPP_REQUIRE_DATA=1 but a data test was skipped: Skipped: benchmark data not found" in missing.stdout
