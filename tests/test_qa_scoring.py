"""How grades become the reported numbers: parsed-only ``<metric>`` and paper-comparable
``<metric>_paper`` (100/N over all N, an unparsable grade counting 0), LongMemEval_S over its
non-abstention questions with abstention as its own row, LoCoMo's lexical columns."""


import pytest

from harness.benchmarks.locomo import BENCHMARK as LOCOMO
from harness.benchmarks.longmemeval_s import BENCHMARK as LONGMEMEVAL_S
from harness.qa import QAItem, QAOutcome, score_record, qa_summary
from judges.aggregate import summarize
from judges.graders.locomo import LoCoMoJudge
from judges.graders.longmemeval import LongMemEvalJudge
from memory_protocol import Question

RUNS = 3


def lme_item(qid: str, qtype: str, abstention: bool = False) -> QAItem:
    question = Question(qid=qid, text="?", category=qtype, answer="18", meta={"abstention": abstention})
    return QAItem(question, "", {"category": qtype, "metrics": {}, "answer": "18 days"})


def grades(*scores):
    """One judge entry per run: 1.0 / 0.0 parsed, None unparsable."""
    return [{"run": run, "score": score, "parsed": score is not None} for run, score in enumerate(scores)]


def lme_summary(items_and_grades):
    outcome = QAOutcome(metric="accuracy", runs=RUNS, benchmark=LONGMEMEVAL_S)
    judge = LongMemEvalJudge()
    for item, entries in items_and_grades:
        score_record(item, judge, entries, "accuracy", RUNS, LONGMEMEVAL_S)
    rows = [{"category": item.record["category"], **item.record["metrics"]} for item, _ in items_and_grades]
    return qa_summary(summarize(rows, outcome.metric_keys, exclude_from_overall=outcome.exclude_from_overall), outcome)


def test_longmemeval_overall_leaves_abstention_out_and_shows_it_as_its_own_row():
    summary = lme_summary([
        (lme_item("a", "temporal-reasoning"), grades(1.0, 1.0, 1.0)),        # 100
        (lme_item("b", "temporal-reasoning"), grades(0.0, 0.0, 0.0)),        # 0
        (lme_item("c", "multi-session"), grades(1.0, 1.0, 0.0)),             # 66.7
        (lme_item("d_abs", "multi-session", abstention=True), grades(0.0, 0.0, 0.0)),  # 0, abstention
    ])
    # overall: the three non-abstention questions: (100 + 0 + 200/3) / 3
    assert summary.loc["overall", "n"] == 3
    assert summary.loc["overall", "accuracy"] == pytest.approx((100 + 0 + 200 / 3) / 3)
    assert summary.loc["abstention", "n"] == 1 and summary.loc["abstention", "accuracy"] == 0.0
    assert summary.loc["overall (all)", "n"] == 4
    assert summary.loc["overall (all)", "accuracy"] == pytest.approx((100 + 0 + 200 / 3 + 0) / 4)
    # task average: mean of the question-type rows (temporal 50, multi-session 66.7), abstention apart
    assert summary.loc["task_averaged", "accuracy"] == pytest.approx((50 + 200 / 3) / 2)


def test_unparsable_grades_are_left_out_of_the_score_and_count_zero_in_the_paper_number():
    summary = lme_summary([
        (lme_item("a", "multi-session"), grades(1.0, None, 1.0)),   # parsed mean 100; paper 2/3
        (lme_item("b", "multi-session"), grades(None, None, None)),  # unscored; paper 0
        (lme_item("c", "multi-session"), []),                        # answer failed; paper 0
    ])
    assert summary.loc["overall", "n_scored"] == 1 and summary.loc["overall", "n"] == 3
    assert summary.loc["overall", "accuracy"] == 100.0
    # 100/N over all N = 3 questions: (200/3 + 0 + 0) / 3
    assert summary.loc["overall", "accuracy_paper"] == pytest.approx(200 / 9)


def test_abstention_record_keeps_its_question_type():
    item = lme_item("x_abs", "knowledge-update", abstention=True)
    score_record(item, LongMemEvalJudge(), grades(1.0, 1.0, 1.0), "accuracy", RUNS, LONGMEMEVAL_S)
    assert item.record["category"] == "abstention" and item.record["question_type"] == "knowledge-update"


def test_locomo_records_both_f1_definitions_and_skip_adversarial():
    judge = LoCoMoJudge()
    question = Question(qid="c:1", text="?", category="single-hop", answer="the cat sat", meta={"category_id": 4})
    item = QAItem(question, "", {"category": "single-hop", "metrics": {}, "answer": "The cat, the cat."})
    score_record(item, judge, grades(1.0), "llm_judge", 1, LOCOMO)
    # multiset (paper eq. 8): 4/7; set (mem0): 4/5 -- see tests/test_lexical.py for the arithmetic
    assert item.record["metrics"]["f1"] == pytest.approx(400 / 7)
    assert item.record["metrics"]["f1_set"] == pytest.approx(80.0)
    adversarial = Question(qid="c:2", text="?", category="adversarial", answer="x", meta={"category_id": 5})
    skipped = QAItem(adversarial, "", {"category": "adversarial", "metrics": {}, "answer": "x"})
    score_record(skipped, judge, [], "llm_judge", 1, LOCOMO)
    metrics = skipped.record["metrics"]
    assert metrics["llm_judge"] is None and metrics["llm_judge_paper"] is None and metrics["f1"] is None


def test_outcome_all_failed_flag():
    assert QAOutcome("score", 1, stats={"qa_all_failed": True}).all_failed
    assert not QAOutcome("score", 1, stats={"qa_all_failed": False}).all_failed
    assert QAOutcome("llm_judge", 3, benchmark=LOCOMO).metric_keys[:2] == ["llm_judge", "llm_judge_paper"]


def test_first_distinct_errors_in_order_with_counts():
    from harness.qa import first_errors

    assert first_errors(["a", None, "b", "a", "c", "d"]) == [("a", 2), ("b", 1), ("c", 1)]
    assert first_errors([None, None]) == []


@pytest.mark.parametrize("answers, answer_failures, judge_calls, judge_failures, expected", [
    (3, 3, 0, 0, True),    # every answer failed (so nothing to judge)
    (3, 1, 6, 6, True),    # every judge call failed
    (3, 1, 6, 5, False),   # some grades came back
    (0, 0, 0, 0, False),   # nothing to do is not a failure
])
def test_all_failed(answers, answer_failures, judge_calls, judge_failures, expected):
    from harness.qa import all_failed

    assert all_failed(answers, answer_failures, judge_calls, judge_failures) is expected
