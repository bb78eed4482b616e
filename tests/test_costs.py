"""The cost table from run folders alone: latency percentiles, tokens read, write cost, as-of leakage."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from harness.compose import compose_config
from harness.config import RunConfig
from harness.costs import cost_table, leakage
from harness.retrieval import read_counter
from harness.run_data import load_run
from loaders import load_dataset, prepare_data_dir
from tests.data_paths import require_data


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


# A real run: OrgMemBench's as-of questions (C4), retrieval only, Mem++ twice (the second from the cache) and BM25.
ROOT = Path(__file__).resolve().parent.parent
RUN = ("dataset=orgmem", "dataset.categories=[C4]", "dataset.limit=3", "progress=false")
VECTOR_DATE_FLAG_BYTES = 384 * 4 + 8 + 1  # a Mem++ row's float32 MiniLM vector, int64 date and active flag


def run_cli(tmp: Path, *extra: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "run.py", *RUN, f"store.cache_dir={tmp / 'cache'}", f"store.results_dir={tmp / 'runs'}",
               *extra]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=1800)  # a hang guard only


def table_rows(text: str) -> dict[str, dict[str, str]]:
    lines = [line for line in text.splitlines() if line.startswith("| ")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    rows = [dict(zip(header, (cell.strip() for cell in line.strip("|").split("|")))) for line in lines[1:]]
    return {row["system"]: row for row in rows}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, list[dict], list[dict]]:
    require_data("orgmembench")
    tmp = tmp_path_factory.mktemp("costs")
    records = []
    for system in ("mempp", "mempp", "bm25"):
        proc = run_cli(tmp, f"system={system}")
        assert proc.returncode == 0, proc.stderr[-2000:]
        if system == "mempp":
            (folder,) = (tmp / "runs" / "orgmem").glob("mempp*")
            records.append([json.loads(line) for line in (folder / "records.jsonl").read_text().splitlines()])
            assert f"retrieval cache hits {3 * (len(records) - 1)}" in proc.stdout
    return tmp / "runs", records[0], records[1]


def test_costs_of_a_real_run_print_latency_and_store_size_and_no_leak_for_mempp(runs) -> None:
    folder, _, _ = runs
    proc = subprocess.run([sys.executable, "scripts/costs.py", str(folder)], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    rows = table_rows(proc.stdout)
    root = prepare_data_dir("orgmem", None, {"tier": "medium"})
    documents = load_dataset("orgmem", data_dir=root, limit=1, tier="medium", author=None)[0].documents
    text_bytes = sum(len(doc.text.encode("utf-8")) for doc in documents)
    mempp, bm25 = rows["mempp"], rows["bm25"]
    for row in (mempp, bm25):
        assert row["questions"] == "3" and all(float(row[c]) > 0 for c in ("latency p50 ms", "p95 ms", "p99 ms"))
        assert row["disk MB"] == "0.0" and row["tokens by"] == "chars/4 (est.)"  # in process; no answerer
    # Mem++ holds each of the 443 artefacts as one row (no repeats): its arrays and texts; BM25 the texts alone.
    assert len(documents) == 443
    assert float(mempp["memory MB"]) == round((text_bytes + 443 * VECTOR_DATE_FLAG_BYTES) / 1e6, 1)
    assert float(bm25["memory MB"]) == round(text_bytes / 1e6, 1)
    # The as-of audit: Mem++ returns nothing dated after a question's as-of day (paper §3.1); BM25 has no scope.
    assert mempp["leaked items"] == "0" and mempp["leak questions"] == "0/3"
    assert int(bm25["leaked items"]) > 0


def test_a_cached_run_reports_the_latency_and_size_measured_when_the_ranking_was_computed(runs) -> None:
    _, cold, warm = runs
    assert [r["retrieval_seconds"] for r in warm] == [r["retrieval_seconds"] for r in cold]
    assert all(isinstance(r["retrieval_seconds"], float) and r["retrieval_seconds"] > 0 for r in cold)


@pytest.mark.parametrize(("answerer", "encoding"), [("gpt-4o-mini", "o200k_base"), ("gpt-4.1-mini", "o200k_base"),
                                                    ("claude-sonnet-4-6", None), ("none", None)])
def test_context_tokens_are_counted_by_the_answerers_own_tokenizer_where_we_have_it(answerer, encoding) -> None:
    counter = read_counter(RunConfig.from_dict(compose_config([f"answerer={answerer}"])))
    assert (counter.encoding_name if counter else None) == encoding
    if counter is not None:  # o200k_base, as tiktoken encodes it: "Hello world" is 2 tokens
        assert counter.count_text("Hello world") == 2


def test_the_table_names_the_tokenizer_of_counted_tokens(tmp_path: Path) -> None:
    folder = make_run(tmp_path / "orgmem" / "bm25-1")
    records = [{**json.loads(line), "read_tokens": 90} for line in (folder / "records.jsonl").read_text().splitlines()]
    (folder / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    metrics = json.loads((folder / "metrics.json").read_text())
    metrics["stats"]["read_tokenizer"] = "o200k_base (gpt-4o-mini)"
    (folder / "metrics.json").write_text(json.dumps(metrics))
    row = cost_table([load_run(folder)]).loc["bm25"]
    assert row["read tokens"] == 90 and row["tokens by"] == "o200k_base (gpt-4o-mini)"
