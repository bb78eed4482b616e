"""The paper tables' intervals: a retrieval block gains a column with the overall figure's bootstrap
interval for a run with per-question records, and ≈ where its paired difference from the column's best
is not significant; the cells print as before."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from harness.reports import tables as T
from harness.stats.records import category_intervals
from tests.tables_support import PAPER_DIR, write_run

CATEGORIES = ("single-hop", "temporal")


def records(hits: list[int]) -> list[dict]:
    return [{"qid": f"conv-{i % 5}/{i}", "episode": f"conv-{i % 5}", "category": CATEGORIES[i % 2],
             "metrics": {"recall_any@50": float(hit)}} for i, hit in enumerate(hits)]


def summary(recs: list[dict]) -> dict:
    out = {}
    for name in (*CATEGORIES, "overall"):
        values = [r["metrics"]["recall_any@50"] for r in recs if name == "overall" or r["category"] == name]
        out[name] = {"n": len(values), "n_scored": len(values), "recall_any@50": sum(values) / len(values)}
    return out


def test_retrieval_cells_gain_intervals_and_marks(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    top = (rng.random(60) < 0.75).astype(int)
    nearly = top.copy()
    nearly[np.flatnonzero(top)[:3]] = 0  # three hits lost, two gained: one fewer in all
    nearly[np.flatnonzero(top == 0)[:2]] = 1
    best, close, far = records(list(top)), records(list(nearly)), records([1 if i % 10 == 0 else 0 for i in range(60)])
    for name, recs, mtime in (("mempp", best, 1), ("bm25", close, 2), ("vector", far, 3)):
        write_run(tmp_path, "locomo", f"{name}-1", system=name, k=50, answerer="none", summary=summary(recs),
                  records=recs, mtime=mtime)
    write_run(tmp_path, "locomo", "rag_4096-1", system="rag_4096", k=50, answerer="none", summary=summary(far), mtime=4)
    (table,) = T.build_tables(tmp_path, PAPER_DIR, tables=[2], mode="retrieval")
    block = table.retrieval.set_index(["system", "metric"])
    overall = "overall 95%"
    interval = category_intervals(best, "recall_any@50", n_resamples=2000)["overall"]
    mempp = block.loc[[i for i in block.index if i[1] == "recall_any@50" and "Mem++" in i[0]][0], overall]
    assert mempp == f"[{interval.low:.3f}, {interval.high:.3f}]"  # the best: no mark
    labels = {i[0]: block.loc[i, overall] for i in block.index if i[1] == "recall_any@50"}
    assert labels["bm25"].endswith("≈")  # a little lower: not significantly different
    assert labels["vector"].startswith("[") and not labels["vector"].endswith("≈")  # far lower
    (rag,) = [text for label, text in labels.items() if "4096" in label]
    assert rag == "—"  # no records: no interval
    assert block.loc[[i for i in block.index if "Mem++" in i[0] and i[1] == "recall_any@50"][0], "overall"] == f"{interval.estimate:.3f}"  # no records: printed as before
    assert any("percentile bootstrap interval over conversations" in note for note in table.notes)
