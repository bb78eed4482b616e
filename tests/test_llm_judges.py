"""Judge prompts (templates, requests) and verdict parsing for OrgMemBench, LoCoMo and LongMemEval."""

from datetime import date
from pathlib import Path

import pytest

from judges.graders import Judge
from judges.graders.locomo import LoCoMoJudge
from judges.graders.longmemeval import LongMemEvalJudge
from judges.graders.orgmem import OrgMemJudge
from judges.graders.locomo import parse_locomo
from judges.graders.longmemeval import (
    KIND_BY_QUESTION_TYPE,
    longmemeval_kind,
    parse_yes_no,
)
from judges.graders.orgmem import parse_orgmem
from judges.templates import LONGMEMEVAL_KINDS, PROMPTS_DIR, PromptTemplate, load_template
from judges.graders import extract_json_objects
from memory_protocol import Question, RubricFacet

ALL_TEMPLATE_NAMES = ["answer", "orgmem_answer", "orgmem_rubric", "locomo_judge"] + [f"longmemeval_{k}" for k in LONGMEMEVAL_KINDS]


def orgmem_question(weights=(0.25, 0.25, 0.25, 0.25)) -> Question:
    facets = tuple(
        RubricFacet(facet_id=f"C1.sub{i + 1}", max_score=w, criterion=f"The answer must state fact number {i + 1}.",
                    fail_criterion=f"The answer omits fact number {i + 1}.")
        for i, w in enumerate(weights)
    )
    return Question(
        qid="Q-0001",
        text="What's the current status of Nia Osei at Helix, and when did it change?",
        category="C1",
        answer="Current value: departing in the 15% layoff\nChange date: 2023-09-15",
        rubric=facets,
        meta={"ground_truth": {"current_value": "Departing in the 15% workforce reduction.",
                               "change_date": "2023-09-15"}},
    )


def lme_question(qtype: str, abstention: bool = False) -> Question:
    return Question(
        qid="q42_abs" if abstention else "q42",
        text="How many days passed between my two dentist visits?",
        category=qtype,
        answer="18 days. 19 days (including the last day) is also acceptable.",
        as_of=date(2023, 5, 30),
        meta={"abstention": abstention},
    )


def locomo_question(category_id: int = 2, name: str = "temporal") -> Question:
    return Question(qid="conv-26:q3", text="When did Caroline go to the LGBTQ support group?",
                    category=name, answer="7 May 2023", meta={"category_id": category_id})


def user_content(messages):
    assert len(messages) == 1 and messages[0]["role"] == "user"
    return messages[0]["content"]


# ------------------------------------------------------------------------------------ templates


@pytest.mark.parametrize("name", ALL_TEMPLATE_NAMES)
def test_builtin_templates_load_without_comment_lines(name):
    template = load_template(name)
    assert template.name == name
    assert "#:" not in template.text
    assert len(template.sha256) == 64 and template.sha256 == PromptTemplate(name, template.text).sha256
    assert template.source == str(PROMPTS_DIR / f"{name}.txt")


def test_template_hash_changes_with_text():
    base = load_template("locomo_judge")
    edited = PromptTemplate(name="locomo_judge", text=base.text + " Be brief.")
    same = PromptTemplate(name="locomo_judge", text=base.text, source="elsewhere")
    assert edited.sha256 != base.sha256
    assert same.sha256 == base.sha256  # the source path is not part of the hash


def test_builtin_templates_have_distinct_hashes():
    hashes = {load_template(name).sha256 for name in ALL_TEMPLATE_NAMES}
    assert len(hashes) == len(ALL_TEMPLATE_NAMES)


def test_prompt_file_missing_placeholder_raises_naming_it_and_file(tmp_path):
    bad = tmp_path / "my_locomo.txt"
    bad.write_text("Question: {question}\nGold: {gold_answer}\nSay CORRECT or WRONG.\n", encoding="utf-8")
    with pytest.raises(ValueError) as info:
        load_template("locomo_judge", str(bad))
    message = str(info.value)
    assert "{response}" in message and str(bad) in message


