"""scripts/compare.py on two run folders: paired by question id, per category, a few short lines."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from harness.compare import compare_runs, lines
from harness.run_data import load_run

ROOT = Path(__file__).resolve().parent.parent


def write_run(folder: Path, system: str, hits: list[int]) -> Path:
    folder.mkdir(parents=True)
    config = {"dataset": {"name": "locomo", "benchmark": "harness.benchmarks.locomo"}, "system": {"name": system},
              "answerer": {"name": "none"}}
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "metrics.json").write_text("{}")
    categories = ["single-hop", "temporal", "adversarial"]
    records = [{"qid": f"conv-{i % 4}/{i}", "episode": f"conv-{i % 4}", "category": categories[i % 3],
                "metrics": {"recall_any@10": float(h)}} for i, h in enumerate(hits)]
    (folder / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return folder


@pytest.fixture()
def runs(tmp_path: Path) -> tuple[Path, Path]:
    rng = np.random.default_rng(0)
    a = (rng.random(120) < 0.8).astype(int).tolist()
    b = (rng.random(120) < 0.5).astype(int).tolist()
    return write_run(tmp_path / "locomo" / "mempp-1", "mempp", a), write_run(tmp_path / "locomo" / "rag-2", "rag_4096", b)


def test_compare_pairs_by_question_per_category(runs) -> None:
    a, b = load_run(runs[0]), load_run(runs[1])
    metric, results = compare_runs(a, b, n_resamples=500)
    assert metric == "recall_any@10"
    assert list(results) == ["adversarial", "single-hop", "temporal", "overall", "overall (all)"]
    assert results["overall"].n == 80  # adversarial stays out of overall, as in the run's summary
    overall = results["overall"]
    assert overall.difference.low < overall.difference.estimate < overall.difference.high
    assert overall.difference.clusters == 4 and overall.test == "exact paired permutation"
    assert overall.mcnemar_p is not None and overall.mde > 0
    printed = lines(a, b, metric, results)
    assert all(len(line) <= 120 for line in printed)
    assert printed[0].startswith("mempp - rag_4096 on locomo, recall_any@10")


def test_compare_cli_one_line_errors(runs, tmp_path: Path) -> None:
    script = [sys.executable, str(ROOT / "scripts" / "compare.py")]
    done = subprocess.run([*script, str(runs[0]), str(tmp_path)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2 and done.stderr == f"{tmp_path} is not a run folder (it has no config.json or records.jsonl)\n"
    done = subprocess.run([*script, *map(str, runs), "metric=ndcg@10"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2 and "no 'ndcg@10'" in done.stderr
    done = subprocess.run([*script, *map(str, runs), "resamples=300"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert 5 <= len(done.stdout.splitlines()) <= 12
