"""Where the official texts come from, what is checked, and the grading rules SOURCE.md states.

The texts: a templates file or an upstream file (read with ``ast``, never imported), each text
checked against its own pin; a changed text stops the run in one line before any request; no
source at all falls back to our wording, said in one line and marked. The grades: mem0's label rule,
LongMemEval's substring rule and OrgMemBench's weighted subpoints, each pinned by the values the
stated rule gives for fixture replies.
"""

from __future__ import annotations

import json
import shutil

import pytest

from judges.graders.locomo import parse_mem0_label
from judges.graders.longmemeval import LongMemEvalJudge
from judges.graders.orgmem import parse_orgmem_official
from judges.official.texts import TEXT_PINS, OfficialFileMismatch, OfficialTextMismatch, OfficialTexts, literals_of
from memory_protocol import ConfigError, Question, RubricFacet
from tests.official_texts import SHARED_OFFICIAL, TEMPLATES, pin_stand_ins, stand_in_upstream, templates, text


def test_every_pinned_text_reads_the_same_from_the_templates_file_and_from_an_upstream_file(tmp_path, monkeypatch):
    from_templates = {key: OfficialTexts.search(SHARED_OFFICIAL).get(key) for key in TEXT_PINS}
    root = tmp_path / "upstream"
    pin_stand_ins(monkeypatch, stand_in_upstream(root))
    from_upstream = OfficialTexts.search(root)
    assert len(TEXT_PINS) == 15
    for key, pin in TEXT_PINS.items():
        a, b = from_templates[key], from_upstream.get(key)
        assert a.text == b.text == text(pin.local.split("/", 1)[1], pin.where, pin.name, pin.index)
        assert (a.via, a.path) == ("templates", TEMPLATES) and (b.via, b.path) == ("upstream", root / pin.local)


def test_a_text_is_a_literal_taken_with_ast_never_a_value_computed_by_running_the_file():
    source = (
        "import os\nos.system('exit 3')\nGREETING = 'hello ' 'world'\nDERIVED = GREETING + '!'\n"
        "def pick(task):\n    template = ''\n    if task:\n        template = 'first {}'\n    else:\n"
        "        template = 'second {}'\n    return f\"{template} {{x}}\"\n"
        "class Runner:\n    def name(self):\n        user_id = f\"{self}_1\"\n")
    table = literals_of(source)
    assert table[("<module>", "GREETING")] == ["hello world"] and ("<module>", "DERIVED") not in table
    assert table[("pick", "template")] == ["first {}", "second {}"]  # file order; the empty one is no text
    assert table[("pick", "<return>")] == ['f"{template} {{x}}"'] and table[("Runner.name", "user_id")] == ['f"{self}_1"']


