"""The paper's protocol word for word: the requests a local server receives are the official texts
filled as ``../shared/official/SOURCE.md`` states.

The oracle is ``templates.json`` itself (read here directly) and the benchmark files: each expected
request is built in this file from those, not by the harness's code. Each run (three questions, BM25
retrieval, a fake OpenAI server) reads the texts from one source: the templates file, stand-in
upstream files built from it (the harness's ``ast`` path, pins pointed at them), and the real
upstream files when ``scripts/fetch_official.py`` has put them in ``<repo>/official``.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

import pytest

from harness.compose import compose_config
from harness.config import RunConfig
from harness.runner import run
from tests.data_paths import data_path
from tests.fake_openai_server import FakeOpenAIServer, last_user_content
from tests.official_texts import SHARED_OFFICIAL, fetched_dir, pin_stand_ins, stand_in_upstream, text

KEY_ENV = "MEMPP_TEST_KEY"
ANSWER = "Fixture answer: it changed on 2023-09-15 (see the records)."
AUTHORS_SEED = 20260904  # eval/llm.py: MEMORY_ANSWER_SEED's default
# OrgMemBench's public category names (orgmembench/schemas.py CATEGORY_INFO), as its judge prompt shows them.
PUBLIC_CATEGORY = {"C1": "supersession", "C2": "decision_provenance", "C3": "bitemporal", "C4": "audit_replay",
                   "C5": "justification_chain", "C6": "contradiction"}
# evaluate_qa.py's conditions (templates.json "when"), written out: question type -> template index.
LME_TEMPLATE = {"single-session-user": 0, "single-session-assistant": 0, "multi-session": 0,
                "temporal-reasoning": 1, "knowledge-update": 2, "single-session-preference": 3}


def _reply(body: dict) -> str:
    if body.get("model") == "fake-answerer":
        return ANSWER
    content = last_user_content(body)
    if "RUBRIC SUBPOINTS" in content:
        ids = re.findall(r'^\s*"id": "([^"]+)",$', content, flags=re.MULTILINE)
        scores = {facet: [1.0, 0.5, 0.0, 0.25][i % 4] for i, facet in enumerate(ids)}
        return "```json\n" + json.dumps({"subpoint_scores": scores, "semantic_score": 0.6}) + "\n```"
    if "Answer yes or no only." in content:
        return "Yes."
    return '{"explanation": "Not WRONG: the answer matches the gold answer.", "label": "CORRECT"}'


@pytest.fixture
def server():
    fake = FakeOpenAIServer(answer_fn=_reply).start()
    yield fake
    fake.stop()


@pytest.fixture(params=["templates", "stand-in upstream", "fetched"])
def official_dir(request, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    if request.param == "templates":
        text("orgmembench/answerer.py", "<module>", "BASIC_ANSWER_PROMPT")  # skips without the file
        return SHARED_OFFICIAL
    if request.param == "stand-in upstream":
        root = tmp_path / "upstream"
        pin_stand_ins(monkeypatch, stand_in_upstream(root))
        return root
    found = fetched_dir()
    if found is None:
        pytest.skip("scripts/fetch_official.py has not fetched the upstream files "
                    "(looked in <cache root>/official and <repo>/official)")
    return found


def _run(server: FakeOpenAIServer, tmp_path: Path, dataset: str, official: Path):
    overrides = [
        f"dataset={dataset}", "system=bm25", "dataset.limit=3", "progress=false", f"official_dir={official}",
        f"store.cache_dir={tmp_path / 'cache'}", f"store.results_dir={tmp_path / 'runs'}",
        "answerer=openai_compatible", "answerer.model=fake-answerer", f"answerer.base_url={server.base_url}",
        f"answerer.api_key_env={KEY_ENV}", "answerer.max_retries=0",
        "judge.model=fake-judge", f"judge.base_url={server.base_url}", f"judge.api_key_env={KEY_ENV}",
        "judge.max_retries=0", "judge.runs=1",
    ]
    return run(RunConfig.from_dict(compose_config(overrides)), overrides)


def _bodies(server: FakeOpenAIServer, model: str) -> list[dict]:
    return [r.body for r in server.requests if r.body.get("model") == model]


def _metrics(result) -> dict:
    return json.loads(result.paths.metrics.read_text())


def _fill_fstring(source: str, values: dict[str, str]) -> str:
    """An f-string's source filled by text substitution (this test's own reading of it)."""
    body = source[4:-3].replace('\\"', '"')
    return re.sub(r"\{\{|\}\}|\{([^{}]+)\}", lambda m: {"{{": "{", "}}": "}"}.get(m[0]) or values[m[1]], body)


def _authors_prompt(lines: list[str], question: str, when: str | None) -> str:
    template = text("eval/llm.py", "<module>", "ANSWER_PROMPT_TEMPLATE")
    if when is not None:
        template = template.replace("Question: {question}", f"Current Date: {when}\nQuestion: {{question}}")
    return template.format(context="\n".join(lines) or "(no relevant memories found)", question=question)


def test_orgmem_requests_are_the_benchmarks_texts_filled(server, tmp_path, monkeypatch, official_dir):
    monkeypatch.setenv(KEY_ENV, "sk-test")
    result = _run(server, tmp_path, "orgmem", official_dir)
    questions_file = data_path("orgmembench/datasets/helix/medium/benchmark_v0.0.jsonl")
    assert questions_file is not None
    records = {r["id"]: r for r in map(json.loads, questions_file.read_text().splitlines())}
    prefix, rest = text("orgmembench/answerer.py", "<module>", "BASIC_ANSWER_PROMPT").split("{context}")
    answers = _bodies(server, "fake-answerer")
    assert len(answers) == 3
    for record in result.records:
        suffix = rest.format(question=record["question"])
        body = next(b for b in answers if b["messages"][0]["content"].endswith(suffix))
        assert [m["role"] for m in body["messages"]] == ["user"]
        content = body["messages"][0]["content"]
        context = content[len(prefix): len(content) - len(suffix)]
        assert content.startswith(prefix) and 0 < len(context) <= 40_000 and context == context.strip()
    system = text("orgmembench/judge.py", "<module>", "_JUDGE_SYSTEM")
    emergent = text("orgmembench/judge.py", "build_judge_prompt", "extra")
    source = text("orgmembench/judge.py", "build_judge_prompt", "<return>")
    judged = _bodies(server, "fake-judge")
    assert len(judged) == 3
    for record in result.records:
        raw = records[record["qid"]]
        subpoints = [{"id": sp["id"], "criterion": sp.get("criterion", ""),
                      "fail_criterion": sp.get("fail_criterion") or sp.get("fail_if", "")}
                     for sp in raw["rubric_subpoints"]]
        emergent_question = raw["category"] == "EMERGENT" or (raw.get("metadata") or {}).get("validation_mode") == "union"
        expected = _fill_fstring(source, {
            "question.public_category": PUBLIC_CATEGORY[raw["category"]], "question.text": raw["text"],
            "extra": emergent if emergent_question else "",
            "gt": json.dumps(raw["ground_truth_answer"], ensure_ascii=False, indent=2),
            "json.dumps(subpoints, ensure_ascii=False, indent=2)": json.dumps(subpoints, ensure_ascii=False, indent=2),
            "answer_text[:6000]": ANSWER[:6000]})
        body = next(b for b in judged if b["messages"][-1]["content"] == expected)
        assert body["messages"][0] == {"role": "system", "content": system} and len(body["messages"]) == 2
        assert body["temperature"] == 0  # the paper: gpt-4o-mini grades every facet at temperature 0
        fractions = [[1.0, 0.5, 0.0, 0.25][i % 4] for i in range(len(subpoints))]
        weights = [_weight(sp) for sp in raw["rubric_subpoints"]]
        score = sum(w * f for w, f in zip(weights, fractions)) / sum(weights)
        assert record["metrics"]["score"] == pytest.approx(100 * score, abs=1e-9)
    metrics = _metrics(result)
    assert (metrics["wording"], metrics["answer_wording"], metrics["judge_wording"]) == ("official",) * 3
    assert "[answer: official, judge: official]" in result.table.splitlines()[0]


def _weight(subpoint: dict) -> float:
    """SOURCE.md: a subpoint's weight is ``max_score`` or ``weight``, default 1."""
    value = subpoint.get("max_score", subpoint.get("weight"))
    try:
        return float(value) or 1.0
    except (TypeError, ValueError):
        return 1.0


