"""Retrieval metrics and their aggregation, checked against hand-computed values.

The nDCG formula is LongMemEval's (src/retrieval/eval_utils.py): DCG = rel[0] + sum_{i>=1} rel[i] / log2(i+1)
(0-based positions), ideal = the same over min(k, #relevant) ones.
"""

from __future__ import annotations

import math
import random

import pytest

from judges.aggregate import OVERALL, OVERALL_ALL, format_table, natural_key, summarize
from judges.metrics.retrieval import (
    QuestionMetrics,
    dcg,
    in_budget_recall,
    mask_non_evidence_docs,
    ndcg_at_k,
    recall_all_at_k,
    recall_any_at_k,
    recall_at_k,
    compute_question_metrics,
    session_ndcg_at_k,
    session_prefix_length,
    to_sessions,
)

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


# ------------------------------------------------------------------ session level

SESSION_OF = {"a1": "A", "a2": "A", "a3": "A", "b1": "B", "c1": "C", "c2": "C"}


def flat_metrics(ranked, gold, ks, **options) -> dict[str, float]:
    return compute_question_metrics(ranked, gold, ks, **options).as_dict()


def test_to_sessions_dedups_keeping_first_occurrence():
    assert to_sessions(["a1", "a2", "b1", "a3", "c1", "b1x"], SESSION_OF) == ["A", "B", "C", "b1x"]
    assert to_sessions(["c2", "a1", "c1"], SESSION_OF) == ["C", "A"]


def test_session_truncation_happens_after_dedup():
    # turns [a1, a2, b1, c1] -> sessions [A, B, C]; top-2 sessions = [A, B] (not the turns [a1, a2])
    ranked = ["a1", "a2", "b1", "c1"]
    assert session_prefix_length(ranked, SESSION_OF, 2) == 3
    assert session_prefix_length(ranked, SESSION_OF, 9) == 4
    scores = compute_question_metrics(ranked, {"b1"}, ks=[1, 2], session_of=SESSION_OF).as_dict()
    assert scores["recall_any@2"] == 0.0  # document level: b1 is 3rd
    assert scores["session_recall_any@1"] == 0.0
    assert scores["session_recall_any@2"] == 1.0
    assert scores["session_recall_all@2"] == 1.0


def test_session_ndcg_by_hand():
    ranked = ["a1", "b1", "a2", "c1"]
    # k=2: prefix with 2 distinct sessions = [a1, b1], rel [1, 0] -> DCG 1;
    #      gold-session documents in the corpus: a1, a2, a3 -> R = 3; IDCG = min(2, 3) ones = 2 -> 0.5
    assert session_ndcg_at_k(ranked, SESSION_OF, {"A"}, 2) == pytest.approx(0.5)
    # k=3: prefix = [a1, b1, a2, c1] (m = 4), rel [1, 0, 1, 0] -> DCG = 1 + 1/log2(3) = 1.6309
    #      IDCG = min(4, 3) ones = 1 + 1 + 1/log2(3) = 2.6309 -> 0.6199
    expected = (1 + 1 / LOG2_3) / (2 + 1 / LOG2_3)
    assert session_ndcg_at_k(ranked, SESSION_OF, {"A"}, 3) == pytest.approx(expected)
    assert expected == pytest.approx(0.61990, abs=1e-4)
    assert math.isnan(session_ndcg_at_k(ranked, SESSION_OF, set(), 3))


def test_gold_sessions_default_to_sessions_of_gold_documents():
    ranked = ["c1", "a1", "b1"]
    derived = flat_metrics(ranked, {"a2", "b1"}, ks=[2], session_of=SESSION_OF)
    explicit = flat_metrics(ranked, {"a2", "b1"}, ks=[2], session_of=SESSION_OF, gold_sessions={"A", "B"})
    assert derived == explicit
    assert derived["session_recall_any@2"] == 1.0  # A at session rank 2
    assert derived["session_recall_all@2"] == 0.0  # B at session rank 3
    assert derived["session_recall@2"] == 0.5
    assert derived["recall_any@2"] == 0.0  # a2 itself was not retrieved


