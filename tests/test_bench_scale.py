"""scripts/bench_scale.py: the JSON fields issue 12 names, and the ANN recall it reports.

A tiny run (300 LoCoMo turns, 4 questions) through the real script. The issue fixes the field
names; an HNSW index with generous parameters on 300 rows visits every row, so its recall
against the exact vector leg must be 1.0 and no row may fall back.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from bench_scale import unit_vectors  # noqa: E402

ISSUE_FIELDS = ("rows", "search_p50_ms", "search_p95_ms", "numpy_bruteforce_p50_ms", "faiss_flat_p50_ms", "rss_bytes_per_row")


def test_clustered_vectors_are_unit_and_near_their_centres():
    rng = np.random.default_rng(0)
    centres = unit_vectors(rng, 5, dim=384)
    vectors = unit_vectors(rng, 2000, dim=384, centres=centres)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    nearest = (vectors @ centres.T).max(axis=1)
    assert 0.6 < float(nearest.mean()) < 0.8  # noise of norm ~1 around a unit centre: cos ~ 1/sqrt(2)


def test_a_small_run_writes_the_issue_fields_and_exact_recall_for_generous_hnsw(tmp_path):
    pytest.importorskip("faiss", reason='the bench extra is not installed (pip install -e ".[bench]")')
    pytest.importorskip("psutil", reason='the bench extra is not installed (pip install -e ".[bench]")')
    out = tmp_path / "scale.json"
    params = json.dumps({"ann_min_rows": 0, "ann_m": 32, "ann_ef_construction": 400, "ann_ef_search": 400})
    command = [
        sys.executable, str(ROOT / "scripts" / "bench_scale.py"), "--rows", "300", "--queries", "4",
        "--ann", "hnsw", "--ann-row-minimum", "300", "--ann-params", params, "--threads", "1", "--out", str(out),
    ]
    subprocess.run(command, check=True, cwd=ROOT, capture_output=True, timeout=600)
    (entry,) = json.loads(out.read_text())
    for field in ISSUE_FIELDS:
        assert entry[field] is not None and entry[field] >= 0, field
    assert entry["rows"] == 300 and entry["backend"] == "memory" and entry["threads"] == 1
    assert entry["search_p95_ms"] >= entry["search_p50_ms"] > 0
    ann = entry["ann_hnsw"]
    assert ann["questions_through_ann"] == 4 and ann["questions_fallen_back_to_exact"] == 0
    assert ann["vector_leg_recall_at_c"] == 1.0 and ann["fused_recall_at_50"] == 1.0
    assert ann["settings"]["ann_ef_search"] == 400
