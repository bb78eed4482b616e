"""Retrieval metrics and their aggregation, checked against hand-computed values.

LongMemEval's nDCG (src/retrieval/eval_utils.py): DCG = rel[0] + sum_{i>=1} rel[i] / log2(i+1)
(0-based positions), ideal = the same over min(k, #relevant) ones. The standard nDCG (trec_eval,
used for OrgMemBench and LoCoMo) divides rel[i] by log2(i+2). The LongMemEval_S protocol cases below
were also run through the official functions outside this repository; the expected numbers are
those it printed (they agree with the hand computation written beside each).
"""

from __future__ import annotations

import math

import pytest

from judges.aggregate import OVERALL, OVERALL_ALL, format_table, natural_key, summarize
from judges.metrics.longmemeval import (
    OFFICIAL_KS,
    Turn,
    corpus_ranking,
    is_scored,
    official_corpus,
    official_metrics,
    widened_k,
)
from judges.metrics.ranking import (
    compute_question_metrics,
    dcg,
    in_budget_recall,
    ndcg_at_k,
    recall_all_at_k,
    recall_any_at_k,
    recall_at_k,
    standard_metrics_many,
)


def standard_metrics(ranked_ids, gold, ks):
    return standard_metrics_many([(ranked_ids, gold)], ks)[0]

RANKED = ["a", "b", "c", "d"]
GOLD = {"b", "d"}
LOG2_3 = math.log2(3)


# ------------------------------------------------------------------ document level


def test_recall_any_at_k():
    assert recall_any_at_k(RANKED, GOLD, 1) == 0.0
    assert recall_any_at_k(RANKED, GOLD, 2) == 1.0


def test_recall_all_at_k():
    assert recall_all_at_k(RANKED, GOLD, 2) == 0.0
    assert recall_all_at_k(RANKED, GOLD, 3) == 0.0
    assert recall_all_at_k(RANKED, GOLD, 4) == 1.0


def test_recall_at_k_is_fraction_of_gold():
    assert recall_at_k(RANKED, GOLD, 1) == 0.0
    assert recall_at_k(RANKED, GOLD, 2) == 0.5
    assert recall_at_k(RANKED, GOLD, 4) == 1.0
    # k beyond the ranking's length: nothing more is found
    assert recall_at_k(["b"], GOLD, 10) == 0.5


def test_dcg_uses_longmemeval_discount():
    # positions 0 and 1 undiscounted, position 2 divided by log2(3), position 3 by log2(4) = 2
    assert dcg([1, 1, 1, 1], 4) == pytest.approx(1 + 1 + 1 / LOG2_3 + 0.5)
    assert dcg([0, 1], 2) == pytest.approx(1.0)  # the common log2(i+2) discount would give 0.631
    assert dcg([1, 1, 1], 2) == pytest.approx(2.0)  # cut at k
    assert dcg([], 3) == 0.0


def test_ndcg_at_4_by_hand():
    # relevances of [a, b, c, d] = [0, 1, 0, 1]
    # DCG  = 0 + 1/log2(2) + 0 + 1/log2(4) = 1 + 0.5 = 1.5
    # IDCG = ideal [1, 1] = 1 + 1/log2(2) = 2
    # nDCG = 1.5 / 2 = 0.75   (the common log2(i+2) formula would give 0.651)
    assert ndcg_at_k(RANKED, GOLD, 4) == pytest.approx(0.75)


