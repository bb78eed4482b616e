"""Hostile and nonsensical dataset files (issue 23, items 2-3): each is refused in one line, or loads
with the benchmark's own meaning and a visible note; deep and huge files fail fast in bounded memory.

The parser cases run in a child process under a 1 GiB address-space limit (RLIMIT_AS), so a
regression fails the test instead of taking the machine down.
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from loaders import dataset_notes, load_dataset
from tests.test_loaders_synthetic import error_of, lme_entry, locomo_sample, write_lme, write_locomo, write_orgmem

ROOT = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------- LongMemEval_S: has_answer as the official code reads it


def lme_with_has_answer(value: Any) -> dict[str, Any]:
    entry = lme_entry()
    entry["haystack_sessions"][1][0]["has_answer"] = value
    return entry


@pytest.mark.parametrize("value", [True, 1, 1.0])
def test_has_answer_true_or_one_is_gold(tmp_path: Path, value: Any) -> None:
    # run_retrieval.py process_item_flat_index: value in [True, False] (1 == True passes), gold when truthy
    write_lme(tmp_path, [lme_with_has_answer(value)])
    (episode,) = load_dataset("longmemeval_s", data_dir=str(tmp_path))
    assert episode.questions[0].evidence_ids == ("answer_s1#0",)
    assert episode.documents[2].meta["has_answer"] is True  # stored as a bool for the official scorer


@pytest.mark.parametrize("value", [False, 0])
def test_has_answer_false_or_zero_is_not_gold(tmp_path: Path, value: Any) -> None:
    write_lme(tmp_path, [lme_with_has_answer(value)])
    (episode,) = load_dataset("longmemeval_s", data_dir=str(tmp_path))
    assert episode.questions[0].evidence_ids == ()
    assert episode.documents[2].meta["has_answer"] is False


@pytest.mark.parametrize("value", ["true", "yes", 2, None, [True]])
def test_has_answer_the_official_check_rejects_is_refused(tmp_path: Path, value: Any) -> None:
    write_lme(tmp_path, [lme_with_has_answer(value)])
    message = error_of(lambda: load_dataset("longmemeval_s", data_dir=str(tmp_path)))
    assert "record q1 session answer_s1 turn 0" in message and "field 'has_answer'" in message
    assert "must be true or false" in message and repr(value) in message and "\n" not in message


def test_a_user_turn_of_an_answer_session_must_carry_has_answer(tmp_path: Path) -> None:
    entry = lme_entry()
    del entry["haystack_sessions"][1][0]["has_answer"]
    write_lme(tmp_path, [entry])
    message = error_of(lambda: load_dataset("longmemeval_s", data_dir=str(tmp_path)))
    assert "session answer_s1 turn 0" in message and "field 'has_answer'" in message and "missing field" in message


def test_unknown_answer_session_is_refused(tmp_path: Path) -> None:
    entry = lme_entry()
    entry["answer_session_ids"] = ["answer_s1", "answer_gone"]
    write_lme(tmp_path, [entry])
    message = error_of(lambda: load_dataset("longmemeval_s", data_dir=str(tmp_path)))
    assert "record q1" in message and "field 'answer_session_ids'" in message and "'answer_gone'" in message


def test_longmemeval_question_dated_before_its_haystack_is_named(tmp_path: Path, caplog) -> None:
    early = lme_entry("early")
    early["question_date"] = "2023/05/01 (Mon) 10:00"  # every session is from May 20-21
    write_lme(tmp_path, [lme_entry("fine"), early])
    with caplog.at_level(logging.WARNING, logger="loaders"):
        episodes = load_dataset("longmemeval_s", data_dir=str(tmp_path))
    assert dataset_notes(episodes).dated_before_documents == ("early",)
    (line,) = [r.getMessage() for r in caplog.records if "dated before" in r.getMessage()]
    assert line.startswith("longmemeval_s: 1 question(s)") and line.endswith(": early")


def test_longmemeval_empty_haystack_and_empty_question(tmp_path: Path) -> None:
    entry = lme_entry()
    entry.update(haystack_sessions=[[], []], answer_session_ids=[])
    write_lme(tmp_path, [entry])
    message = error_of(lambda: load_dataset("longmemeval_s", data_dir=str(tmp_path)))
    assert "record q1" in message and "field 'haystack_sessions'" in message and "no turns" in message
    entry = lme_entry()
    entry["question"] = " \n"
    write_lme(tmp_path, [entry])
    message = error_of(lambda: load_dataset("longmemeval_s", data_dir=str(tmp_path)))
    assert "record q1" in message and "field 'question'" in message and "empty question" in message


def test_longmemeval_duplicate_id_beyond_the_limit(tmp_path: Path) -> None:
    write_lme(tmp_path, [lme_entry("a"), lme_entry("b"), lme_entry("c"), lme_entry("b")])
    for limit in (1, 3, None):
        message = error_of(lambda: load_dataset("longmemeval_s", data_dir=str(tmp_path), limit=limit))
        assert "record b" in message and "duplicate question_id" in message
    entry = lme_entry("d")
    del entry["question_id"]
    write_lme(tmp_path, [lme_entry("a"), entry])
    message = error_of(lambda: load_dataset("longmemeval_s", data_dir=str(tmp_path), limit=1))
    assert "record entry [1]" in message and "field 'question_id'" in message


# ---------------------------------------------------------------- LoCoMo


def test_locomo_evidence_matching_no_turn_is_refused(tmp_path: Path) -> None:
    sample = locomo_sample()
    sample["qa"][0]["evidence"] = ["D9:9"]  # the only gold: the question would silently lose its score
    write_locomo(tmp_path, [sample])
    message = error_of(lambda: load_dataset("locomo", data_dir=str(tmp_path)))
    assert "record conv-1 qa[0]" in message and "field 'evidence'" in message and "['D9:9'] match no turn" in message
    sample["qa"][0]["evidence"] = ["D1:1", "see above"]
    write_locomo(tmp_path, [sample])
    message = error_of(lambda: load_dataset("locomo", data_dir=str(tmp_path)))
    assert "record conv-1 qa[0]" in message and "holds no dialogue id" in message


def test_locomo_known_upstream_quirk_is_kept_and_named(tmp_path: Path, caplog) -> None:
    # data/locomo/SOURCE.md: conv-50's 'D30:05' matches no turn; it was conv-50/69's only evidence
    sample = locomo_sample()
    sample["sample_id"] = "conv-50"
    sample["qa"][0]["evidence"] = ["D30:05"]
    write_locomo(tmp_path, [sample])
    with caplog.at_level(logging.WARNING, logger="loaders"):
        (episode,) = load_dataset("locomo", data_dir=str(tmp_path))
    question = episode.questions[0]
    assert question.evidence_ids == () and question.meta["missing_evidence"] == ["D30:05"]
    notes = dataset_notes([episode])
    assert notes.dropped_evidence == ("conv-50/0",) and notes.without_gold == ("conv-50/0",)
    assert notes.as_dict()["without_gold"] == {"count": 1, "questions": ["conv-50/0"]}
    lines = [r.getMessage() for r in caplog.records]
    assert any("known upstream quirk" in line and line.endswith("conv-50/0") for line in lines)
    assert any("no gold evidence" in line and line.endswith("conv-50/0") for line in lines)


def test_locomo_conversation_without_sessions_is_refused(tmp_path: Path) -> None:
    empty = locomo_sample()
    empty["sample_id"] = "conv-2"
    empty["conversation"] = {"speaker_a": "Ann", "speaker_b": "Bob", "session_1_date_time": "1:56 pm on 8 May, 2023"}
    empty["qa"] = [{"question": "Who?", "answer": "Ann", "evidence": [], "category": 4}]
    write_locomo(tmp_path, [locomo_sample(), empty])
    message = error_of(lambda: load_dataset("locomo", data_dir=str(tmp_path)))
    assert "record conv-2" in message and "no session_N turns" in message


def test_locomo_empty_question_is_refused(tmp_path: Path) -> None:
    sample = locomo_sample()
    sample["qa"][1]["question"] = ""
    write_locomo(tmp_path, [sample])
    message = error_of(lambda: load_dataset("locomo", data_dir=str(tmp_path)))
    assert "record conv-1 qa[1]" in message and "field 'question'" in message and "empty question" in message


def test_locomo_duplicate_sample_id_whatever_the_limit(tmp_path: Path) -> None:
    write_locomo(tmp_path, [locomo_sample(), locomo_sample()])
    for limit in (1, None):
        message = error_of(lambda: load_dataset("locomo", data_dir=str(tmp_path), limit=limit))
        assert "record conv-1" in message and "duplicate sample_id" in message


# ---------------------------------------------------------------- OrgMemBench


def test_orgmem_empty_question_and_empty_corpus(tmp_path: Path) -> None:
    root = write_orgmem(tmp_path / "a")
    record = json.loads((root / "benchmark_v0.0.jsonl").read_text())
    (root / "benchmark_v0.0.jsonl").write_text(json.dumps({**record, "text": "  "}) + "\n")
    message = error_of(lambda: load_dataset("orgmem", data_dir=str(tmp_path / "a")))
    assert "record line 1 (Q-1)" in message and "field 'text'" in message and "empty question" in message
    root = write_orgmem(tmp_path / "b")
    (root / "corpus_index.jsonl").write_text("")
    message = error_of(lambda: load_dataset("orgmem", data_dir=str(tmp_path / "b")))
    assert "corpus_index.jsonl" in message and "lists no artefacts" in message


def test_orgmem_as_of_before_every_artefact_is_named(tmp_path: Path) -> None:
    write_orgmem(tmp_path, c4_text="Facts on record as of 2 April 2023?", occurred_at="2023-06-01")
    episodes = load_dataset("orgmem", data_dir=str(tmp_path))
    assert dataset_notes(episodes).dated_before_documents == ("Q-1",)


# ---------------------------------------------------------------- bounded parsing, in a child process

CHILD = textwrap.dedent("""
    import json, resource, sys, time
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))  # 1 GiB
    from loaders import DatasetError, load_dataset
    started = time.perf_counter()
    try:
        load_dataset(sys.argv[1], data_dir=sys.argv[2])
        outcome = "loaded"
    except DatasetError as exc:
        outcome = str(exc)
    # VmHWM: this process's peak RSS (ru_maxrss would carry the forking parent's peak across exec)
    status = open("/proc/self/status").read().split("VmHWM:")[1]
    print(json.dumps({"outcome": outcome, "seconds": time.perf_counter() - started,
                      "peak_mb": int(status.split()[0]) / 1024}))