def test_prompt_file_unknown_or_positional_placeholder_raises(tmp_path):
    unknown = tmp_path / "u.txt"
    unknown.write_text("{question} {gold_answer} {response} {context}", encoding="utf-8")
    with pytest.raises(ValueError, match=r"unknown placeholder '\{context\}'"):
        load_template("locomo_judge", unknown)
    positional = tmp_path / "p.txt"
    positional.write_text("Question: {}\nCorrect Answer: {}\nModel Response: {}", encoding="utf-8")
    with pytest.raises(ValueError, match="positional placeholder"):
        load_template("longmemeval_default", positional)


def test_prompt_file_with_official_placeholder_names_is_used_verbatim(tmp_path):
    # mem0's prompt names the system answer {generated_answer}; it is accepted for {response}
    official = tmp_path / "official.txt"
    official.write_text("#: a comment\nQ={question} G={gold_answer} A={generated_answer} as {{\"label\": ...}}\n",
                        encoding="utf-8")
    template = load_template("locomo_judge", official)
    assert template.text == 'Q={question} G={gold_answer} A={generated_answer} as {{"label": ...}}'
    question = Question("q1", "Where?", "single-hop", "Paris", meta={"category_id": 4})
    content = user_content(LoCoMoJudge(template).request(question, "In Paris."))
    assert content == 'Q=Where? G=Paris A=In Paris. as {"label": ...}'
    assert template.sha256 != load_template("locomo_judge").sha256


def test_missing_prompt_file_and_unknown_name():
    with pytest.raises(FileNotFoundError):
        load_template("locomo_judge", "/nonexistent/prompt.txt")
    with pytest.raises(ValueError, match="unknown prompt template"):
        load_template("nope")


def test_every_template_renders_with_question_and_answer():
    answer = "Nia Osei is leaving in the 15% layoff; it changed on 2023-09-15 (ANSWER-MARK)."
    q = orgmem_question()
    content = user_content(OrgMemJudge().request(q, answer))
    assert q.text in content and answer in content
    for facet in q.rubric:
        assert facet.facet_id in content and facet.criterion in content and facet.fail_criterion in content
    assert '"change_date": "2023-09-15"' in content  # the structured ground truth, as JSON
    assert '{"C1.sub1": <fraction>, "C1.sub2": <fraction>, "C1.sub3": <fraction>, "C1.sub4": <fraction>}' in content

    lq = locomo_question()
    content = user_content(LoCoMoJudge().request(lq, "On 7 May 2023 (ANSWER-MARK)."))
    assert lq.text in content and "7 May 2023 (ANSWER-MARK)." in content and "Gold answer: 7 May 2023" in content
    assert '{"reasoning": "<one sentence>", "label": "CORRECT"}' in content  # doubled braces rendered once

    judge = LongMemEvalJudge()
    for qtype in KIND_BY_QUESTION_TYPE:
        for abstention in (False, True):
            mq = lme_question(qtype, abstention)
            content = user_content(judge.request(mq, "19 days (ANSWER-MARK)."))
            assert mq.text in content and "19 days (ANSWER-MARK)." in content and mq.answer in content
            assert "{" not in content and "}" not in content


def test_orgmem_answer_cut_at_6000_chars():
    q = orgmem_question()
    long_answer = "x" * 6000 + "TAIL-NOT-SHOWN"
    content = user_content(OrgMemJudge().request(q, long_answer))
    assert "x" * 6000 in content and "TAIL-NOT-SHOWN" not in content
    content = user_content(OrgMemJudge(max_answer_chars=None).request(q, long_answer))
    assert "TAIL-NOT-SHOWN" in content


# ------------------------------------------------------------------------------------ OrgMemBench


def test_orgmem_weighted_score_quarter_weights():
    # 0.25*1 + 0.25*0.5 + 0.25*0 + 0.25*1 = 0.625, over total weight 1.0
    raw = '{"C1.sub1": 1, "C1.sub2": 0.5, "C1.sub3": 0, "C1.sub4": 1}'
    verdict = parse_orgmem(raw, orgmem_question())
    assert verdict.parsed and verdict.score == pytest.approx(0.625)
    assert verdict.detail["fractions"] == {"C1.sub1": 1.0, "C1.sub2": 0.5, "C1.sub3": 0.0, "C1.sub4": 1.0}