def test_ndcg_at_small_k_and_ideal_cut_at_k():
    # k=1: DCG = 0; k=2: DCG = 1, IDCG = 2 -> 0.5; k=3: DCG = 1, IDCG = 2 -> 0.5
    assert ndcg_at_k(RANKED, GOLD, 1) == 0.0
    assert ndcg_at_k(RANKED, GOLD, 2) == pytest.approx(0.5)
    assert ndcg_at_k(RANKED, GOLD, 3) == pytest.approx(0.5)
    # three gold, k=2: IDCG = min(2, 3) ones = 2; ranked [x, g1] -> DCG 1 -> 0.5
    assert ndcg_at_k(["x", "g1"], {"g1", "g2", "g3"}, 2) == pytest.approx(0.5)
    # ideal does not shrink with a short ranking: [g1] alone, k=5, two gold -> 1 / 2
    assert ndcg_at_k(["g1"], {"g1", "g2"}, 5) == pytest.approx(0.5)
    assert ndcg_at_k(["b", "d"], GOLD, 2) == pytest.approx(1.0)


def test_empty_gold_is_nan():
    for fn in (recall_any_at_k, recall_all_at_k, recall_at_k, ndcg_at_k):
        assert math.isnan(fn(RANKED, set(), 3)), fn.__name__


def test_bad_inputs_raise():
    with pytest.raises(ValueError):
        recall_any_at_k(RANKED, GOLD, 0)
    with pytest.raises(ValueError):
        ndcg_at_k(["a", "a", "b"], GOLD, 3)


# ------------------------------------------------------------------ standard metrics (trec_eval)


def test_standard_ndcg_uses_the_common_discount():
    # ranked [x, a], gold {a}: DCG = 1/log2(3) = 0.6309 against an ideal of 1 (LongMemEval's: 1.0)
    scores = standard_metrics(["x", "a"], {"a"}, ks=[1, 2])
    assert scores["ndcg@2"] == pytest.approx(1 / LOG2_3)
    assert ndcg_at_k(["x", "a"], {"a"}, 2) == pytest.approx(1.0)
    assert scores["ndcg@1"] == 0.0 and scores["recall_any@1"] == 0.0
    # [a, b, c, d], gold {b, d}: DCG@4 = 1/log2(3) + 1/log2(5); IDCG = 1 + 1/log2(3)
    expected = (1 / LOG2_3 + 1 / math.log2(5)) / (1 + 1 / LOG2_3)
    assert standard_metrics(RANKED, GOLD, ks=[4])["ndcg@4"] == pytest.approx(expected)
    assert expected == pytest.approx(0.6509, abs=1e-4)


def test_standard_recall_any_all_and_fraction():
    scores = standard_metrics(RANKED, GOLD, ks=[1, 2, 4, 10])
    assert [scores[f"recall_any@{k}"] for k in (1, 2, 4, 10)] == [0.0, 1.0, 1.0, 1.0]
    assert [scores[f"recall_all@{k}"] for k in (1, 2, 4, 10)] == [0.0, 0.0, 1.0, 1.0]
    assert [scores[f"recall@{k}"] for k in (1, 2, 4, 10)] == [0.0, 0.5, 1.0, 1.0]
    three = standard_metrics(["g1", "x", "g2", "g3"], {"g1", "g2", "g3"}, ks=[3, 4])
    assert three["recall@3"] == pytest.approx(2 / 3) and three["recall_all@3"] == 0.0
    assert three["recall_all@4"] == 1.0


def test_standard_metrics_edge_cases():
    assert all(math.isnan(v) for v in standard_metrics(RANKED, set(), ks=[2]).values())
    empty = standard_metrics([], {"a"}, ks=[3])
    assert empty["recall_any@3"] == 0.0 and empty["ndcg@3"] == 0.0
    # a repeated id counts once, at its first position
    assert standard_metrics(["x", "x", "a"], {"a"}, ks=[2])["recall_any@2"] == 1.0
    with pytest.raises(ValueError):
        standard_metrics(RANKED, GOLD, ks=[0])


# ------------------------------------------------------------------ LongMemEval_S official protocol


def _turns(spec):
    return [Turn(f"{sid}#{i}", sid, role, has) for sid, turns in spec for i, (role, has) in enumerate(turns)]


