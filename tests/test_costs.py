"""The cost table from run folders alone: latency percentiles, tokens read, write cost, as-of leakage."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from harness.costs import cost_table, leakage
from harness.run_data import load_run


def make_run(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"dataset": {"name": "orgmem"}, "system": {"name": "bm25"}}))
    stats = {"model_calls": {"documents": 4, "write_chat_calls_per_document": 2.0}, "write_spend": {"dollars": 0.02},
             "store_bytes": 3_000_000, "store_memory_bytes": 1_500_000}
    (folder / "metrics.json").write_text(json.dumps({"stats": stats}))
    records = [{"qid": f"q{i}", "retrieval_seconds": (i + 1) / 1000, "read_tokens_est": 100 * i,
                "as_of": "2024-03-01T00:00:00",
                "hits": [{"date": "2024-02-01"}, {"date": "2024-03-05" if i == 0 else "2024-03-01"}]} for i in range(100)]
    (folder / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return folder


def test_cost_row_from_the_folder(tmp_path: Path) -> None:
    row = cost_table([load_run(make_run(tmp_path / "orgmem" / "bm25-1"))]).loc["bm25"]
    latencies = np.arange(1, 101)
    assert row["latency p50 ms"] == pytest.approx(np.percentile(latencies, 50))
    assert row["p99 ms"] == pytest.approx(np.percentile(latencies, 99))
    assert row["read tokens"] == pytest.approx(4950)
    assert row["write calls/doc"] == 2.0 and row["write $/doc"] == pytest.approx(0.005)
    assert row["disk MB"] == pytest.approx(3.0) and row["memory MB"] == pytest.approx(1.5)
    assert row["tokens by"] == "chars/4 (est.)"
    assert row["leaked items"] == 1 and row["leak questions"] == "1/100"


def test_leakage_needs_an_as_of_date() -> None:
    assert leakage([{"as_of": None, "hits": [{"date": "2030-01-01"}]}]) == (0, 0, 0)
