"""Our answer and retrieval metrics against published figures and hand-worked values.

mem0's published LoCoMo results (``../shared/data/published/mem0/results_81a0fba.json``, written by
its ``evals.py``) give every question's answer with its F1 over token sets and BLEU-1: ours must give
the same on 1,535 of the 1,540 (the other five hold a single-quoted phrase, which NLTK 3.10.2 and
later tokenise differently from the version mem0 ran; SOURCE.md there). The full-context audit
files give three judge labels per question and the per-run accuracy, mean and std their metadata
reports. LongMemEval's retrieval formulas (turn and session level, its nDCG discount) are pinned by
small cases worked by hand from their stated definitions (``judges/metrics/longmemeval.py``).
"""

from __future__ import annotations

import json
import statistics

import pytest

from judges.metrics.lexical import bleu1, f1_set
from judges.metrics.longmemeval import OfficialCorpus, session_scores, turn_scores
from judges.metrics.punkt_data import ensure_punkt_data
from tests.data_paths import data_path


def _published(relative: str) -> dict:
    path = data_path(f"published/{relative}")
    if path is None:
        pytest.skip(f"benchmark data not found: published/{relative}")
    return json.loads(path.read_text(encoding="utf-8"))


def test_f1_set_and_bleu1_equal_mem0s_published_per_question_values():
    ensure_punkt_data()
    rows = [row for rows in _published("mem0/results_81a0fba.json").values() for row in rows
            if str(row["category"]) != "5"]
    assert len(rows) == 1540
    f1_same = sum(f1_set(r["response"], r["answer"]) == pytest.approx(r["f1_score"], abs=1e-12) for r in rows)
    differ = [r for r in rows if bleu1(r["response"], r["answer"]) != pytest.approx(r["bleu_score"], abs=1e-12)]
    assert f1_same == 1540
    assert len(differ) <= 5 and all("'" in r["response"] + str(r["answer"]) for r in differ)


@pytest.mark.parametrize("name", ["gpt-4o-mini-memos", "gpt-4.1-mini-cot"])
def test_three_judge_runs_aggregate_as_the_audit_reports(name):
    """Per run: the share of CORRECT labels; then the mean and the population std over runs, as the
    harness aggregates ``judge.runs`` (harness.qa.add_judge_columns, ddof=0)."""
    data = _published(f"audit/{name}.eval_results.json")
    rows = [row for rows in data["detailed_results"].values() for row in rows]
    runs = [sum(bool(r["llm_judgments"][f"judgment_{i}"]) for r in rows) / len(rows) for i in (1, 2, 3)]
    meta = data["metadata"]
    assert runs == pytest.approx(meta["run_scores"], abs=1e-12)
    assert statistics.fmean(runs) == pytest.approx(meta["mean_accuracy"], abs=1e-12)
    assert statistics.pstdev(runs) == pytest.approx(meta["std_accuracy"], abs=1e-12)


# ---------------------------------------------------------------- LongMemEval, worked by hand
# dcg: positions 0 and 1 undiscounted, position i >= 1 divided by log2(i + 1); log2(3) = 1.5849625.
LOG2_3 = 1.584962500721156
CORPUS = OfficialCorpus({"g1": "answer_a", "g2": "answer_a", "x": "s2", "y": "s3"}, frozenset({"g1", "g2"}))


@pytest.mark.parametrize("ranking,k,expected", [
    (["g1", "x", "g2"], 1, (1.0, 0.0, 1.0)),
    (["g1", "x", "g2"], 3, (1.0, 1.0, (1 + 1 / LOG2_3) / 2)),
    (["x", "g1"], 3, (1.0, 0.0, 1.0 / 2)),  # position 1 is not discounted
    (["x", "y", "g2"], 3, (1.0, 0.0, (1 / LOG2_3) / 2)),
    (["x", "y"], 3, (0.0, 0.0, 0.0)),
])
def test_turn_scores(ranking, k, expected):
    assert turn_scores(ranking, CORPUS, k) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("ranking,k,expected", [
    (["x", "y", "g1"], 1, (0.0, 0.0, 0.0)),
    (["x", "y", "g1"], 3, (1.0, 1.0, (1 / LOG2_3) / 2)),  # 2 corpus turns sit in the gold session
    (["x", "x", "g1"], 2, (1.0, 1.0, (1 / LOG2_3) / 2)),  # k widened to 3 turns for 2 sessions
])
def test_session_scores(ranking, k, expected):
    assert session_scores(ranking, CORPUS, k) == pytest.approx(expected, abs=1e-12)