# sa and sb are filler sessions; answer_x and answer_y are answer sessions (ids contain "answer").
HAYSTACK = _turns([
    ("sa", [("user", None), ("assistant", None), ("user", None)]),
    ("answer_x", [("user", False), ("assistant", True), ("user", True)]),
    ("answer_y", [("user", True), ("assistant", False)]),
    ("sb", [("user", None), ("assistant", None)]),
])
CORPUS = official_corpus(HAYSTACK)


def test_official_corpus_is_user_turns_with_non_evidence_relabelled():
    assert list(CORPUS.session_of) == ["sa#0", "sa#2", "answer_x#0", "answer_x#2", "answer_y#0", "sb#0"]
    assert CORPUS.gold == {"answer_x#2", "answer_y#0"}  # the assistant turn answer_x#1 is not gold
    assert CORPUS.session_of["answer_x#0"] != "answer_x"  # a user turn without has_answer
    assert CORPUS.gold_sessions == {"answer_x", "answer_y"}


def test_skipped_questions():
    assert is_scored("q1", CORPUS)
    assert not is_scored("q1_abs", CORPUS)
    assistant_only = official_corpus(_turns([("answer_z", [("user", False), ("assistant", True)])]))
    assert not is_scored("q2", assistant_only)
    assert all(math.isnan(v) for v in official_metrics("q2", ["answer_z#1"], assistant_only).values())
    assert all(math.isnan(v) for v in official_metrics("q1_abs", ["answer_x#2"], CORPUS).values())


def test_assistant_turns_leave_the_ranking_before_the_cut():
    ranking = ["answer_x#1", "sb#1", "answer_y#0", "unknown"]
    assert corpus_ranking(ranking, CORPUS) == ["answer_y#0"]
    scores = official_metrics("q", ranking, CORPUS, ks=[1])
    assert scores["recall_any@1"] == 1.0  # answer_y#0 is the first user turn
    # the all-turn rules see the gold assistant turn first instead
    assert compute_question_metrics(ranking, {"answer_x#1", "answer_x#2", "answer_y#0"}, [1])["recall_any@1"] == 1.0


def test_official_turn_and_session_scores_case_1():
    # user-turn ranking [x0 (noans), sa0, x2 (gold), sa2, y0 (gold), sb0], with assistant turns mixed in
    ranking = ["answer_x#1", "answer_x#0", "sa#0", "answer_x#2", "sa#2", "sb#1", "answer_y#0", "sb#0"]
    s = official_metrics("q", ranking, CORPUS, ks=[1, 3, 4, 5, 10])
    # k=1: the first user turn is answer_x#0, a non-evidence turn of a gold session: no hit at either level
    assert (s["recall_any@1"], s["session_recall_any@1"], s["session_ndcg@1"]) == (0.0, 0.0, 0.0)
    # k=3: rel [0, 0, 1] -> DCG 1/log2(3) = 0.6309, ideal two gold turns -> 2: 0.315465
    assert (s["recall_any@3"], s["recall_all@3"]) == (1.0, 0.0)
    assert s["ndcg@3"] == pytest.approx(0.315465, abs=1e-6)
    assert s["session_ndcg@3"] == pytest.approx(0.315465, abs=1e-6)
    # k=4: turn level still misses y0; session level widens to 5 turns (4 distinct labels) and has both
    assert (s["recall_all@4"], s["session_recall_all@4"]) == (0.0, 1.0)
    # rel [0, 0, 1, 0, 1] -> (0.6309 + 1/log2(5)) / 2 = 0.530803
    assert s["session_ndcg@4"] == pytest.approx(0.530803, abs=1e-6)
    assert s["ndcg@5"] == pytest.approx(0.530803, abs=1e-6) and s["recall_all@5"] == 1.0
    assert s["session_ndcg@10"] == pytest.approx(0.530803, abs=1e-6)


