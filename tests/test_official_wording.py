"""The paper's protocol word for word: what reaches the server is what the upstream code builds.

The upstream modules are loaded as oracles (``tests/official_modules.py``); answered and judged runs
(three questions, BM25 retrieval) go to a local fake server, and each request it received is
compared with the upstream function's output for the same question and answer, with the request
settings of the upstream script. Grades are compared with the upstream grading of the same reply.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from openai import OpenAI

from harness.compose import compose_config
from harness.config import RunConfig
from harness.runner import run
from judges.graders.locomo import LoCoMoJudge, parse_mem0_label
from judges.graders.longmemeval import LongMemEvalJudge
from judges.graders.orgmem import OrgMemJudge, _first_json_object, parse_orgmem_official
from judges.official.locate import OfficialFileMismatch, OfficialReader
from judges.official.wording import orgmem_answerer
from memory_protocol import ConfigError
from tests.fake_openai_server import FakeOpenAIServer, last_user_content
from tests.official_modules import (
    SHARED_OFFICIAL, longmemeval_evaluate_qa, mem0_llm_judge, orgmem_answerer_module, orgmem_judge_module,
    orgmem_question,
)

KEY_ENV = "MEMPP_TEST_KEY"
ANSWER = "Fixture answer: it changed on 2023-09-15 (see the records)."
ORGMEM_QUESTIONS = SHARED_OFFICIAL.parent / "data" / "orgmembench" / "datasets" / "helix" / "medium" / "benchmark_v0.0.jsonl"


def _orgmem_reply(content: str) -> str:
    """A judge reply in the benchmark's shape: uneven fractions, so the weighting shows."""
    ids = re.findall(r'^\s*"id": "([^"]+)",$', content, flags=re.MULTILINE)
    scores = {facet: [1.0, 0.5, 0.0, 0.25][i % 4] for i, facet in enumerate(ids)}
    return "```json\n" + json.dumps({"subpoint_scores": scores, "semantic_score": 0.6, "failure_mode": "none"}) + "\n```"


def _reply(body: dict) -> str:
    if body.get("model") == "fake-answerer":
        return ANSWER
    content = last_user_content(body)
    if "RUBRIC SUBPOINTS" in content:
        return _orgmem_reply(content)
    if "Is the model response correct?" in content or "unanswerable" in content:
        return "Yes."
    # mem0's judge: an explanation that names both labels, then the JSON label (mem0 grades 1)
    return '{"explanation": "Not WRONG: the answer matches the gold answer.", "label": "CORRECT"}'


@pytest.fixture
def server():
    fake = FakeOpenAIServer(answer_fn=_reply).start()
    yield fake
    fake.stop()


def _run(server: FakeOpenAIServer, tmp_path: Path, dataset: str, *extra: str):
    overrides = [
        f"dataset={dataset}", "system=bm25", "dataset.limit=3", "progress=false",
        f"store.cache_dir={tmp_path / 'cache'}", f"store.results_dir={tmp_path / 'runs'}",
        "answerer=openai_compatible", "answerer.model=fake-answerer", f"answerer.base_url={server.base_url}",
        f"answerer.api_key_env={KEY_ENV}", "answerer.max_retries=0",
        "judge.model=fake-judge", f"judge.base_url={server.base_url}", f"judge.api_key_env={KEY_ENV}",
        "judge.max_retries=0", "judge.runs=1", *extra,
    ]
    return run(RunConfig.from_dict(compose_config(overrides)), overrides)


def _bodies(server: FakeOpenAIServer, model: str) -> list[dict]:
    return [r.body for r in server.requests if r.body.get("model") == model]


def _questions(dataset: str) -> dict:
    from loaders import load_dataset

    return {q.qid: q for episode in load_dataset(dataset, limit=3) for q in episode.questions}


def _metrics_json(result) -> dict:
    return json.loads(result.paths.metrics.read_text())


