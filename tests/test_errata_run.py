"""``dataset.errata=locomo-audit`` as a run setting: validated in one line, fetched by its pin, and a
judged LoCoMo run's summary prints the raw score, the score on sound golds and the ceiling; the
published figures (ceiling 93.57, the memos run's 76.73) come out of the summary the runner writes."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.compose import compose_config
from harness.config import RunConfig
from harness.corrected_evidence import audited_questions, corrected_evidence
from harness.rescore import CEILING, SOUND, errata_keys, mark_erratum, published_records, sound_scores
from judges.aggregate import summarize
from loaders.fetch import ERRATA, fetch_errata
from loaders.published import load_errata
from loaders.locomo import load_locomo
from loaders.fetch import MIRROR_ENV
from loaders.published import read_published
from memory_protocol import ConfigError, DatasetError
from tests.data_mirror import closed_port_url, serve
from tests.data_paths import needs_data, require_data
from tests.fake_openai_server import FakeOpenAIServer, last_user_content

pytestmark = needs_data("locomo/locomo10.json", "published/audit/errors.json")
ROOT = Path(__file__).resolve().parent.parent
MEMOS = "published/audit/gpt-4o-mini-memos.eval_results.json"


@pytest.fixture(scope="module")
def audited():
    errata = load_errata("locomo-audit", file=require_data("published/audit/errors.json"))
    episodes = list(load_locomo(require_data("locomo/locomo10.json").parent.parent))
    return audited_questions(errata, episodes), episodes


def test_published_memos_run_through_the_runners_summary(audited) -> None:
    # locomo-audit: 99 wrong golds of 1,540 graded questions, ceiling 93.57; the memos full-context run
    # (mean 74.29 as its metadata says) scores 76.73 on the sound golds (scripts/rescore.py with errata).
    qids, episodes = audited
    records = published_records(read_published(require_data(MEMOS)), episodes)
    for record in records:  # what runner.run does after retrieval and after judging
        mark_erratum(record, qids)
        sound_scores(record, "llm_judge")
    keys = errata_keys(["llm_judge", "llm_judge_paper"], "llm_judge")
    assert keys == ["llm_judge", SOUND, CEILING, "llm_judge_paper"]
    summary = summarize([{"category": r["category"], **r["metrics"]} for r in records], keys)
    overall = summary.loc["overall"]
    assert overall["n"] == 1540
    assert overall["llm_judge"] == pytest.approx(74.29, abs=0.01)
    assert overall[SOUND] == pytest.approx(76.73, abs=0.01)
    assert overall[CEILING] == pytest.approx(93.57, abs=0.01)
    assert sum(1 for r in records if r["metrics"][SOUND] is None) == 99


def test_make_tables_locomo_table_prints_raw_sound_and_ceiling(audited, tmp_path: Path) -> None:
    # a run folder built from the published memos answers, as the runner writes a dataset.errata run
    from harness.qa import add_judge_columns
    from harness.reports import tables as T
    from tests.tables_support import PAPER_DIR, row, write_run

    qids, episodes = audited
    records = published_records(read_published(require_data(MEMOS)), episodes)
    for record in records:
        mark_erratum(record, qids)
        sound_scores(record, "llm_judge")
    keys = errata_keys(["llm_judge", "llm_judge_paper", *(f"llm_judge_run{i}" for i in range(3))], "llm_judge")
    summary = add_judge_columns(summarize([{"category": r["category"], **r["metrics"]} for r in records], keys),
                                "llm_judge", 3)
    write_run(tmp_path / "runs", "locomo", "full_context-memos", system="full_context", k=10, answerer="gpt-4o-mini",
              summary=json.loads(summary.to_json(orient="index")), records=records)
    (table2,) = T.build_tables(tmp_path / "runs", PAPER_DIR, tables=[2])
    columns = list(table2.shown.columns)
    assert columns[columns.index("Average LLM") + 1:][:2] == ["Average LLM sound golds*", "Ceiling*"]
    memos = row(table2, system="Full Context", answerer="gpt-4o-mini")
    assert memos["Average LLM"].startswith("74.3 ± 0.1")
    assert memos["Average LLM sound golds*"].startswith("76.7 [") and memos["Ceiling*"] == "93.6"
    assert any(note.startswith("Corrected golds (dataset.errata)") for note in table2.notes)


def test_corrected_evidence_replaces_only_audited_golds(audited) -> None:
    qids, episodes = audited
    fixed = corrected_evidence(episodes, qids)
    before = {q.qid: q.evidence_ids for e in episodes for q in e.questions}
    after = {q.qid: q.evidence_ids for e in fixed for q in e.questions}
    changed = {qid for qid in before if before[qid] != after[qid]}
    assert changed and changed <= set(qids)
    assert all(after[qid] == qids[qid].correct_evidence for qid in qids)
    # locomo_0_qa1, "When did Melanie paint a sunrise?": cited D1:12, the audit's evidence D1:14
    (sunrise,) = [qid for qid, e in qids.items() if e.question == "When did Melanie paint a sunrise?"]
    assert before[sunrise] == ("D1:12",) and after[sunrise] == ("D1:14",)


def reply(body: dict) -> str:
    content = last_user_content(body)
    if "Answer to grade" not in content and "CORRECT" not in content:
        return "It was in 2022."
    return json.dumps({"reasoning": "fixture", "label": "CORRECT"})


def test_a_judged_run_prints_raw_sound_and_ceiling(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # conv-26/2 ("What fields would Caroline be likely to pursue...") has a wrong gold in locomo-audit's
    # errata: of the first 3 questions (all judged right here) 2 have sound golds, a ceiling of 66.67.
    monkeypatch.setenv("MEMPP_TEST_KEY", "sk-test-errata")
    server = FakeOpenAIServer(answer_fn=reply).start()
    try:
        overrides = ["progress=false", "dataset=locomo", "system=bm25", "dataset.limit=3", "dataset.errata=locomo-audit",
                     f"store.cache_dir={tmp_path / 'cache'}", f"store.results_dir={tmp_path / 'runs'}",
                     "answerer=openai_compatible", "answerer.model=fake", f"answerer.base_url={server.base_url}",
                     "answerer.api_key_env=MEMPP_TEST_KEY", "answerer.max_retries=0", "judge.model=fake-judge",
                     f"judge.base_url={server.base_url}", "judge.api_key_env=MEMPP_TEST_KEY", "judge.max_retries=0"]
        done = subprocess.run([sys.executable, "run.py", *overrides], cwd=ROOT, capture_output=True, text=True,
                              timeout=1800, env={**os.environ, "PYTHONPATH": str(ROOT)})
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    (folder,) = (tmp_path / "runs" / "locomo").iterdir()
    overall = json.loads((folder / "metrics.json").read_text())["summary"]["overall"]
    assert (overall["llm_judge"], overall[SOUND], overall[CEILING]) == (100.0, 100.0, pytest.approx(200 / 3))
    header = (folder / "summary.md").read_text().splitlines()[2]
    assert header.index("llm_judge ") < header.index(SOUND) < header.index(CEILING) < header.index("recall_any@10")
    assert "llm_judge_sound" in done.stdout and "gold_sound" in done.stdout  # the console keeps them too
    records = {r["qid"]: r for r in map(json.loads, (folder / "records.jsonl").read_text().splitlines())}
    assert records["conv-26/2"]["erratum"]["wrong_gold"] and records["conv-26/2"]["miss"] == "gold wrong"
    assert records["conv-26/2"]["metrics"][SOUND] is None and records["conv-26/2"]["metrics"][CEILING] == 0.0


@pytest.mark.parametrize("overrides,message", [
    (["dataset=locomo", "dataset.errata=locomo-fix"], "the locomo benchmark takes null, locomo-audit"),
    (["dataset=orgmem", "dataset.errata=locomo-audit"], "the orgmem benchmark takes null; known errata: locomo-audit"),
    (["dataset=locomo", "dataset.errata_evidence=true"], "needs dataset.errata=<name>"),
])
def test_a_bad_setting_is_one_line(overrides: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        RunConfig.from_dict(compose_config(["system=bm25", *overrides]))
    assert RunConfig.from_dict(compose_config(["system=bm25", "dataset=locomo"])).dataset.errata is None


def test_run_py_exits_2_naming_the_choices() -> None:
    done = subprocess.run([sys.executable, "run.py", "dataset=locomo", "system=bm25", "dataset.errata=audit", "estimate=true"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].endswith("known errata: locomo-audit (locomo only)")


def test_fetched_by_its_pin_from_a_mirror(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = ERRATA["locomo-audit"]
    pin = source.files[0]
    mirror = tmp_path / "mirror" / source.repo / source.commit
    mirror.mkdir(parents=True)
    (mirror / pin.remote).symlink_to(require_data(pin.local))
    data = tmp_path / "data"
    with serve(tmp_path / "mirror") as (url, state):
        monkeypatch.setenv(MIRROR_ENV, url)
        path = fetch_errata("locomo-audit", data, str(data))
        assert path == data / pin.local and hashlib.sha256(path.read_bytes()).hexdigest() == pin.sha256
        assert state.paths() == [f"/{source.repo}/{source.commit}/{pin.remote}"]
        assert fetch_errata("locomo-audit", data, str(data)) == path and len(state.paths()) == 1
    assert len(load_errata("locomo-audit", file=path)) == 156
    monkeypatch.setenv(MIRROR_ENV, closed_port_url())
    with pytest.raises(DatasetError) as caught:
        fetch_errata("locomo-audit", tmp_path / "empty", str(tmp_path / "empty"))
    assert "\n" not in str(caught.value) and "the fetch failed" in str(caught.value)


def test_errata_evidence_is_the_gold_of_the_retrieval_metrics(tmp_path: Path) -> None:
    # locomo_0_qa1 ("When did Melanie paint a sunrise?"): LoCoMo cites D1:12, the audit D1:14
    from harness.corrected_evidence import ranked, recall_any

    overrides = ["progress=false", "dataset=locomo", "system=bm25", "dataset.limit=3", "dataset.errata=locomo-audit",
                 "dataset.errata_evidence=true", f"store.cache_dir={tmp_path / 'cache'}",
                 f"store.results_dir={tmp_path / 'runs'}"]
    done = subprocess.run([sys.executable, "run.py", *overrides], cwd=ROOT, capture_output=True, text=True, timeout=1800,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    (folder,) = (tmp_path / "runs" / "locomo").iterdir()
    assert "errata_evidence=true" in folder.name
    records = {r["qid"]: r for r in map(json.loads, (folder / "records.jsonl").read_text().splitlines())}
    sunrise = next(r for r in records.values() if r["question"] == "When did Melanie paint a sunrise?")
    assert sunrise["gold"] == ["D1:14"] and sunrise["erratum"]["type"] == "WRONG_CITATION"
    assert sunrise["metrics"]["recall_any@10"] == recall_any(ranked(sunrise), ["D1:14"], 10)
