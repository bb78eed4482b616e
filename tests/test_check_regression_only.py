"""`check_regression.py --only` takes a pair or a whole dataset, and refuses anything else in one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import check_regression  # noqa: E402


def test_a_dataset_selects_its_golden_pairs_only():
    golden = sorted(f"orgmem/{path.stem}" for path in (ROOT / "results" / "golden" / "orgmem").glob("*.json"))
    assert golden, "results/golden/orgmem holds the OrgMemBench goldens"
    assert sorted(check_regression.pairs(["orgmem"])) == golden
    assert check_regression.pairs(["locomo/mempp", "orgmem/not_golden_yet"]) == ["locomo/mempp", "orgmem/not_golden_yet"]


def test_an_unknown_dataset_is_one_line_and_exit_2():
    proc = subprocess.run([sys.executable, "scripts/check_regression.py", "--only", "orgmen"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "error: --only takes dataset/system or a dataset with goldens (locomo, longmemeval_s, orgmem); not orgmen"]
