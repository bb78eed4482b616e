"""The layer arrows hold: no package imports one above it, and no two packages import each other."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_no_package_imports_against_the_layer_arrows():
    proc = subprocess.run([sys.executable, "scripts/check_layers.py"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout
    assert "memory_protocol  -> (nothing of ours)" in proc.stdout
    baselines = next(line for line in proc.stdout.splitlines() if line.startswith("baselines"))
    assert "harness" not in baselines