def test_a_changed_text_in_a_templates_file_stops_the_run_before_any_request(tmp_path):
    data = templates()
    entry = next(e for e in data["files"] if e["path"] == "evaluation/metrics/llm_judge.py")
    entry["texts"][0]["text"] = entry["texts"][0]["text"].replace("generous", "strict")
    copy = tmp_path / "official"
    copy.mkdir()
    (copy / "templates.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(OfficialTextMismatch) as caught:
        OfficialTexts.search(copy).get("mem0.accuracy")
    message = str(caught.value)
    assert "\n" not in message and "ACCURACY_PROMPT" in message and "62395dd312a6" in message


def test_a_templates_file_naming_other_pins_is_refused(tmp_path):
    data = templates()
    entry = next(e for e in data["files"] if e["path"] == "orgmembench/judge.py")
    entry["commit"] = "0" * 40
    (tmp_path / "templates.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ConfigError, match="the entry of orgmembench/orgmembench/judge.py names"):
        OfficialTexts.search(tmp_path).get("orgmem.judge_system")


def test_an_upstream_file_with_one_flipped_byte_is_refused_in_one_line(tmp_path, monkeypatch):
    root = tmp_path / "upstream"
    pin_stand_ins(monkeypatch, stand_in_upstream(root))
    target = root / "mem0" / "evaluation" / "metrics" / "llm_judge.py"
    data = bytearray(target.read_bytes())
    data[200] ^= 0x01
    target.write_bytes(bytes(data))
    with pytest.raises(OfficialFileMismatch) as caught:
        OfficialTexts.search(root).get("mem0.accuracy")
    assert str(target) in str(caught.value) and "\n" not in str(caught.value)


def test_the_authors_file_has_no_file_pin_and_is_trusted_by_its_text(tmp_path, monkeypatch):
    root = tmp_path / "upstream"
    pin_stand_ins(monkeypatch, stand_in_upstream(root))
    target = root / "mem-plus-plus" / "eval" / "llm.py"
    target.write_text(target.read_text() + "\nANSWER_MODEL = 'another model'\n")  # other bytes, same text
    assert OfficialTexts.search(root).get("authors.answer").via == "upstream"
    target.write_text(target.read_text().replace("I don't know.", "unknown."))
    with pytest.raises(OfficialTextMismatch, match="ANSWER_PROMPT_TEMPLATE"):
        OfficialTexts.search(root).get("authors.answer")


def test_the_first_directory_holding_a_source_wins_and_an_empty_search_is_missing(tmp_path):
    from judges.official.texts import OfficialFileMissing

    shutil.copyfile(TEMPLATES, tmp_path / "templates.json")
    assert OfficialTexts.search(tmp_path).get("lme.default").path == tmp_path / "templates.json"
    with pytest.raises(OfficialFileMissing):
        OfficialTexts.search(None, env={}, cwd=tmp_path / "none", repo_root=tmp_path / "clone" / "repo").get("lme.default")


# ---------------------------------------------------------------- grading rules (SOURCE.md)

@pytest.mark.parametrize("reply,expected", [
    ('{"label": "CORRECT"}', 1.0), ('{"label": "WRONG"}', 0.0), ('```json\n{"label": "CORRECT"}\n```', 1.0),
    ('Reasoning first. {"label": "CORRECT"} and WRONG is not it', 1.0), ('{"label": "correct"}', 0.0),
    ('{"verdict": "CORRECT"}', None), ("CORRECT", None), ('{"label": "CORRECT"} then {"x": 1}', None),
])
def test_mem0_label_rule(reply, expected):
    """json.loads(<first '{' .. last '}'>)["label"] == "CORRECT"; None where that expression raises."""
    verdict = parse_mem0_label(reply)
    assert (verdict.score if verdict.parsed else None) == expected


@pytest.mark.parametrize("reply,official", [("Yes", 1.0), ("no", 0.0), ("", 0.0), ("Answer yes or no only: no", 1.0),
                                            ("Eyes closed: no", 1.0)])
def test_longmemeval_grade_is_the_bare_substring_rule(reply, official):
    judge = LongMemEvalJudge.official(OfficialTexts.search(SHARED_OFFICIAL))
    verdict = judge.parse(reply, Question(qid="q", text="q", category="multi-session", answer="a"))
    assert verdict.parsed and verdict.score == official


def test_every_longmemeval_kind_fills_its_template_positionally():
    judge = LongMemEvalJudge.official(OfficialTexts.search(SHARED_OFFICIAL))
    order = {"single-session-user": 0, "single-session-assistant": 0, "multi-session": 0, "temporal-reasoning": 1,
             "knowledge-update": 2, "single-session-preference": 3}
    for qtype, index in order.items():
        for abstention in (False, True):
            question = Question(qid="q_abs" if abstention else "q", text="How many {days} since?", category=qtype,
                                answer="3 }", meta={"abstention": abstention})
            template = text("src/evaluation/evaluate_qa.py", "get_anscheck_prompt", "template", 4 if abstention else index)
            assert judge.request(question, "Three {0} days") == [
                {"role": "user", "content": template.format(question.text, question.answer, "Three {0} days")}]


def _orgmem_question() -> Question:
    facets = (RubricFacet("a", 2.0, "names the owner"), RubricFacet("b", 1.0, "gives the date"),
              RubricFacet("c", 0.0, "says why"))
    return Question(qid="q", text="Who?", category="C1", answer="x", rubric=facets)


@pytest.mark.parametrize("scores,expected", [
    ({"a": 1.0, "b": 0.5, "c": 0.0}, (2 * 1.0 + 0.5) / 4),
    ({"a": True, "b": 0.5}, (2 * 1.0 + 0.5) / 4),  # float(True) is 1.0
    ({"a": "0.5", "b": 1}, (2 * 0.5 + 1) / 4),  # float("0.5")
    ({"a": 2.0, "b": -1, "c": None}, 2 / 4),  # clamped; None -> 0
    ({"b": 1.0}, 1 / 4),  # missing subpoints count 0
    ({"a": "high", "b": 1.0}, None),  # float("high") raises: the benchmark's script stops
    ({"a": [1], "b": 1.0}, None),
])
def test_orgmem_official_score_follows_judge_one(scores, expected):
    verdict = parse_orgmem_official(json.dumps({"subpoint_scores": scores}), _orgmem_question())
    if expected is None:
        assert not verdict.parsed
    else:
        assert verdict.parsed and verdict.score == pytest.approx(expected)


def test_orgmem_subpoint_scores_that_are_not_an_object_stop_the_benchmarks_script():
    assert not parse_orgmem_official('{"subpoint_scores": [0.5]}', _orgmem_question()).parsed
    assert parse_orgmem_official('{"subpoint_scores": []}', _orgmem_question()).score == 0.0  # `or {}`