def _locomo_lines(record: dict, turns: dict[str, tuple[str, str]]) -> list[str]:
    return [f"{i}. {turns[hit['doc_id']][0]} {turns[hit['doc_id']][1]}" for i, hit in enumerate(record["hits"], 1)]


def _locomo_turns() -> dict[str, tuple[str, str]]:
    """dia_id -> ("[<session date, ISO, UTC>]", "<speaker>: <text>[ caption]") from the raw file."""
    path = data_path("locomo/locomo10.json")
    assert path is not None
    turns = {}
    for sample in json.loads(path.read_text())[:1]:
        conversation = sample["conversation"]
        for key, value in conversation.items():
            if re.fullmatch(r"session_\d+", key):
                when = datetime.strptime(conversation[f"{key}_date_time"], "%I:%M %p on %d %B, %Y")
                for turn in value:
                    caption = f" [shared an image: {turn['blip_caption']}]" if turn.get("blip_caption") else ""
                    turns[turn["dia_id"]] = (f"[{when.isoformat()}+00:00]", f"{turn['speaker']}: {turn['text']}{caption}")
    return turns


def test_locomo_answers_with_the_authors_template_and_judges_with_mem0s(server, tmp_path, monkeypatch, official_dir):
    monkeypatch.setenv(KEY_ENV, "sk-test")
    result = _run(server, tmp_path, "locomo", official_dir)
    turns = _locomo_turns()
    answers = _bodies(server, "fake-answerer")
    assert len(answers) == len(result.records) == 3
    for record in result.records:
        expected = _authors_prompt(_locomo_lines(record, turns), record["question"], None)  # LoCoMo: no question date
        body = next(b for b in answers if b["messages"][0]["content"] == expected)
        assert len(body["messages"]) == 1 and body["messages"][0]["role"] == "user"
        assert (body["temperature"], body["seed"], body["max_tokens"]) == (0, AUTHORS_SEED, 512)
    accuracy = text("evaluation/metrics/llm_judge.py", "<module>", "ACCURACY_PROMPT")
    judged = _bodies(server, "fake-judge")
    graded = [r for r in result.records if r["metrics"].get("llm_judge") is not None]
    assert len(judged) == len(graded) > 0
    for record in graded:
        expected = accuracy.format(question=record["question"], gold_answer=str(record["reference"]),
                                   generated_answer=ANSWER)
        body = next(b for b in judged if b["messages"] == [{"role": "user", "content": expected}])
        assert body["response_format"] == {"type": "json_object"} and body["temperature"] == 0
        assert "max_tokens" not in body and "seed" not in body  # evaluate_llm_judge sends neither
        assert record["metrics"]["llm_judge"] == 100.0  # a reply naming both labels still counts (mem0's rule)
    metrics = _metrics(result)
    assert (metrics["answer_wording"], metrics["judge_wording"], metrics["wording"]) == ("authors", "official", "official")
    assert metrics["prompts"]["answer"]["texts"] == {
        "authors.answer": "140a426f312b91d02677101af89ee76aded7f99adafe025e9c165950c8dee197"}
    assert metrics["prompts"]["judge"]["cite"].startswith("mem0ai/mem0@b3ede5b7c0ac")
    assert Path(metrics["prompts"]["judge"]["files"][0]["path"]).is_relative_to(official_dir)
    assert "[answer: authors, judge: official]" in result.table.splitlines()[0]


