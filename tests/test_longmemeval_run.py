"""LongMemEval_S through the runner: official scores over a deeper ranking, context kept at k."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from harness.compose import compose_config
from harness.config import RunConfig
from harness.benchmarks.longmemeval_s import official_corpus_of
from harness.runner import run
from memory_protocol import Document, Episode, Question


def entry(qid: str, qtype: str, gold_role: str = "user") -> dict[str, Any]:
    user_gold = gold_role == "user"
    return {
        "question_id": qid, "question_type": qtype, "question": "Which lamp did I buy?",
        "question_date": "2023/05/30 (Tue) 23:40", "answer": "a desk lamp", "answer_session_ids": ["answer_s1"],
        "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/21 (Sun) 10:00", "2023/05/22 (Mon) 09:00"],
        "haystack_session_ids": ["filler_0", "answer_s1", "filler_2"],
        "haystack_sessions": [
            [{"role": "user", "content": "lamp lamp lamp shopping list"}, {"role": "assistant", "content": "ok"}],
            [{"role": "user", "content": "I got a desk lamp for my study", "has_answer": user_gold},
             {"role": "assistant", "content": "A desk lamp helps.", "has_answer": not user_gold}],
            [{"role": "user", "content": "what is the weather"}, {"role": "assistant", "content": "sunny"}],
        ],
    }


def lme_data_dir(root: Path, *entries: dict[str, Any]) -> Path:
    """A data directory holding ``entries`` as the LongMemEval_S file."""
    (root / "longmemeval").mkdir()
    (root / "longmemeval" / "longmemeval_s_cleaned.json").write_text(json.dumps(list(entries)))
    return root


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    return lme_data_dir(tmp_path_factory.mktemp("lme"), entry("q1", "single-session-user"),
                        entry("q2_abs", "single-session-user"),
                        entry("q3", "single-session-assistant", gold_role="assistant"))


def config(data_dir: Path, tmp: Path, *overrides: str) -> RunConfig:
    return RunConfig.from_dict(compose_config([
        "dataset=longmemeval_s", f"dataset.data_dir={data_dir}", "system=bm25", "system.k=1", "progress=false",
        f"store.cache_dir={tmp / 'cache'}", f"store.results_dir={tmp / 'runs'}", *overrides,
    ]))


def test_official_scores_use_a_deeper_ranking_but_the_context_keeps_k(data_dir, tmp_path):
    result = run(config(data_dir, tmp_path))
    records = {r["qid"]: r for r in result.records}
    first = records["q1"]
    # the context is the system's top k = 1 hit (the lamp-heavy filler turn)
    assert [h["doc_id"] for h in first["hits"]] == ["filler_0#0"]
    metrics = first["metrics"]
    assert metrics["recall_any@1"] == 0.0
    assert metrics["recall_any@3"] == 1.0  # only the deeper ranking reaches the gold user turn
    assert metrics["session_recall_all@3"] == 1.0
    # abstention and assistant-only evidence are skipped by the official rules ...
    for qid in ("q2_abs", "q3"):
        assert all(records[qid]["metrics"][f"{level}recall_any@{k}"] is None
                   for level in ("", "session_") for k in (1, 3, 5, 10, 30, 50))
    # ... while the all-turn variant still scores the assistant-evidence question
    assert records["q3"]["metrics"]["all_turns_recall_any@50"] is not None
    overall = result.summary.loc["overall"]
    assert overall["n"] == 3 and overall["n_scored"] == 1
    assert "session_ndcg@50" in result.summary.columns and "ndcg@30" in result.summary.columns

    again = run(config(data_dir, tmp_path))
    assert again.stats["retrieval_cache_hits"] == 3 and again.stats["ingested_documents"] == 0
    assert again.summary.equals(result.summary)


def test_without_metric_depth_only_the_top_k_is_scored(data_dir, tmp_path):
    result = run(config(data_dir, tmp_path, "dataset.metric_depth=null"))
    metrics = {r["qid"]: r for r in result.records}["q1"]["metrics"]
    assert metrics["recall_any@1"] == 0.0 and metrics["recall_any@50"] == 0.0
    assert math.isclose(metrics["session_recall_any@50"], 0.0)


def test_only_longmemeval_episodes_get_the_official_corpus():
    doc = Document("d1", "text", "author", None, "t1", meta={"role": "user"})  # OrgMemBench docs carry a role too
    plain = Episode("e", (doc,), (Question("q", "?", "C1", "a", evidence_ids=("d1",)),))
    assert official_corpus_of(plain) is None
    lme = Episode("e", (doc,), (Question("q", "?", "x", "a", evidence_ids=("d1",), meta={"evidence_sessions": ("t1",)}),))
    assert official_corpus_of(lme).gold == set()  # "t1" is no answer session: nothing is gold
