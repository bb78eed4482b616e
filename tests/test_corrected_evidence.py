"""recall_any@k on the errata's corrected evidence, recomputed from a record's hits."""

from __future__ import annotations

import pytest

from harness.corrected_evidence import corrected_recall, ranked


def record(qid: str, gold: list[str], hits: list[list[str]], recorded: float) -> dict:
    return {"qid": qid, "category": "temporal", "gold": gold, "metrics": {"recall_any@2": recorded},
            "hits": [{"doc_id": ids[0], "sources": ids} for ids in hits]}


def test_corrected_gold_changes_recall_and_the_recorded_value_is_checked() -> None:
    records = [record("conv-26/1", ["D1:12"], [["D1:14", "D1:13"], ["D2:1"]], 0.0),
               record("conv-26/3", ["D1:2"], [["D1:2"]], 1.0)]
    assert ranked(records[0]) == ["D1:14", "D1:13", "D2:1"]
    frame = corrected_recall(records, {"conv-26/1": ["D1:14"]}, k=2)
    assert frame.loc["overall", "recall_any@2"] == 0.5
    assert frame.loc["overall", "recall_any@2 corrected"] == 1.0
    assert frame.loc["overall", "gold changed"] == 1
    records[1]["metrics"]["recall_any@2"] = 0.0
    with pytest.raises(ValueError, match="conv-26/3"):
        corrected_recall(records, {}, k=2)