def test_longmemeval_answers_with_the_date_line_and_judges_with_the_kinds_template(server, tmp_path, monkeypatch,
                                                                                   official_dir):
    from loaders import load_dataset

    monkeypatch.setenv(KEY_ENV, "sk-test")
    result = _run(server, tmp_path, "longmemeval_s", official_dir)
    episodes = {e.episode_id: e for e in load_dataset("longmemeval_s", limit=3)}
    answers, judged = _bodies(server, "fake-answerer"), _bodies(server, "fake-judge")
    assert len(answers) == len(judged) == len(result.records) == 3
    for record in result.records:
        episode = episodes[record["episode"]]
        docs = {d.doc_id: d for d in episode.documents}
        question = episode.questions[0]
        lines = []
        for i, hit in enumerate(record["hits"], 1):
            doc = docs[hit["doc_id"]]
            role = doc.meta["role"]
            content = doc.text.split("] ", 1)[1][len(role) + 2:]
            lines.append(f"{i}. [{doc.date.isoformat()}+00:00] {role}: {content}")
        when = question.meta["question_date"].isoformat() + "+00:00"
        expected = _authors_prompt(lines, question.text, when)
        assert expected.count("Current Date: ") == 1
        body = next(b for b in answers if b["messages"][0]["content"] == expected)
        assert (body["temperature"], body["seed"], body["max_tokens"]) == (0, AUTHORS_SEED, 512)
        index = 4 if question.meta["abstention"] else LME_TEMPLATE[question.category]
        template = text("src/evaluation/evaluate_qa.py", "get_anscheck_prompt", "template", index)
        expected = template.format(question.text, question.answer, ANSWER)
        body = next(b for b in judged if b["messages"][0]["content"] == expected)
        assert body["messages"] == [{"role": "user", "content": expected}]
        assert body["temperature"] == 0 and body["max_tokens"] == 10 and "seed" not in body  # evaluate_qa.py
        assert record["metrics"]["accuracy"] == 100.0  # 'yes' in "yes." (the official substring rule)
    metrics = _metrics(result)
    assert (metrics["answer_wording"], metrics["judge_wording"]) == ("authors", "official")