def test_mask_non_evidence_docs():
    masked = mask_non_evidence_docs(SESSION_OF, {"a2"})
    assert masked["a2"] == "A"
    assert masked["a1"] == "A#non-evidence"
    assert masked["b1"] == "B"
    # retrieving a non-evidence turn of A no longer reaches A
    assert flat_metrics(["a1", "b1"], {"a2"}, ks=[2], session_of=masked)["session_recall_any@2"] == 0.0
    assert flat_metrics(["a1", "b1"], {"a2"}, ks=[2], session_of=SESSION_OF)["session_recall_any@2"] == 1.0


def _longmemeval_reference(rankings, gold_turns, corpus_ids, turn_session, k):
    """Independent index-based restatement of LongMemEval's turn->session evaluation (test oracle)."""
    sess_ids = [turn_session[c] for c in corpus_ids]
    gold = {turn_session[g] for g in gold_turns}
    width = k
    while width <= len(sess_ids) and len({sess_ids[i] for i in rankings[:width]}) < k:
        width += 1
    top = {sess_ids[i] for i in rankings[:width]}
    any_hit = float(bool(gold & top))
    all_hit = float(gold <= top)
    rel_all = sorted((1.0 if s in gold else 0.0 for s in sess_ids), reverse=True)
    rel_ranked = [1.0 if sess_ids[i] in gold else 0.0 for i in rankings[:width]]

    def disc(rels):
        rels = rels[:width]
        return sum(r if i == 0 else r / math.log2(i + 1) for i, r in enumerate(rels))

    ideal = disc(rel_all)
    return any_hit, all_hit, (disc(rel_ranked) / ideal if ideal else 0.0)


def test_session_metrics_match_longmemeval_reference_on_random_rankings():
    rng = random.Random(7)
    for _ in range(200):
        n_sessions = rng.randint(2, 8)
        turn_session = {f"s{s}_{t}": f"s{s}" for s in range(n_sessions) for t in range(rng.randint(1, 4))}
        corpus_ids = list(turn_session)
        gold_turns = set(rng.sample(corpus_ids, rng.randint(1, 3)))
        rankings = list(range(len(corpus_ids)))
        rng.shuffle(rankings)
        ranked_ids = [corpus_ids[i] for i in rankings]
        for k in (1, 2, 3, 5, 10):
            ref_any, ref_all, ref_ndcg = _longmemeval_reference(rankings, gold_turns, corpus_ids, turn_session, k)
            got = flat_metrics(ranked_ids, gold_turns, ks=[k], session_of=turn_session)
            assert got[f"session_recall_any@{k}"] == ref_any
            assert got[f"session_recall_all@{k}"] == ref_all
            assert got[f"session_ndcg@{k}"] == pytest.approx(ref_ndcg)


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


# ------------------------------------------------------------------ score_question


def test_flat_metric_keys_and_values():
    scores = flat_metrics(
        RANKED, GOLD, ks=[2, 4], block_starts={"a": 0, "b": 50, "c": 90, "d": 130}, budget=100
    )
    assert list(scores) == [
        "recall_any@2", "recall_all@2", "recall@2", "ndcg@2",
        "recall_any@4", "recall_all@4", "recall@4", "ndcg@4",
        "in_budget_recall",
    ]
    assert scores["recall_any@2"] == 1.0
    assert scores["recall_all@2"] == 0.0
    assert scores["recall@2"] == 0.5
    assert scores["ndcg@2"] == pytest.approx(0.5)
    assert scores["recall_all@4"] == 1.0
    assert scores["ndcg@4"] == pytest.approx(0.75)
    assert scores["in_budget_recall"] == 0.5  # b at 50 < 100, d at 130 >= 100
    assert not any(key.startswith("session_") for key in scores)


def test_compute_question_metrics_dataclass():
    metrics = compute_question_metrics(["a1", "b1"], {"a1"}, ks=[1], session_of=SESSION_OF)
    assert isinstance(metrics, QuestionMetrics)
    assert metrics.n_gold == 1
    assert metrics.n_gold_sessions == 1
    assert metrics.documents[0].k == 1
    assert metrics.documents[0].recall_any == 1.0
    assert metrics.sessions[0].ndcg == pytest.approx(1 / 1)  # a1 first; IDCG over min(1, R=3) = 1
    assert metrics.in_budget_recall is None
    assert "in_budget_recall" not in metrics.as_dict()
    with pytest.raises(ValueError):
        compute_question_metrics(["a"], {"a"}, ks=[1], budget=10)


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
