"""rejudge against the local fake server: only judge requests are sent (none for answers or
retrieval), a repeat costs nothing, and the new judged run lands beside the old one."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness.rejudge import rejudge, rejudge_estimate
from harness.run_data import load_run
from tests.data_paths import needs_data
from tests.fake_openai_server import FakeOpenAIServer, last_user_content

pytestmark = needs_data("locomo/locomo10.json")
ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = 3


GRADED = re.compile(r"(?:Answer to grade|Generated answer):\s*(.*)")


def accepts(answer: str) -> bool:
    """The fixture judge's verdict in the run's wording: CORRECT for one answer length in four (the
    run's own answers, "It was in 2022.", are 15 characters); the strict wording says WRONG."""
    return len(answer.strip()) % 4 == 3


def is_judge(content: str) -> bool:
    return "Answer to grade" in content or "CORRECT" in content


def reply(body: dict) -> str:
    content = last_user_content(body)
    if not is_judge(content):
        return "It was in 2022."
    strict = "Grade an answer strictly" in content
    graded = GRADED.search(content)
    assert graded is not None, content
    return json.dumps({"reasoning": "fixture", "label": "CORRECT" if accepts(graded[1]) and not strict else "WRONG"})


@pytest.fixture()
def answered(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMPP_TEST_KEY", "sk-test-rejudge")
    server = FakeOpenAIServer(answer_fn=reply).start()
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    overrides = ["progress=false", "dataset=locomo", "system=bm25", f"dataset.limit={QUESTIONS}",
                 f"store.cache_dir={tmp_path / 'cache'}", f"store.results_dir={tmp_path / 'runs'}",
                 "answerer=openai_compatible", "answerer.model=fake-answerer", f"answerer.base_url={server.base_url}",
                 "answerer.api_key_env=MEMPP_TEST_KEY", "answerer.max_retries=0", "judge.model=fake-judge",
                 f"judge.base_url={server.base_url}", "judge.api_key_env=MEMPP_TEST_KEY", "judge.max_retries=0",
                 "judge.runs=1"]
    done = subprocess.run([sys.executable, "run.py", *overrides], cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr
    (folder,) = (tmp_path / "runs" / "locomo").iterdir()
    yield server, folder, done
    server.stop()


def test_rejudge_sends_only_judge_requests(answered) -> None:
    server, folder, _ = answered
    before = server.request_count
    options = {"judge.model": "second-judge", "wording": "strict"}
    priced = rejudge_estimate(load_run(folder), options)  # the dry run: one call per question, none sent
    assert (priced.requests, priced.calls, server.request_count) == (QUESTIONS, QUESTIONS, before)
    new = rejudge(load_run(folder), options)
    sent = server.requests[before:]
    assert len(sent) == QUESTIONS
    assert {r.body["model"] for r in sent} == {"second-judge"}
    assert all("Grade an answer strictly" in r.last_user_content for r in sent)
    assert new.parent == folder.parent and new.name.startswith(folder.name + "__rejudge-second-judge-strict")
    records = [json.loads(line) for line in (new / "records.jsonl").read_text().splitlines()]
    old = [json.loads(line) for line in (folder / "records.jsonl").read_text().splitlines()]
    assert [r["answer"] for r in records] == [r["answer"] for r in old]  # the cached answers, not new ones
    assert all(r["metrics"]["llm_judge"] == 0.0 for r in records)  # the strict fixture says WRONG
    assert all(r["metrics"]["llm_judge"] == 100.0 for r in old)
    assert all(r["miss"] is not None for r in records)
    again = rejudge(load_run(folder), options)
    assert again == new and server.request_count == before + QUESTIONS  # cached: nothing sent


def test_rejudge_cli_refuses_a_retrieval_only_run_in_one_line(tmp_path) -> None:
    folder = tmp_path / "locomo" / "bm25-1"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"dataset": {"name": "locomo"}, "answerer": {"name": "none"}}))
    (folder / "records.jsonl").write_text(json.dumps({"qid": "conv-26/0", "metrics": {}}) + "\n")
    done = subprocess.run([sys.executable, "scripts/rejudge.py", str(folder), "judge.model=x"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "retrieval-only" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_robustness_table_lists_every_judge_with_kappa_and_leniency(answered) -> None:
    from harness.robustness import PROBES, probed_leniency, published_leniency, robustness
    from loaders.published import read_published
    from tests.data_paths import DATA_ROOT, require_data

    server, folder, _ = answered
    new = rejudge(load_run(folder), {"judge.model": "second-judge", "wording": "strict"})
    runs = [load_run(folder), load_run(new)]
    wrong = {v: read_published(require_data(f"published/audit/{v}.scored.json")).items for v in PROBES}
    before = server.request_count
    free, _ = probed_leniency(runs, DATA_ROOT)  # nothing graded yet: nothing is sent
    _, priced = probed_leniency(runs, DATA_ROOT, "estimate")
    distinct = len({(i.conversation, i.question, i.gold, i.answer) for items in wrong.values() for i in items})
    assert server.request_count == before and distinct == 3067  # 11 repeats in ap_v1, 2 shared by both files
    assert all(v == f"— (not graded yet: leniency=true sends {distinct:,} judge calls, estimate=true prices them)"
               for v in free.values())
    assert len(priced) == 2 and all(f"-> {distinct} calls to send" in note for note in priced)
    rates, _ = probed_leniency(runs, DATA_ROOT, "send")
    sent = server.requests[before:]
    assert len(sent) == 2 * distinct and all(is_judge(r.last_user_content) for r in sent)  # no answer, no retrieval
    assert {r.body["model"] for r in sent} == {"fake-judge", "second-judge"}
    for version, items in wrong.items():  # the rate the fixture judge's verdicts give, not a real model's
        expected = 100.0 * sum(accepts(i.answer) for i in items) / len(items)
        assert rates["fake-judge (run wording)"][version] == pytest.approx(expected)
        assert rates["second-judge (strict)"][version] == 0.0
    assert rates["fake-judge (run wording)"]["ap_v1"] == pytest.approx(100 * 382 / 1540)
    assert probed_leniency(runs, DATA_ROOT)[0] == rates and server.request_count == before + len(sent)  # cached

    table, lines = robustness(runs, {**published_leniency(DATA_ROOT), **rates})
    assert list(table.columns) == ["fake-judge (run wording)", "second-judge (strict)", "rank moves"]
    assert table.loc["bm25"].tolist() == [100.0, 0.0, 0.0]
    assert lines[0] == f"Cohen's kappa fake-judge (run wording) vs second-judge (strict): 0.000 over {QUESTIONS} answers"
    assert "leniency second-judge (strict): ap_v1 0.00%, ap_v2 0.00% of deliberately wrong answers accepted" in lines
    assert any(line.startswith("leniency fake-judge (run wording): ap_v1 24.81%, ap_v2 26.23%") for line in lines)
    # the published judge's own labels are its oracle: AP_BASELINE_REPORT.md (SOURCE.md) 10.61% and 62.81%
    assert any("ap_v1: 10.61%" in line for line in lines) and any("ap_v2: 62.81%" in line for line in lines)
    done = subprocess.run([sys.executable, "scripts/robustness.py", str(folder), str(new)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert all(line in done.stdout.splitlines() for line in lines) and server.request_count == before + len(sent)


def test_robustness_cli_refuses_an_unknown_option_in_one_line(tmp_path) -> None:
    done = subprocess.run([sys.executable, "scripts/robustness.py", str(tmp_path), "lenient=yes"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "lenient=yes" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_rescore_of_our_run_with_errata(answered) -> None:
    # conv-26's third question (locomo_0_qa2, "What fields would Caroline be likely to pursue...") has a
    # wrong gold in locomo-audit's errata, so the ceiling of these 3 questions is 2/3.
    from harness.misses import GOLD_WRONG, attribute
    from harness.rescore import rescore
    from loaders.published import load_errata
    from loaders.locomo import load_locomo
    from tests.data_paths import DATA_ROOT, require_data

    require_data("published/audit/errors.json")
    _, folder, _ = answered
    episodes = list(load_locomo(DATA_ROOT))
    result = rescore(load_run(folder), episodes, load_errata("locomo-audit", DATA_ROOT), "locomo-audit", n_resamples=100)
    assert result.summary.loc["overall", "llm_judge"] == 100.0
    assert result.ceilings["overall"] == pytest.approx(200 / 3)
    wrong = [r for r in result.records if r.get("erratum", {}).get("wrong_gold")]
    assert [r["qid"] for r in wrong] == ["conv-26/2"]
    assert attribute(wrong[0], "llm_judge") == GOLD_WRONG


def test_longmemeval_judges_take_locomo_questions_by_their_kind() -> None:
    # LongMemEval's judge picks one of its prompts by question type (evaluate_qa.py): the probe gives
    # LoCoMo's temporal questions its temporal prompt (off-by-one days accepted) and the rest its default.
    from harness.robustness import as_judged
    from judges.graders.longmemeval import LongMemEvalJudge
    from loaders.locomo import load_locomo
    from tests.data_paths import DATA_ROOT

    questions = [q for episode in load_locomo(DATA_ROOT) for q in episode.questions]
    judge = LongMemEvalJudge.own()
    kinds = {q.category: judge.kind_for(as_judged(q, "longmemeval_s")) for q in questions}
    assert kinds["temporal"] == "temporal" and kinds["single-hop"] == "default" and kinds["multi-hop"] == "default"
    temporal = next(q for q in questions if q.category == "temporal")
    content = judge.request(as_judged(temporal, "longmemeval_s"), "12 April 2023")[-1]["content"]
    assert temporal.text in content and str(temporal.answer) in content and "12 April 2023" in content
    assert as_judged(temporal, "locomo") is temporal
