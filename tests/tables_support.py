"""What the table tests share: a hand-written results store with known numbers, and the paper's numbers."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from harness.reports import tables as T
from harness.reports.format import Table
from harness.reports.paper import load_paper


ROOT = Path(__file__).resolve().parent.parent
PAPER_DIR = ROOT / "results" / "paper"
ORG = ["C1", "C2", "C3", "C4", "C5", "C6", "overall"]
BASE_TIME = 1_700_000_000
# A judged run's stats when nothing was lost: every answer given, every grade parsed.
EVERY_GRADE_PARSED = {"answer_failures": 0, "judge_failures": 0, "judge_unparsed": 0}


def write_run(root: Path, dataset: str, folder: str, *, system: str, k: int, answerer: str, summary: dict,
              stats: dict | None = None, mtime: int = 0, limit: int | None = None, run_name: str | None = None,
              records: list[dict] | None = None) -> Path:
    """One run folder as the runner writes it (config.json, metrics.json, optional records.jsonl)."""
    path = root / dataset / folder
    path.mkdir(parents=True)
    if stats is None and answerer not in (None, "none"):
        stats = dict(EVERY_GRADE_PARSED)
    config = {
        "answerer": answerer,
        "dataset": {"name": dataset, "limit": limit, "categories": None},
        "system": {"name": system, "kind": system.split("_")[0], "k": k, "params": {}},
        "run_name": run_name,
    }
    (path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    (path / "metrics.json").write_text(json.dumps({"summary": summary, "stats": stats or {}}), encoding="utf-8")
    if records is not None:
        (path / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    os.utime(path, (BASE_TIME + mtime, BASE_TIME + mtime))
    return path


def org_scores(values: dict[str, float], std: float | None = None, paper: dict[str, float] | None = None) -> dict:
    """OrgMemBench summary rows: ``score`` (parsed grades only) and ``score_paper`` (100/N; equal to
    the score unless ``paper`` says otherwise)."""
    out = {}
    for category, value in values.items():
        out[category] = {"score": value, "score_paper": (paper or {}).get(category, value), "n": 10, "n_scored": 10}
        if std is not None:
            out[category]["score_std"] = std
    return out


def row(table: Table, csv: bool = False, **match) -> pd.Series:
    """The one row matching ``match`` as printed (``csv``: in the CSV, which also keeps the parsed-only rows)."""
    frame = table.frame if csv else table.shown
    for column, value in match.items():
        frame = frame[frame[column] == value]
    assert len(frame) == 1, f"expected one row for {match}, got {len(frame)}:\n{table.frame}"
    return frame.iloc[0]


def retrieval_row(table: Table, **match) -> pd.Series:
    """The one row of the table's retrieval block (no paper counterpart) matching ``match``."""
    assert table.retrieval is not None, f"{table.key} has no retrieval block"
    frame = table.retrieval
    for column, value in match.items():
        frame = frame[frame[column] == value]
    assert len(frame) == 1, f"expected one retrieval row for {match}, got {len(frame)}:\n{table.retrieval}"
    return frame.iloc[0]


def paper_figure(table: int, answerer: str, paper_row: str, column: str, metric: str) -> str:
    """A value of results/paper/table<N>_*.csv as printed, read from the file (not from the code under test)."""
    import csv

    path = next(PAPER_DIR.glob(f"table{table}_*.csv"))
    with path.open(encoding="utf-8") as handle:
        for line in csv.DictReader(handle):
            if (line["answerer"], line["row"], line["column"], line["metric"]) == (answerer, paper_row, column, metric):
                return line["value"]
    raise KeyError((table, answerer, paper_row, column, metric))


