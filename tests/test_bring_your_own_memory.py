"""The README's "Bring your own memory": a memory outside the project (examples/my_memory.py),
named by ``_target_`` in a config folder of its own, runs end to end with the documented command."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path

from memory_protocol import Document, MemorySystem

ROOT = Path(__file__).resolve().parents[1]
COMMAND = "python run.py --config-dir examples/conf system=my_memory"


def test_the_readme_shows_the_command_this_test_runs():
    assert COMMAND in (ROOT / "README.md").read_text()


def test_the_documented_command_prints_recall_figures_on_orgmembench(tmp_path):
    env = {**os.environ, "MEMPP_CACHE_DIR": str(tmp_path / "cache"), "MEMPP_RESULTS_DIR": str(tmp_path / "runs")}
    args = COMMAND.split()[1:]
    proc = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "my_memory on orgmem: retrieval (k=50, budget=40000)" in proc.stdout
    overall = re.search(r"^\| overall +\| +73 \| +73 \| +([0-9.]+) \|", proc.stdout, re.MULTILINE)
    assert overall is not None, proc.stdout[-3000:]
    assert 0.5 < float(overall.group(1)) <= 1.0  # recall_any@10 of keyword overlap (0.836 when written)
    assert "0 (0.00/document; sent 0" in proc.stdout  # it called no model at write time
    assert list((tmp_path / "runs" / "orgmem").glob("my_memory-*/records.jsonl"))


def test_the_example_memory_keeps_to_the_as_of_date():
    sys.path.insert(0, str(ROOT))
    from examples.my_memory import KeywordMemory

    memory = KeywordMemory(k=5)
    assert isinstance(memory, MemorySystem)
    memory.ingest([
        Document("old", "The Atlas launch moved to May.", "Ann", datetime(2024, 1, 2)),
        Document("new", "The Atlas launch moved to June.", "Bob", datetime(2024, 3, 2)),
        Document("undated", "Atlas launch notes.", None, None),
    ])
    assert [h.doc_id for h in memory.retrieve("When is the Atlas launch?", datetime(2024, 2, 1))] == ["old"]
    assert {h.doc_id for h in memory.retrieve("When is the Atlas launch?")} == {"old", "new", "undated"}