def test_orgmem_unequal_weights_and_any_fraction():
    # weights 0.5, 0.3, 0.2 -> (0.5*0.8 + 0.3*0.25 + 0.2*1) / 1.0 = 0.4 + 0.075 + 0.2 = 0.675
    q = orgmem_question(weights=(0.5, 0.3, 0.2))
    verdict = parse_orgmem('{"C1.sub1": 0.8, "C1.sub2": "0.25", "C1.sub3": 1.0}', q)
    assert verdict.score == pytest.approx(0.675)
    # weights that do not sum to 1: (2*1 + 1*0 + 1*0.5) / 4 = 0.625
    q = orgmem_question(weights=(2, 1, 1))
    assert parse_orgmem('{"C1.sub1": 1, "C1.sub2": 0, "C1.sub3": 0.5}', q).score == pytest.approx(0.625)


def test_orgmem_fenced_json_with_prose_and_case_insensitive_ids():
    raw = ("Here is my grading.\n```json\n"
           '{"c1.SUB1": 1, "C1.sub2": 1, "c1.sub3": 0.5, "C1.Sub4": 0}\n'
           "```\nThe answer missed the date.")
    verdict = parse_orgmem(raw, orgmem_question())
    assert verdict.parsed and verdict.score == pytest.approx(0.625)
    assert set(verdict.detail["fractions"]) == {"C1.sub1", "C1.sub2", "C1.sub3", "C1.sub4"}


def test_orgmem_prose_wrapped_and_nested_json():
    raw = ('After checking each facet: {"scores": {"C1.sub1": 0, "C1.sub2": 0, "C1.sub3": 1, "C1.sub4": 0}, '
           '"rationale": "only the date is right"} -- done.')
    verdict = parse_orgmem(raw, orgmem_question())
    assert verdict.parsed and verdict.score == pytest.approx(0.25)


def test_orgmem_last_complete_object_wins_over_a_draft():
    raw = ('Draft: {"C1.sub1": 0, "C1.sub2": 0, "C1.sub3": 0, "C1.sub4": 0}\n'
           'Final: {"C1.sub1": 1, "C1.sub2": 1, "C1.sub3": 1, "C1.sub4": 1}')
    assert parse_orgmem(raw, orgmem_question()).score == pytest.approx(1.0)


@pytest.mark.parametrize("raw, error", [
    ("The answer is mostly right, I'd say 0.7.", "names a rubric facet"),
    ('{"C1.sub1": 1, "C1.sub2": 0.5, "C1.sub3": 0', "names a rubric facet"),  # truncated
    ('{"sub1": 1, "sub2": 1}', "names a rubric facet"),
])
def test_orgmem_reply_without_facets_is_unparsed(raw, error):
    verdict = parse_orgmem(raw, orgmem_question())
    assert verdict.parsed is False and verdict.score is None and error in verdict.detail["error"]


def test_orgmem_missing_or_non_numeric_facet_counts_zero_as_the_official_judge():
    # official judge_one: sp_scores.get(id, 0.0) -> a missing facet is 0; weights 0.25 each
    verdict = parse_orgmem('{"C1.sub1": 1, "C1.sub2": 0.5, "C1.sub4": 0}', orgmem_question())
    assert verdict.parsed and verdict.score == pytest.approx(0.25 * 1 + 0.25 * 0.5)
    assert verdict.detail["missing"] == ["C1.sub3"]
    verdict = parse_orgmem('{"C1.sub1": 1, "C1.sub2": "half", "C1.sub3": 1, "C1.sub4": 1}', orgmem_question())
    assert verdict.score == pytest.approx(0.75) and verdict.detail["invalid"] == {"C1.sub2": "half"}


def test_orgmem_fraction_is_clamped_into_zero_one():
    # official: frac = min(1.0, max(0.0, frac)): 2 -> 1, -1 -> 0: (1 + 1 + 0 + 0) / 4
    verdict = parse_orgmem('{"C1.sub1": 2, "C1.sub2": 1, "C1.sub3": -1, "C1.sub4": 0}', orgmem_question())
    assert verdict.score == pytest.approx(0.5)