@pytest.fixture()
def judged(tmp_path: Path) -> Path:
    """A store with judge metrics on all three datasets, a plumbing run, a k sweep and ablations."""
    runs = tmp_path / "runs"
    full = {"C1": 70.0, "C2": 66.0, "C3": 50.0, "C4": 80.0, "C5": 20.0, "C6": 45.0, "overall": 60.0}
    summary = org_scores(full, std=1.5)
    summary["overall"]["score_std"] = 0.5
    write_run(runs, "orgmem", "mempp-old", system="mempp", k=50, answerer="gpt-4.1-mini",
              summary=org_scores({c: 10.0 for c in ORG}, std=0.0), mtime=10)
    write_run(runs, "orgmem", "mempp-new", system="mempp", k=50, answerer="gpt-4.1-mini", summary=summary,
              stats={**EVERY_GRADE_PARSED, "mean_read_chars": 40000.0}, mtime=20,
              records=[{"retrieved_chars": 3_000_000}, {"retrieved_chars": 5_000_000}])
    for k, value, mtime in [(10, 50.0, 30), (30, 55.0, 31)]:
        write_run(runs, "orgmem", f"mempp-k{k}", system="mempp", k=k, answerer="gpt-4.1-mini",
                  summary=org_scores({"overall": value}, std=1.0),
                  stats={**EVERY_GRADE_PARSED, "mean_read_chars": 10000.0 * k / 10},
                  mtime=mtime, records=[{"retrieved_chars": 400_000 * k // 10}])
    write_run(runs, "orgmem", "full_context-a", system="full_context", k=50, answerer="gpt-4.1-mini",
              summary=org_scores({"overall": 20.0}), stats={**EVERY_GRADE_PARSED, "mean_read_chars": 40000.0}, mtime=5)
    write_run(runs, "orgmem", "bm25-a", system="bm25", k=50, answerer="gpt-4.1-mini",
              summary=org_scores({c: 40.0 for c in ORG if c != "C6"}), mtime=5)
    write_run(runs, "orgmem", "mempp-plumb", system="mempp", k=50, answerer="qwen-local",
              summary=org_scores({c: 55.0 for c in ORG}), stats={"plumbing": True}, mtime=5)
    write_run(runs, "orgmem", "bm25-retrieval", system="bm25", k=50, answerer="none",
              summary={"overall": {"recall_any@50": 0.9, "n": 73, "n_scored": 73}}, mtime=5)
    write_run(runs, "orgmem", "mempp_no_vector-a", system="mempp_no_vector", k=50, answerer="gpt-4.1-mini",
              summary=org_scores({"overall": 30.0}), mtime=5)
    write_run(runs, "orgmem", "mempp-sonnet", system="mempp", k=50, answerer="claude-sonnet-4-6",
              summary=org_scores({"overall": 56.0}), mtime=5)
    write_run(runs, "orgmem", "mempp_no_vector-sonnet", system="mempp_no_vector", k=50, answerer="claude-sonnet-4-6",
              summary=org_scores({"overall": 25.0}), mtime=5)
    locomo = {}
    for category, (judge, f1, bleu) in {
        "single-hop": (85.0, 60.0, 50.0), "multi-hop": (70.0, 40.0, 30.0), "temporal": (75.0, 55.5, 45.0),
        "open-domain": (45.0, 25.0, 18.0), "overall": (78.0, 52.0, 42.5), "adversarial": (30.0, 10.0, 5.0),
    }.items():
        locomo[category] = {"llm_judge": judge, "llm_judge_paper": judge, "llm_judge_std": 0.3, "f1": f1, "bleu1": bleu,
                            "n": 5, "n_scored": 5}
    locomo["overall"]["llm_judge_std"] = 0.2
    write_run(runs, "locomo", "mempp-a", system="mempp", k=50, answerer="gpt-4o-mini", summary=locomo, mtime=5)
    lme = {c: {"accuracy": v, "accuracy_paper": v, "n": 5, "n_scored": 5} for c, v in {
        "single-session-user": 97.0, "single-session-preference": 40.0, "multi-session": 60.0,
        "knowledge-update": 80.0, "temporal-reasoning": 55.0, "task_averaged": 75.0, "overall": 73.0}.items()}
    write_run(runs, "longmemeval_s", "mempp-a", system="mempp", k=50, answerer="gpt-4o-mini", summary=lme, mtime=5)
    return runs


@pytest.fixture()
def retrieval_only(tmp_path: Path) -> Path:
    """Today's store: answerer none, retrieval metrics only."""
    runs = tmp_path / "retrieval"
    metrics = {"recall_any@50": 0.933, "recall_all@50": 0.2, "in_budget_recall": 0.511, "recall_any@all": 0.95,
               "n": 15, "n_scored": 15}
    write_run(runs, "orgmem", "mempp-a", system="mempp", k=50, answerer="none",
              summary={"C1": metrics, "overall": {**metrics, "recall_any@50": 0.904}},
              stats={"mean_read_chars": 40000.0}, mtime=5)
    write_run(runs, "orgmem", "mempp-k10", system="mempp", k=10, answerer="none",
              summary={"overall": {"recall_any@all": 0.74, "in_budget_recall": 0.449, "n": 73, "n_scored": 73}},
              stats={"mean_read_chars": 20956.0}, mtime=6)
    write_run(runs, "orgmem", "bm25-a", system="bm25", k=50, answerer="none", limit=5,
              summary={"C1": {"recall_any@50": 1.0, "n": 5, "n_scored": 5}}, mtime=5)
    return runs


@pytest.fixture()
def paper() -> pd.DataFrame:
    frame = load_paper(PAPER_DIR)
    if frame.empty:
        pytest.skip("results/paper holds no published numbers")
    return frame


def built(runs: Path, paper_dir: Path | None = PAPER_DIR, mode: str = "auto") -> dict[str, Table]:
    return {t.key: t for t in T.build_tables(runs, paper_dir, mode=mode)}
