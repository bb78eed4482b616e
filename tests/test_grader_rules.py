"""Each benchmark's official answering and grading rule, pinned, and echoes of the prompt refused.

Sources: OrgMemBench ``orgmembench/answerer.py`` and ``judge.py``; mem0 ``evaluation/metrics/
llm_judge.py``; LongMemEval ``src/evaluation/evaluate_qa.py`` (see each grader module)."""

from datetime import date

import pytest

from harness.prompts import Answerer, display_name
from harness.config import DatasetSpec, ModelSpec
from harness.benchmarks import longmemeval_s, orgmem
from judges.graders.locomo import LoCoMoJudge
from judges.graders.longmemeval import LongMemEvalJudge
from judges.graders.orgmem import OrgMemJudge
from judges.graders.orgmem import ORGMEM_NO_ANSWER
from judges.templates import load_template
from judges.graders import detect_echo
from memory_protocol import Question, RubricFacet


ORGMEM_CONTEXT_CHARS = 40_000  # the benchmark's answerer reads retrieved_context[:40000]


def orgmem_answerer(prompt_file: str | None = None) -> Answerer:
    """OrgMemBench's answerer as a run builds it: its rule, its config's budget."""
    return Answerer.load(prompt_file, orgmem.BENCHMARK.answer, ORGMEM_CONTEXT_CHARS)


def orgmem_question() -> Question:
    facets = tuple(RubricFacet(facet_id=f"C4.sub{i}", max_score=0.5, criterion=f"States fact {i}.", fail_criterion="")
                   for i in (1, 2))
    return Question(qid="Q-0042", text="As of 2023-06-01, who owned the Atlas launch?", category="C4",
                    answer="Dana", rubric=facets, as_of=date(2023, 6, 1))


def lme_question(abstention: bool = False) -> Question:
    return Question(qid="q7_abs" if abstention else "q7", text="How many days?", category="temporal-reasoning",
                    answer="18", meta={"abstention": abstention, "question_date": date(2023, 5, 30)})


def content(request) -> str:
    assert len(request.messages) == 1 and request.messages[0]["role"] == "user"
    return request.messages[0]["content"]


# ------------------------------------------------------------------------------------ answerer


def test_orgmem_config_budget_is_what_its_answerer_reads():
    from harness.compose import compose_config

    dataset = compose_config(["dataset=orgmem"])["dataset"]
    assert dataset["context_budget"] == ORGMEM_CONTEXT_CHARS
    assert DatasetSpec(name="orgmem").describe() is orgmem.BENCHMARK


def test_orgmem_answerer_reads_a_40000_char_prefix_and_no_question_date():
    answerer = orgmem_answerer()
    assert answerer.template.name == "orgmem_answer"
    text = content(answerer.request(orgmem_question(), "  " + "r" * ORGMEM_CONTEXT_CHARS + "CUT-OFF"))
    assert "r" * ORGMEM_CONTEXT_CHARS in text and "CUT-OFF" not in text
    assert "Question date" not in text and "Question: As of 2023-06-01, who owned the Atlas launch?" in text


def test_orgmem_answerer_shows_a_line_when_nothing_was_retrieved():
    text = content(orgmem_answerer().request(orgmem_question(), " \n "))
    assert "(no records retrieved)" in text


def test_other_datasets_answer_with_the_question_date():
    text = content(Answerer.load(rule=longmemeval_s.BENCHMARK.answer).request(lme_question(), "[2023-05-01] user: hi"))
    assert "Question date: 2023-05-30" in text and "[2023-05-01] user: hi" in text


def test_official_answer_prompt_file_is_used_verbatim(tmp_path):
    official = tmp_path / "basic.txt"
    official.write_text("Records:\n{context}\n\nQuestion: {question}\n", encoding="utf-8")
    text = content(orgmem_answerer(str(official)).request(orgmem_question(), "row one"))
    assert text == "Records:\nrow one\n\nQuestion: As of 2023-06-01, who owned the Atlas launch?"


def test_orgmem_judge_grades_an_empty_answer_as_the_official_line():
    text = OrgMemJudge().request(orgmem_question(), "   ")[0]["content"]
    assert ORGMEM_NO_ANSWER in text


def test_display_name_shows_the_model_of_a_generic_endpoint():
    assert display_name(ModelSpec(name="openai_compatible", model="qwen2.5-7b")) == "qwen2.5-7b"
    assert display_name(ModelSpec(name="gpt-4o-mini", model="gpt-4o-mini")) == "gpt-4o-mini"
    assert display_name(None) == "none"


# ------------------------------------------------------------------------------------ judges


def test_longmemeval_judge_reply_budget_is_ten_tokens():
    # evaluate_qa.py: temperature 0, max_tokens 10
    assert LongMemEvalJudge().params.max_tokens == 10
    assert LoCoMoJudge().params.max_tokens is None and OrgMemJudge().params.max_tokens is None


def test_longmemeval_abstention_question_uses_the_abstention_prompt():
    judge = LongMemEvalJudge()
    assert judge.template_for(lme_question(True)).name == "longmemeval_abstention"
    assert judge.parse("Yes", lme_question(True)).score == 1.0


@pytest.mark.parametrize("judge, question", [
    (LoCoMoJudge(), Question(qid="c:1", text="When?", category="temporal", answer="May", meta={"category_id": 2})),
    (LongMemEvalJudge(), lme_question()),
    (OrgMemJudge(), orgmem_question()),
])
def test_an_echo_of_the_judge_prompt_is_unparsable(judge, question):
    # a small model repeating its instructions (example labels included) must not be graded
    prompt = judge.request(question, "an answer")[0]["content"]
    for echo in (prompt, prompt[:200], "Sure! " + prompt[len(prompt) // 3:]):
        verdict = judge.parse(echo, question)
        assert verdict.parsed is False and verdict.score is None and "echo" in verdict.detail["error"]


def test_smollm2_style_echo_of_the_locomo_examples_is_not_correct():
    template = load_template("locomo_judge")
    echo = 'Reply with a JSON object only, in one of these two forms:\n{"reasoning": "<one sentence>", "label": "CORRECT"}'
    assert detect_echo(echo, template) is not None
    assert LoCoMoJudge().parse(echo, Question(qid="c:2", text="?", category="single-hop", answer="x")).score is None


@pytest.mark.parametrize("raw", [
    '{"reasoning": "Both name the same support group meeting in May.", "label": "CORRECT"}',
    '{"label": "WRONG"}',
])
def test_a_real_grade_is_not_an_echo(raw):
    assert detect_echo(raw, load_template("locomo_judge")) is None
    assert LoCoMoJudge().parse(raw, Question(qid="c:3", text="?", category="single-hop", answer="x")).parsed


def test_default_judge_is_gpt_4o_mini_three_runs_at_temperature_zero():
    # the paper: every answer judged by gpt-4o-mini, three runs, temperature 0
    from harness.compose import compose_config
    from harness.config import RunConfig

    judge = RunConfig.from_dict(compose_config(["answerer=gpt-4.1-mini"])).judge
    assert (judge.model, judge.runs, judge.temperature) == ("gpt-4o-mini", 3, 0.0)