def test_orgmem_official_reply_shape_subpoint_scores():
    # the official judge asks for {"subpoint_scores": {...}, "semantic_score": ..., ...}
    raw = ('{"subpoint_scores": {"C1.sub1": 1, "C1.sub2": 0, "C1.sub3": 0.5, "C1.sub4": 0}, '
           '"exact_match": false, "semantic_score": 0.9, "rationale": "x"}')
    assert parse_orgmem(raw, orgmem_question()).score == pytest.approx(0.375)


def test_orgmem_question_without_rubric_is_rejected():
    q = Question(qid="x", text="?", category="C1", answer="a", rubric=None)
    with pytest.raises(ValueError, match="no rubric"):
        OrgMemJudge().request(q, "a")
    with pytest.raises(ValueError, match="no rubric"):
        parse_orgmem("{}", q)


def test_extract_json_objects_order_and_nesting():
    raw = 'a {"x": {"y": 1}} b ```json\n{"z": 2}\n``` {bad json} {"w": [1, {"v": 3}]}'
    assert extract_json_objects(raw) == [{"z": 2}, {"x": {"y": 1}}, {"w": [1, {"v": 3}]}]


# ------------------------------------------------------------------------------------ LoCoMo


@pytest.mark.parametrize("raw, score, label", [
    ('{"label": "CORRECT"}', 1.0, "CORRECT"),
    ('{"label": "WRONG"}', 0.0, "WRONG"),
    ('{"reasoning": "Same date, in another format.", "label": "CORRECT"}', 1.0, "CORRECT"),
    ('```json\n{"label": "WRONG"}\n```', 0.0, "WRONG"),
    # mem0: 1 if label == "CORRECT" else 0 -- any other label string is a 0
    ('{"label": "correct"}', 0.0, "correct"),
    ('{"label": "PARTIALLY CORRECT"}', 0.0, "PARTIALLY CORRECT"),
])
def test_parse_locomo_grade_is_one_iff_label_is_exactly_correct(raw, score, label):
    verdict = parse_locomo(raw)
    assert verdict.parsed is True
    assert verdict.score == score and verdict.label == label


@pytest.mark.parametrize("raw", [
    "CORRECT",  # no JSON label: mem0's json.loads(...)["label"] would fail
    "The answer is not correct.",
    '{"label": "CORRECT"} {"label": "WRONG"}',
    '{"reasoning": "CORRECT or WRONG?", "label": "CORRECT"}',  # both labels: mem0's prompt forbids it
    "",
])
def test_parse_locomo_without_one_json_label_is_unparsed(raw):
    verdict = parse_locomo(raw)
    assert verdict.parsed is False and verdict.score is None and verdict.label is None


def test_locomo_request_stringifies_int_gold():
    question = Question("q1", "What year?", "temporal", 2022, meta={"category_id": 2})  # type: ignore[arg-type]
    content = user_content(LoCoMoJudge().request(question, "It was 2022."))
    assert "Gold answer: 2022\n" in content and "Answer to grade: It was 2022." in content


def test_locomo_judge_skips_adversarial():
    judge = LoCoMoJudge()
    assert judge.is_graded(locomo_question(2, "temporal"))
    adversarial = locomo_question(5, "adversarial")
    assert not judge.is_graded(adversarial)
    with pytest.raises(ValueError, match="adversarial"):
        judge.request(adversarial, "anything")


# ------------------------------------------------------------------------------------ LongMemEval


@pytest.mark.parametrize("qtype, kind", [
    ("single-session-user", "default"),
    ("single-session-assistant", "default"),
    ("multi-session", "default"),
    ("temporal-reasoning", "temporal"),
    ("knowledge-update", "knowledge_update"),
    ("single-session-preference", "preference"),
])
def test_longmemeval_kind_per_type_and_abstention(qtype, kind):
    assert longmemeval_kind(qtype, abstention=False) == kind
    assert longmemeval_kind(qtype, abstention=True) == "abstention"
    judge = LongMemEvalJudge()
    assert judge.kind_for(lme_question(qtype)) == kind
    assert judge.kind_for(lme_question(qtype, abstention=True)) == "abstention"
    assert judge.template_for(lme_question(qtype)).name == f"longmemeval_{kind}"