def test_a_changed_text_stops_the_run_in_one_line_before_any_request(server, tmp_path, monkeypatch):
    from memory_protocol import ConfigError

    monkeypatch.setenv(KEY_ENV, "sk-test")
    data = json.loads((SHARED_OFFICIAL / "templates.json").read_text(encoding="utf-8"))
    entry = next(e for e in data["files"] if e["path"] == "evaluation/metrics/llm_judge.py")
    entry["texts"][0]["text"] += " "
    copy = tmp_path / "official"
    copy.mkdir()
    (copy / "templates.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ConfigError, match="ACCURACY_PROMPT in <module> of mem0/evaluation/metrics/llm_judge.py"):
        _run(server, tmp_path, "locomo", copy)
    assert server.request_count == 0


def test_without_any_source_a_run_uses_our_wording_says_so_and_is_marked(server, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(KEY_ENV, "sk-test")
    monkeypatch.chdir(tmp_path)
    own = _run(server, tmp_path, "locomo", tmp_path / "nowhere")  # official_dir set: searched alone
    lines = [line for line in capsys.readouterr().err.splitlines() if "official wording" in line]
    assert [line.split(":")[0] for line in lines] == ["answerer", "judge"]
    assert "(mem-plus-plus/eval/llm.py) was not found, so our own wording is used" in lines[0]
    metrics = _metrics(own)
    assert (metrics["wording"], metrics["answer_wording"], metrics["judge_wording"]) == ("own", "own", "own")
    assert "[answer: own, judge: own; own wording: not comparable with published scores]" in own.table.splitlines()[0]
    assert all("response_format" not in body for body in _bodies(server, "fake-judge"))
    official = _run(server, tmp_path, "locomo", SHARED_OFFICIAL)
    assert official.paths.root != own.paths.root  # official and own wording never share a run folder
