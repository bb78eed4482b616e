"""Miss attribution from a record alone, its table, and explain's lines."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from harness.question_report import explain
from harness.misses import BUDGET, GOLD_WRONG, NO_GOLD, RETRIEVAL, RIGHT, SYNTHESIS, attribute, miss_table

ROOT = Path(__file__).resolve().parent.parent


def record(score: float | None, golds: list[tuple[bool, bool]], qid: str = "conv-1/1", category: str = "temporal") -> dict:
    return {"qid": qid, "episode": "conv-1", "category": category, "question": "When?", "reference": "2022",
            "answer": "In 2021.", "metrics": {"llm_judge": score, "llm_judge_run0": score},
            "gold_docs": [{"doc_id": f"D1:{i}", "rank": None, "returned_rank": 1 if (read or cut) else None,
                           "read": read, "budget_cut": cut} for i, (read, cut) in enumerate(golds)]}


def test_each_outcome() -> None:
    assert attribute(record(100.0, [(True, False)]), "llm_judge") == RIGHT
    assert attribute(record(0.0, [(True, False), (False, False)]), "llm_judge") == SYNTHESIS
    assert attribute(record(0.0, [(False, True)]), "llm_judge") == BUDGET
    assert attribute(record(0.0, [(False, False)]), "llm_judge") == RETRIEVAL
    assert attribute(record(0.0, []), "llm_judge") == NO_GOLD
    assert attribute(record(33.3, [(True, False)]), "llm_judge") == SYNTHESIS  # 1 of 3 judge runs: wrong
    assert attribute(record(0.0, [(False, False)]), "llm_judge", wrong_golds={"conv-1/1"}) == GOLD_WRONG
    retrieval_only = record(None, [(False, False)])
    del retrieval_only["answer"]
    assert attribute(retrieval_only, "llm_judge") is None


def test_table_per_system_and_category() -> None:
    records = [record(100.0, [(True, False)], "conv-1/1"), record(0.0, [(False, False)], "conv-1/2"),
               record(0.0, [(False, True)], "conv-1/3", "single-hop"), record(0.0, [], "conv-1/4", "adversarial")]
    frame = miss_table([("mempp", records)], "llm_judge", exclude_from_overall=["adversarial"])
    overall = frame[frame["category"] == "overall"].iloc[0]
    assert overall["n"] == 3
    assert (overall[RIGHT], overall[RETRIEVAL], overall[BUDGET]) == (100 / 3, 100 / 3, 100 / 3)
    temporal = frame[frame["category"] == "temporal"].iloc[0]
    assert temporal["n"] == 2 and temporal[SYNTHESIS] == 0


def test_explain_prints_where_the_miss_came_from() -> None:
    lines = explain(record(0.0, [(False, True)]))
    assert "miss: lost at the budget" in lines[-2] and lines[-1].startswith("answer: 'In 2021.'")


def test_explain_misses_cli(tmp_path: Path) -> None:
    folder = tmp_path / "locomo" / "mempp-1"
    folder.mkdir(parents=True)
    config = {"dataset": {"name": "locomo", "benchmark": "harness.benchmarks.locomo"}, "system": {"name": "mempp"},
              "answerer": {"name": "gpt-4o-mini"}}
    (folder / "config.json").write_text(json.dumps(config))
    rows = [record(100.0, [(True, False)], "conv-1/1"), record(0.0, [(False, False)], "conv-1/2")]
    (folder / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = subprocess.run([sys.executable, "scripts/explain.py", "--misses", str(folder)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    overall = next(line for line in done.stdout.splitlines() if "| overall " in line)
    assert [cell.strip() for cell in overall.strip("|").split("|")][:5] == ["mempp", "overall", "2", "50.0", "50.0"]