def test_official_session_widening_case_2():
    # user turns only: labels [sa, sa, answer_y, sb, x-noans, answer_x]
    ranking = ["sa#0", "sa#2", "answer_y#0", "sb#0", "answer_x#0", "answer_x#2"]
    s = official_metrics("q", ranking, CORPUS, ks=[2, 4, 5, 50])
    assert s["recall_any@2"] == 0.0
    assert s["session_recall_any@2"] == 1.0  # two turns of sa -> widened to 3 turns
    assert s["session_ndcg@2"] == pytest.approx(0.315465, abs=1e-6)
    # the relabelled non-evidence turn counts as a distinct session: k=4 stops before answer_x#2
    assert s["session_recall_all@4"] == 0.0
    assert s["session_recall_all@5"] == 1.0
    # rel [0, 0, 1, 0, 0, 1] -> (1/log2(3) + 1/log2(6)) / 2 = 0.508891
    assert s["session_ndcg@5"] == pytest.approx(0.508891, abs=1e-6)
    assert s["ndcg@50"] == pytest.approx(0.508891, abs=1e-6)
    assert s["session_ndcg@50"] == pytest.approx(0.508891, abs=1e-6)


def test_widened_k():
    assert widened_k(["A", "A", "B", "C"], 2) == 3
    assert widened_k(["A", "B"], 2) == 2
    assert widened_k(["A", "A"], 2) == 3  # never reached: one past the end, as the official loop ends
    assert widened_k([], 5) == 5


def test_official_keys():
    keys = list(official_metrics("q", [], CORPUS))
    assert OFFICIAL_KS == (1, 3, 5, 10, 30, 50)
    assert keys[:3] == ["recall_any@1", "recall_all@1", "ndcg@1"]
    assert keys[18:21] == ["session_recall_any@1", "session_recall_all@1", "session_ndcg@1"]
    assert len(keys) == 36
    assert official_metrics("q", [], CORPUS, ks=[5])["recall_any@5"] == 0.0


# ------------------------------------------------------------------ in-budget recall


def test_in_budget_recall_with_offsets():
    starts = {"a": 0, "b": 120, "d": 400}
    assert in_budget_recall({"b", "d"}, starts, 500) == 1.0
    assert in_budget_recall({"b", "d"}, starts, 400) == 0.5  # d starts exactly at the budget: unseen
    assert in_budget_recall({"b", "d"}, starts, 121) == 0.5
    assert in_budget_recall({"b", "d"}, starts, 120) == 0.0
    assert in_budget_recall({"b", "z"}, starts, 10_000) == 0.5  # z never retrieved
    assert in_budget_recall({"b", "z"}, starts, None) == 0.5
    assert math.isnan(in_budget_recall(set(), starts, 100))
    with pytest.raises(ValueError):
        in_budget_recall({"b"}, starts, -1)


# ------------------------------------------------------------------ one question


def test_compute_question_metrics_keys_and_values():
    scores = compute_question_metrics(RANKED, GOLD, ks=[2, 4])
    assert list(scores) == [
        "recall_any@2", "recall_all@2", "recall@2", "ndcg@2",
        "recall_any@4", "recall_all@4", "recall@4", "ndcg@4",
    ]
    assert (scores["recall_any@2"], scores["recall_all@2"], scores["recall@2"]) == (1.0, 0.0, 0.5)
    assert scores["ndcg@2"] == pytest.approx(0.5)
    assert scores["recall_all@4"] == 1.0
    assert scores["ndcg@4"] == pytest.approx(0.75)


# ------------------------------------------------------------------ aggregation


def _records():
    return [
        {"qid": "q1", "category": "C2", "recall_any@2": 1.0, "ndcg@2": 0.5},
        {"qid": "q2", "category": "C2", "recall_any@2": 0.0, "ndcg@2": 0.0},
        {"qid": "q3", "category": "C10", "recall_any@2": 1.0, "ndcg@2": 1.0},
        {"qid": "q4", "category": "C1", "recall_any@2": float("nan"), "ndcg@2": float("nan")},
        {"qid": "q5", "category": "C1", "recall_any@2": 1.0, "ndcg@2": 0.25},
    ]