""")


def load_in_child(dataset: str, data_dir: Path) -> dict[str, Any]:
    """Load in a fresh interpreter limited to 1 GiB; its outcome line, seconds and peak RSS (MiB)."""
    done = subprocess.run([sys.executable, "-c", CHILD, dataset, str(data_dir)], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


DEPTH = 200_000  # 400 KB of brackets: drove ijson to 24 GB and json.loads to a RecursionError


@pytest.mark.parametrize("dataset, gz", [("longmemeval_s", False), ("longmemeval_s", True), ("locomo", False)])
def test_deep_nesting_fails_fast_in_bounded_memory(tmp_path: Path, dataset: str, gz: bool) -> None:
    body = ("[" * DEPTH + "]" * DEPTH).encode()
    if dataset == "locomo":
        path = write_locomo(tmp_path, [])
    else:
        path = write_lme(tmp_path, [], gz=gz)
    path.write_bytes(gzip.compress(body) if gz else body)
    result = load_in_child(dataset, tmp_path)
    assert result["outcome"].startswith(str(path)) and "nested deeper than 64 levels" in result["outcome"]
    assert result["peak_mb"] < 200 and result["seconds"] < 10


def test_deep_nesting_in_orgmem_json_lines(tmp_path: Path) -> None:
    root = write_orgmem(tmp_path)
    (root / "source_of_truth" / "events.jsonl").write_text('{"id": ' + "[" * DEPTH + "]" * DEPTH + "}\n")
    result = load_in_child("orgmem", tmp_path)
    assert "events.jsonl" in result["outcome"] and "nested deeper than 64 levels at line 1" in result["outcome"]
    assert result["peak_mb"] < 200


HUGE = 8 << 20  # 8 MiB; the review's two 50 MB strings took 70-80 s in the stream parser


def test_huge_strings_are_refused_fast(tmp_path: Path) -> None:
    entry = lme_entry()
    entry["question"] = "b" * HUGE
    entry["haystack_sessions"][0][0]["content"] = "a" * HUGE
    path = write_lme(tmp_path / "lme", [entry])
    result = load_in_child("longmemeval_s", tmp_path / "lme")
    assert result["outcome"].startswith(str(path)) and "longer than 1,048,576 bytes" in result["outcome"]
    assert result["peak_mb"] < 200 and result["seconds"] < 5
    sample = locomo_sample()
    sample["qa"][0]["question"] = "b" * HUGE
    path = write_locomo(tmp_path / "locomo", [sample])
    result = load_in_child("locomo", tmp_path / "locomo")
    assert result["outcome"].startswith(str(path)) and "longer than 1,048,576 bytes at line" in result["outcome"]


def test_whole_read_file_and_gzip_bomb_are_capped(tmp_path: Path) -> None:
    path = write_locomo(tmp_path, [locomo_sample()])
    path.write_bytes(gzip.compress(b" " * (65 << 20)))  # 65 MiB of blanks in 64 KB
    message = error_of(lambda: load_dataset("locomo", data_dir=str(tmp_path)))
    assert str(path) in message and "unpacks to more than 67,108,864 bytes" in message


# ---------------------------------------------------------------- what a run shows


def test_a_run_records_the_notes_in_its_stats(tmp_path: Path) -> None:
    from harness.compose import compose_config
    from harness.config import RunConfig
    from harness.runner import run

    early = lme_entry("early")
    early["question_date"] = "2023/05/01 (Mon) 10:00"
    no_gold = lme_entry("no_gold")
    no_gold["haystack_sessions"][1][0]["has_answer"] = 0
    write_lme(tmp_path / "data", [lme_entry("fine"), early, no_gold])
    result = run(RunConfig.from_dict(compose_config([
        "dataset=longmemeval_s", f"dataset.data_dir={tmp_path / 'data'}", "system=bm25", "progress=false",
        f"store.cache_dir={tmp_path / 'cache'}", f"store.results_dir={tmp_path / 'runs'}",
    ])))
    stored = json.loads(result.paths.metrics.read_text())["stats"]["dataset_notes"]
    assert stored == {"without_gold": {"count": 1, "questions": ["no_gold"]},
                      "dated_before_documents": {"count": 1, "questions": ["early"]}}


def test_cli_exits_2_in_one_line_on_a_conversation_without_sessions(tmp_path: Path) -> None:
    sample = locomo_sample()
    sample["sample_id"] = "conv-2"
    sample["conversation"] = {"speaker_a": "Ann", "speaker_b": "Bob"}
    sample["qa"] = [{"question": "Who?", "answer": "Ann", "evidence": [], "category": 4}]
    path = write_locomo(tmp_path / "data", [locomo_sample(), sample])
    done = subprocess.run(
        [sys.executable, "run.py", "dataset=locomo", f"dataset.data_dir={tmp_path / 'data'}", "system=bm25",
         "progress=false", f"store.cache_dir={tmp_path / 'cache'}", f"store.results_dir={tmp_path / 'runs'}"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr[-2000:]
    (line,) = [line for line in done.stderr.splitlines() if str(path) in line]
    assert "record conv-2" in line and "no session_N turns" in line
    assert "| overall" not in done.stdout  # no all-NaN table