def test_longmemeval_unknown_type_raises():
    with pytest.raises(ValueError, match="unknown LongMemEval question_type"):
        longmemeval_kind("open-domain", abstention=False)


def test_longmemeval_request_uses_kind_rules():
    judge = LongMemEvalJudge()

    def content(qtype: str, abstention: bool = False) -> str:
        question = Question("q42_abs" if abstention else "q42", "How many days?", qtype, "18",
                            meta={"abstention": abstention})
        return user_content(judge.request(question, "19 days"))

    temporal, default, update = content("temporal-reasoning"), content("multi-session"), content("knowledge-update")
    pref, abstain = content("single-session-preference"), content("temporal-reasoning", abstention=True)
    assert "off by one" in temporal and "off by one" not in default
    assert "earlier, outdated information" in update and "earlier, outdated" not in default
    assert "Rubric: 18" in pref
    assert "Explanation: 18" in abstain and "unanswerable" in abstain
    assert len({temporal, default, update, pref, abstain}) == 5


@pytest.mark.parametrize("raw, score", [
    ("yes", 1.0), ("No", 0.0), ("Yes.", 1.0), ("**no**", 0.0), ("  YES  ", 1.0),
    # evaluate_qa.py: label = 'yes' in reply.strip().lower() -- a substring test
    ("No. Although the response says yes to a related question, the count is wrong.", 1.0),
    ("Eyes only.", 1.0),
    ("I am not sure.", 0.0),
])
def test_longmemeval_grade_is_yes_substring_of_lowercased_reply(raw, score):
    verdict = parse_yes_no(raw)
    assert verdict.parsed and verdict.score == score


@pytest.mark.parametrize("raw", ["", "   ", "Answer yes or no only.", "It could be yes/no."])
def test_parse_yes_no_empty_or_echo_is_unparsed(raw):
    verdict = parse_yes_no(raw)
    assert verdict.parsed is False and verdict.score is None


def test_longmemeval_prompt_dir_overrides_one_kind(tmp_path):
    (tmp_path / "longmemeval_temporal.txt").write_text(
        "#: mine\nQ: {question}\nA: {correct_answer}\nR: {hypothesis}\nyes or no?", encoding="utf-8")
    judge = LongMemEvalJudge.own(str(tmp_path))
    q = lme_question("temporal-reasoning")
    assert user_content(judge.request(q, "19")) == f"Q: {q.text}\nA: {q.answer}\nR: 19\nyes or no?"
    assert judge.template_for(lme_question("multi-session")).sha256 == load_template("longmemeval_default").sha256
    with pytest.raises(ValueError, match="directory"):
        LongMemEvalJudge.own(str(tmp_path / "longmemeval_temporal.txt"))


# ------------------------------------------------------------------------------------ judges


def test_each_benchmark_builds_its_own_judge():
    from harness.benchmarks import load_benchmark

    for name, kind in (("orgmem", OrgMemJudge), ("locomo", LoCoMoJudge), ("longmemeval_s", LongMemEvalJudge)):
        judge = load_benchmark(f"harness.benchmarks.{name}").judge(None)
        assert isinstance(judge, kind) and isinstance(judge, Judge) and judge.dataset == name
    with pytest.raises(ValueError, match="one file, not a mapping"):
        OrgMemJudge.own({"default": "x.txt"})


def test_orgmem_judge_round_trip():
    judge = OrgMemJudge()
    q = orgmem_question()
    assert judge.is_graded(q)
    messages = judge.request(q, "She is leaving.")
    assert judge.template.sha256 == load_template("orgmem_rubric").sha256
    assert "She is leaving." in user_content(messages)
    verdict = judge.parse('{"C1.sub1": 1, "C1.sub2": 0, "C1.sub3": 0, "C1.sub4": 0}', q)
    assert verdict.score == pytest.approx(0.25)


def test_orgmem_prompt_file_without_rubric_placeholder_raises(tmp_path):
    bad = tmp_path / "rubric.txt"
    bad.write_text("Question {question}\nTruth {ground_truth}\nAnswer {answer}\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"'\{rubric\}'") as info:
        OrgMemJudge.own(bad)
    assert str(bad) in str(info.value)