def test_natural_key_order():
    assert sorted(["C10", "C2", "C1", "abs", "B"], key=natural_key) == ["abs", "B", "C1", "C2", "C10"]


def test_summarize_ignores_nan_and_counts_it():
    df = summarize(_records(), ["recall_any@2", "ndcg@2"])
    assert list(df.index) == ["C1", "C2", "C10", OVERALL]
    assert list(df.columns) == ["n", "n_scored", "recall_any@2", "ndcg@2"]
    assert df.loc["C1", "n"] == 2
    assert df.loc["C1", "n_scored"] == 1
    assert df.loc["C1", "recall_any@2"] == 1.0
    assert df.loc["C1", "ndcg@2"] == 0.25
    assert df.loc["C2", "recall_any@2"] == 0.5
    assert df.loc[OVERALL, "n"] == 5
    assert df.loc[OVERALL, "n_scored"] == 4
    assert df.loc[OVERALL, "recall_any@2"] == pytest.approx(3 / 4)
    assert df.loc[OVERALL, "ndcg@2"] == pytest.approx((0.5 + 0 + 1 + 0.25) / 4)
    assert OVERALL_ALL not in df.index


def test_summarize_exclude_from_overall_gives_both_rows():
    df = summarize(_records(), ["recall_any@2", "ndcg@2"], exclude_from_overall={"C10"})
    assert list(df.index) == ["C1", "C2", "C10", OVERALL, OVERALL_ALL]
    # overall without C10: recall_any over q1, q2, q5 = 2/3; ndcg (0.5 + 0 + 0.25) / 3 = 0.25
    assert df.loc[OVERALL, "n"] == 4
    assert df.loc[OVERALL, "n_scored"] == 3
    assert df.loc[OVERALL, "recall_any@2"] == pytest.approx(2 / 3)
    assert df.loc[OVERALL, "ndcg@2"] == pytest.approx(0.25)
    # overall (all): everything, q4 still NaN-excluded
    assert df.loc[OVERALL_ALL, "n"] == 5
    assert df.loc[OVERALL_ALL, "recall_any@2"] == pytest.approx(3 / 4)
    assert df.loc[OVERALL_ALL, "ndcg@2"] == pytest.approx(1.75 / 4)
    # excluding a category that is absent adds no extra row
    assert OVERALL_ALL not in summarize(_records(), ["ndcg@2"], exclude_from_overall={"C9"}).index


def test_summarize_all_nan_metric_and_custom_key():
    records = [{"type": "x", "m": None}, {"type": "y", "m": 0.5}, {"m": 1.0}]
    df = summarize(records, ["m", "missing"], category_key="type")
    assert df.index.name == "type"
    assert list(df.index) == ["uncategorized", "x", "y", OVERALL]
    assert math.isnan(df.loc["x", "m"])
    assert df.loc["x", "n_scored"] == 0
    assert math.isnan(df.loc[OVERALL, "missing"])
    assert df.loc[OVERALL, "m"] == pytest.approx(0.75)


def test_format_table_renders_numbers():
    df = summarize(_records(), ["recall_any@2", "ndcg@2"], exclude_from_overall={"C10"})
    text = format_table(df)
    lines = text.splitlines()
    assert len(lines) == 2 + 5
    assert lines[0].split("|")[1].strip() == "category"
    assert set(lines[1]) <= {"|", "-", ":"}
    assert len({len(line) for line in lines}) == 1  # padded to equal width
    c1 = [cell.strip() for cell in lines[2].strip("|").split("|")]
    assert c1 == ["C1", "2", "1", "1.000", "0.250"]
    overall = [cell.strip() for cell in lines[5].strip("|").split("|")]
    assert overall == ["overall", "4", "3", "0.667", "0.250"]
    assert "0.4375" in format_table(df, floatfmt=".4f")
    assert "nan" in format_table(summarize([{"category": "C1", "m": None}], ["m"]))