def test_orgmem_answerer_and_judge_send_the_benchmarks_own_requests(server, tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test")
    result = _run(server, tmp_path, "orgmem")
    answerer, judge = orgmem_answerer_module(), orgmem_judge_module()
    records = {r["id"]: r for r in map(json.loads, ORGMEM_QUESTIONS.read_text().splitlines())}
    prefix, rest = answerer.BASIC_ANSWER_PROMPT.split("{context}")
    answers = _bodies(server, "fake-answerer")
    assert len(answers) == 3
    for body in answers:
        assert len(body["messages"]) == 1 and body["messages"][0]["role"] == "user"
        content = body["messages"][0]["content"]
        assert content.startswith(prefix)
        question = next(r["text"] for r in records.values() if content.endswith(rest.format(question=r["text"])))
        context = content[len(prefix) : len(content) - len(rest.format(question=question))]
        kept = {}

        class Keep:
            def complete(self, prompt):
                kept["prompt"] = prompt

        answerer.basic_answer(question, context, Keep())
        assert kept["prompt"] == content  # the upstream function builds exactly this request
    judged = _bodies(server, "fake-judge")
    assert len(judged) == 3
    for record in result.records:
        upstream_question = orgmem_question(records[record["qid"]])
        expected = judge.build_judge_prompt(upstream_question, ANSWER)
        body = next(b for b in judged if b["messages"][-1]["content"] == expected)
        assert body["messages"][0] == {"role": "system", "content": judge._JUDGE_SYSTEM}
        assert body["temperature"] == 0  # the paper: gpt-4o-mini grades every facet at temperature 0
        reply = _orgmem_reply(expected)

        class Judge:
            def complete_json(self, prompt, system=None):
                from_json = json.loads(reply.split("```json\n")[1].split("\n```")[0])
                return from_json, type("Resp", (), {"input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0})()

        upstream = judge.judge_one(upstream_question, type("Q", (), {"answer_text": ANSWER, "system": "x"})(), Judge())
        assert record["metrics"]["score"] == pytest.approx(100 * upstream.score, abs=0.01)  # upstream rounds to 4 places
    assert _metrics_json(result)["wording"] == "official"


def test_orgmem_answerer_cuts_the_context_where_the_benchmark_does():
    upstream = orgmem_answerer_module()
    ours = orgmem_answerer(OfficialReader.search())
    kept = {}

    class Keep:
        def complete(self, prompt):
            kept["prompt"] = prompt

    for context in ("", "   \n", "a" * 39_999 + "bcd" + "z" * 20_000):
        upstream.basic_answer("When?", context, Keep())
        assert ours.prompt("When?", context) == kept["prompt"]
    assert ours.max_context_chars == 40_000


def test_locomo_judge_request_and_grade_are_mem0s(server, tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test")
    result = _run(server, tmp_path, "locomo")
    mem0_judge = mem0_llm_judge(monkeypatch)
    ours = _bodies(server, "fake-judge")
    assert len(ours) == len([r for r in result.records if r["metrics"].get("llm_judge") is not None]) > 0
    mem0_judge.client = OpenAI(base_url=server.base_url, api_key="sk-test")
    before = len(server.requests)
    questions = _questions("locomo")
    for record in [r for r in result.records if r["metrics"].get("llm_judge") is not None]:
        gold = questions[record["qid"]].answer
        grade = mem0_judge.evaluate_llm_judge(record["question"], gold, ANSWER)
        theirs = server.requests[-1].body
        body = next(b for b in ours if b["messages"] == theirs["messages"])  # requests go out concurrently
        assert body["response_format"] == theirs["response_format"] == {"type": "json_object"}
        assert body["temperature"] == theirs["temperature"] == 0
        assert "max_tokens" not in theirs
        assert record["metrics"]["llm_judge"] == 100.0 * grade == 100.0  # a reply naming both labels still counts
    assert len(server.requests) == before + len(ours)
    assert _metrics_json(result)["prompts"]["judge"]["cite"].startswith("mem0ai/mem0@b3ede5b7c0ac")


@pytest.mark.parametrize("reply", [
    '{"label": "CORRECT"}', '{"label": "WRONG"}', '```json\n{"label": "CORRECT"}\n```',
    'Reasoning first. {"label": "CORRECT"} and WRONG is not it', '{"label": "correct"}', '{"verdict": "CORRECT"}',
    "CORRECT",
])
def test_mem0_label_rule_matches_mem0s_evaluate_llm_judge(server, reply, monkeypatch):
    mem0_judge = mem0_llm_judge(monkeypatch)
    server.answer_fn = lambda body: reply
    mem0_judge.client = OpenAI(base_url=server.base_url, api_key="sk-test")
    ours = parse_mem0_label(reply)
    try:
        theirs = mem0_judge.evaluate_llm_judge("q", "gold", "answer")
    except (KeyError, ValueError):  # mem0's script stops: ours is unparsable, counted 0 in llm_judge_paper
        assert not ours.parsed
    else:
        assert ours.parsed and ours.score == theirs


def test_longmemeval_judge_request_is_get_anscheck_prompt_with_its_settings(server, tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test")
    result = _run(server, tmp_path, "longmemeval_s")
    upstream = longmemeval_evaluate_qa()
    judged = _bodies(server, "fake-judge")
    assert len(judged) == len(result.records) == 3
    questions = _questions("longmemeval_s")
    for record in result.records:
        question = questions[record["qid"]]
        expected = upstream.get_anscheck_prompt(question.category, question.text, question.answer, ANSWER,
                                                abstention="_abs" in question.qid)
        body = next(b for b in judged if b["messages"][0]["content"] == expected)  # requests go out concurrently
        assert body["messages"] == [{"role": "user", "content": expected}]
        assert body["temperature"] == 0 and body["max_tokens"] == 10  # evaluate_qa.py's request
        assert record["metrics"]["accuracy"] == 100.0  # 'yes' in "yes." (the official substring rule)


@pytest.mark.parametrize("qtype", ["single-session-user", "single-session-assistant", "multi-session",
                                   "temporal-reasoning", "knowledge-update", "single-session-preference"])
@pytest.mark.parametrize("abstention", [False, True])
def test_every_longmemeval_prompt_is_the_upstream_one(qtype, abstention):
    from memory_protocol import Question

    upstream = longmemeval_evaluate_qa()
    judge = LongMemEvalJudge.official(OfficialReader.search())
    question = Question(qid="q_abs" if abstention else "q", text="How many {days} since?", category=qtype,
                        answer="3 }", meta={"abstention": abstention})
    ours = judge.request(question, "Three {0} days")[0]["content"]
    assert ours == upstream.get_anscheck_prompt(qtype, question.text, question.answer, "Three {0} days", abstention)


@pytest.mark.parametrize("reply,official", [("Yes", 1.0), ("no", 0.0), ("", 0.0), ("Answer yes or no only: no", 1.0),
                                            ("Eyes closed: no", 1.0)])
def test_longmemeval_grade_is_the_bare_substring_rule(reply, official):
    from memory_protocol import Question

    judge = LongMemEvalJudge.official(OfficialReader.search())
    verdict = judge.parse(reply, Question(qid="q", text="q", category="multi-session", answer="a"))
    assert verdict.parsed and verdict.score == official == float("yes" in reply.strip().lower())


def test_orgmem_official_scores_equal_the_benchmarks_judge_one():
    judge_module = orgmem_judge_module()
    from loaders import load_dataset

    episode = next(iter(load_dataset("orgmem", limit=5)))
    records = {r["id"]: r for r in map(json.loads, ORGMEM_QUESTIONS.read_text().splitlines())}
    replies = ['{"subpoint_scores": {}}', "no json at all", '{"subpoint_scores": {"nope": 1}}']
    for question in episode.questions:
        facets = [f.facet_id for f in question.rubric]
        replies.append(json.dumps({"subpoint_scores": {facets[0]: 2.0, facets[-1]: 0.3}}))
        replies.append("```json\n" + json.dumps({"subpoint_scores": {f: 0.5 for f in facets}}) + "\n```")
        for reply in replies:
            upstream_question = orgmem_question(records[question.qid])

            class Judge:  # the benchmark's client: its JSON parse (llm.py, not pinned) mirrored below
                def complete_json(self, prompt, system=None):
                    return _client_parse(reply), type("R", (), {"input_tokens": 0, "output_tokens": 0, "cost_usd": 0})()

            theirs = judge_module.judge_one(upstream_question, type("Q", (), {"answer_text": "a", "system": "s"})(),
                                            Judge()).score
            ours = parse_orgmem_official(reply, question)
            assert (ours.score if ours.parsed else 0.0) == pytest.approx(theirs, abs=5e-5)


def _client_parse(text: str) -> dict:
    """orgmembench/llm.py ``_extract_json`` (not among the pinned files) gives {} where no object is found."""
    return _first_json_object(text) or {}


def test_a_flipped_byte_in_an_official_file_stops_the_run_in_one_line(server, tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test")
    copy = tmp_path / "official"
    shutil.copytree(SHARED_OFFICIAL, copy)
    judge_file = copy / "mem0" / "evaluation" / "metrics" / "llm_judge.py"
    data = bytearray(judge_file.read_bytes())
    data[500] ^= 0x01
    judge_file.write_bytes(bytes(data))
    with pytest.raises(OfficialFileMismatch) as caught:
        OfficialReader.search(copy).read("mem0/evaluation/metrics/llm_judge.py")
    assert str(judge_file) in str(caught.value) and "\n" not in str(caught.value)
    with pytest.raises(ConfigError, match="llm_judge.py has sha256"):
        _run(server, tmp_path, "locomo", f"official_dir={copy}")
    assert server.request_count == 0  # stopped before any call


def test_without_the_official_files_a_run_uses_our_wording_says_so_and_is_marked(server, tmp_path, monkeypatch, capsys):
    import judges.official.locate as locate

    monkeypatch.setenv(KEY_ENV, "sk-test")
    monkeypatch.delenv(locate.ENV_VAR, raising=False)
    monkeypatch.setattr(locate, "REPO_ROOT", tmp_path / "clone")  # no ../shared/official, no ./official
    monkeypatch.chdir(tmp_path)
    result = _run(server, tmp_path, "locomo")
    lines = [line for line in capsys.readouterr().err.splitlines() if "official wording" in line]
    assert lines == [
        "judge: the official wording (mem0/evaluation/metrics/llm_judge.py) was not found, so our own wording is "
        "used and the scores are not comparable with published ones; run `python scripts/fetch_official.py` or "
        "set official_dir"]
    metrics = _metrics_json(result)
    assert metrics["wording"] == "own" and metrics["prompts"]["judge"]["source"] == "own"
    assert "own wording: not comparable" in result.table.splitlines()[0]
    assert all("response_format" not in body for body in _bodies(server, "fake-judge"))


def test_official_and_own_wording_runs_never_share_a_folder(server, tmp_path, monkeypatch):
    import judges.official.locate as locate

    monkeypatch.setenv(KEY_ENV, "sk-test")
    official = _run(server, tmp_path, "locomo")
    monkeypatch.setattr(locate, "REPO_ROOT", tmp_path / "clone")
    monkeypatch.chdir(tmp_path)
    own = _run(server, tmp_path, "locomo")
    assert official.paths.root != own.paths.root


def test_every_judge_names_the_upstream_file_it_read():
    reader = OfficialReader.search()
    for judge in (LoCoMoJudge.official(reader), LongMemEvalJudge.official(reader), OrgMemJudge.official(reader)):
        assert judge.wording.source == "official"
        (path, sha), = judge.wording.files
        assert Path(path).is_file() and Path(path).is_relative_to(SHARED_OFFICIAL)
        import hashlib

        assert hashlib.sha256(Path(path).read_bytes()).hexdigest() == sha
