"""Dataset loaders on small files written by the tests: each layout's rules, and a clear error for each kind of bad input."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterator
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest

from loaders import DatasetError, DatasetLoader, Selection, load_dataset, prepare_data_dir, resolve_data_dir, select
from memory_protocol import Document, Episode, Question



# ---------------------------------------------------------------- synthetic data: bad input


def lme_entry(qid: str = "q1", qtype: str = "multi-session") -> dict[str, Any]:
    return {
        "question_id": qid, "question_type": qtype, "question": "What did I buy?",
        "question_date": "2023/05/30 (Tue) 23:40", "answer": 2, "answer_session_ids": ["answer_s1"],
        "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/21 (Sun) 10:00"],
        "haystack_session_ids": ["filler_0", "answer_s1"],
        "haystack_sessions": [
            [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}],
            [{"role": "user", "content": "I bought 2 lamps", "has_answer": True},
             {"role": "assistant", "content": "nice", "has_answer": False}],
        ],
    }


def write_lme(data_dir: Path, entries: list[dict[str, Any]], name: str = "longmemeval_s_cleaned.json",
              gz: bool = False) -> Path:
    folder = data_dir / "longmemeval"
    folder.mkdir(parents=True, exist_ok=True)
    raw = json.dumps(entries).encode()
    path = folder / name
    path.write_bytes(gzip.compress(raw) if gz else raw)
    return path


def locomo_sample() -> dict[str, Any]:
    return {
        "sample_id": "conv-1",
        "conversation": {
            "speaker_a": "Ann", "speaker_b": "Bob",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "Hi Bob"},
                          {"speaker": "Bob", "dia_id": "D1:2", "text": "Hi Ann"}],
            "session_2_date_time": "9:05 am on 9 May, 2023",
        },
        "qa": [
            {"question": "Who said hi?", "answer": "Ann", "evidence": ["D1:1"], "category": 4},
            {"question": "Did Bob say bye?", "adversarial_answer": "yes", "evidence": ["D1:2; D1:2"],
             "category": 5},
        ],
    }


def write_locomo(data_dir: Path, samples: list[dict[str, Any]]) -> Path:
    (data_dir / "locomo").mkdir(parents=True, exist_ok=True)
    path = data_dir / "locomo" / "locomo10.json"
    path.write_text(json.dumps(samples, indent=1))
    return path


ORG_HEADER = "<!-- artefact_metadata\nslot_id: {slot}\nevent_id: {event}\ngenre: email_thread\nrole: primary\n" \
             "author: P-0001\ntestimony_type: direct\n-->\n\n"


def write_orgmem(data_dir: Path, c4_text: str = "Facts on record as of 2 April 2023?",
                 occurred_at: str = "2023-03-01", header_event: str = "EV-1") -> Path:
    root = data_dir / "orgmembench" / "datasets" / "helix" / "medium"
    (root / "corpus" / "EV-1").mkdir(parents=True)
    (root / "source_of_truth").mkdir()
    (root / "helix_canon").mkdir()
    (root / "corpus" / "EV-1" / "ART-1.md").write_text(
        ORG_HEADER.format(slot="ART-1", event=header_event) + "Body of the email.\n")
    (root / "corpus_index.jsonl").write_text(
        json.dumps({"slot_id": "ART-1", "path": "corpus/EV-1/ART-1.md", "event_id": "EV-1"}) + "\n")
    (root / "source_of_truth" / "events.jsonl").write_text(
        json.dumps({"id": "EV-1", "occurred_at": occurred_at, "recorded_at": "2023-03-02"}) + "\n")
    (root / "helix_canon" / "personas.jsonl").write_text(
        json.dumps({"persona_id": "P-0001", "display_name": "Maya Patel"}) + "\n")
    question = {
        "id": "Q-1", "category": "C4", "text": c4_text, "paraphrases": [],
        "ground_truth_answer": {"as_of_date": "2023-04-02", "asof_facts": ["a fact"], "changed_facts": []},
        "rubric_subpoints": [{"id": "C4.sub1", "max_score": 1.0, "criterion": "x", "fail_criterion": "y"}],
        "evidence_artefact_ids": ["ART-1"], "metadata": {},
    }
    (root / "benchmark_v0.0.jsonl").write_text(json.dumps(question) + "\n")
    return root


def error_of(call: Callable[[], Any]) -> str:
    with pytest.raises(DatasetError) as info:
        call()
    return str(info.value)


def test_synthetic_orgmem_loads(tmp_path: Path) -> None:
    write_orgmem(tmp_path)
    (episode,) = load_dataset("orgmem", data_dir=str(tmp_path), author="persona")
    (doc,) = episode.documents
    assert (doc.text, doc.author, doc.date, doc.thread) == ("Body of the email.", "Maya Patel", datetime(2023, 3, 1), "EV-1")
    (question,) = episode.questions
    assert question.as_of == date(2023, 4, 2) == question.meta["as_of_field"]
    assert question.answer == "As of date: 2023-04-02\nAsof facts:\n  - a fact\nChanged facts: none"


@pytest.mark.parametrize("text, expected", [
    ("as of 2023-03-12, list", date(2023, 3, 12)),
    ("As of April 2, 2023, what", date(2023, 4, 2)),
    ("as of March 31, 2023", date(2023, 3, 31)),
    ("from the standpoint of 2 April 2023", date(2023, 4, 2)),
    ("as of Apr 2, 2023", date(2023, 4, 2)),
])
def test_orgmem_c4_date_formats(tmp_path: Path, text: str, expected: date) -> None:
    write_orgmem(tmp_path, c4_text=text)
    (episode,) = load_dataset("orgmem", data_dir=str(tmp_path))
    assert episode.questions[0].as_of == expected


def test_orgmem_c4_without_date_is_an_error(tmp_path: Path) -> None:
    write_orgmem(tmp_path, c4_text="What are the facts on record?")
    message = error_of(lambda: load_dataset("orgmem", data_dir=str(tmp_path)))
    assert "benchmark_v0.0.jsonl" in message and "Q-1" in message and "field 'text'" in message
    assert "no as-of date" in message


def test_orgmem_unparsable_event_date(tmp_path: Path) -> None:
    write_orgmem(tmp_path, occurred_at="2023-13-45")
    message = error_of(lambda: load_dataset("orgmem", data_dir=str(tmp_path)))
    assert "events.jsonl" in message and "line 1" in message and "field 'occurred_at'" in message
    assert "unparsable date" in message


def test_orgmem_header_must_agree_with_index(tmp_path: Path) -> None:
    write_orgmem(tmp_path, header_event="EV-9")
    message = error_of(lambda: load_dataset("orgmem", data_dir=str(tmp_path)))
    assert "ART-1.md" in message and "field 'event_id'" in message and "'EV-9'" in message


def test_orgmem_invalid_jsonl_line(tmp_path: Path) -> None:
    root = write_orgmem(tmp_path)
    with (root / "benchmark_v0.0.jsonl").open("a") as handle:
        handle.write('{"id": "Q-2", "category": \n')
    message = error_of(lambda: load_dataset("orgmem", data_dir=str(tmp_path)))
    assert "benchmark_v0.0.jsonl" in message and "record line 2" in message and "column" in message


def test_truncated_json(tmp_path: Path) -> None:
    path = write_locomo(tmp_path, [locomo_sample()])
    path.write_text(path.read_text()[:200])
    message = error_of(lambda: load_dataset("locomo", data_dir=str(tmp_path)))
    assert str(path) in message and "invalid or truncated JSON" in message
    assert "line" in message and "column" in message and "char" in message


def test_truncated_gzip(tmp_path: Path) -> None:
    path = write_lme(tmp_path, [lme_entry()], name="longmemeval_s_cleaned_499.json.gz", gz=True)
    path.write_bytes(path.read_bytes()[:40])
    message = error_of(lambda: load_dataset("longmemeval_s", data_dir=str(tmp_path)))
    assert str(path) in message and "truncated or corrupt gzip" in message


def test_locomo_missing_field(tmp_path: Path) -> None:
    sample = locomo_sample()
    del sample["qa"][0]["question"]
    write_locomo(tmp_path, [sample])
    message = error_of(lambda: load_dataset("locomo", data_dir=str(tmp_path)))
    assert "locomo10.json" in message and "conv-1 qa[0]" in message and "field 'question'" in message
    assert "missing field" in message


def test_locomo_unparsable_date(tmp_path: Path) -> None:
    sample = locomo_sample()
    sample["conversation"]["session_1_date_time"] = "sometime in May"
    write_locomo(tmp_path, [sample])
    message = error_of(lambda: load_dataset("locomo", data_dir=str(tmp_path)))
    assert "record conv-1" in message and "field 'session_1_date_time'" in message and "unparsable date" in message


def test_locomo_synthetic_sessions_and_evidence(tmp_path: Path) -> None:
    write_locomo(tmp_path, [locomo_sample()])
    (episode,) = load_dataset("locomo", data_dir=str(tmp_path))
    assert [d.doc_id for d in episode.documents] == ["D1:1", "D1:2"]  # session_2 has only a date_time
    adversarial = episode.questions[1]
    assert (adversarial.qid, adversarial.answer, adversarial.category) == ("conv-1/1", "", "adversarial")
    assert adversarial.evidence_ids == ("D1:2",) and "missing_evidence" not in adversarial.meta
    assert adversarial.meta["adversarial_answer"] == "yes"


def test_longmemeval_missing_field(tmp_path: Path) -> None:
    entry = lme_entry()
    del entry["answer"]
    write_lme(tmp_path, [entry])
    message = error_of(lambda: load_dataset("longmemeval_s", data_dir=str(tmp_path)))
    assert "longmemeval_s_cleaned.json" in message and "record q1" in message and "field 'answer'" in message


@pytest.mark.parametrize("field", sorted(lme_entry()))
def test_longmemeval_every_field_is_required(tmp_path: Path, field: str) -> None:
    entry = lme_entry()
    del entry[field]
    write_lme(tmp_path, [entry])
    message = error_of(lambda: load_dataset("longmemeval_s", data_dir=str(tmp_path)))
    assert f"field '{field}'" in message and "missing field" in message


def test_longmemeval_unparsable_date(tmp_path: Path) -> None:
    entry = lme_entry()
    entry["haystack_dates"][1] = "30 May 2023"
    write_lme(tmp_path, [entry])
    message = error_of(lambda: load_dataset("longmemeval_s", data_dir=str(tmp_path)))
    assert "record q1" in message and "field 'haystack_dates[1]'" in message and "unparsable date" in message


@pytest.mark.parametrize("name, gz", [
    ("longmemeval_s_cleaned.json", False),
    ("longmemeval_s_cleaned_499.json.gz", True),
    ("longmemeval_s_cleaned_499.json.gz", False),  # detected by magic bytes, not by name
])
def test_longmemeval_plain_or_gzip(tmp_path: Path, name: str, gz: bool) -> None:
    write_lme(tmp_path, [lme_entry()], name=name, gz=gz)
    (episode,) = load_dataset("longmemeval_s", data_dir=str(tmp_path))
    question = episode.questions[0]
    assert [d.doc_id for d in episode.documents] == ["filler_0#0", "filler_0#1", "answer_s1#0", "answer_s1#1"]
    assert question.evidence_ids == ("answer_s1#0",) and question.answer == "2"
    assert question.as_of == date(2023, 5, 30) and not question.meta["abstention"]
    assert episode.documents[2].meta == {"role": "user", "has_answer": True}
    assert episode.documents[3].meta == {"role": "assistant", "has_answer": False}
    assert episode.documents[0].meta == {"role": "user"}
    assert episode.documents[2].text == "[2023/05/21 (Sun) 10:00] user: I bought 2 lamps"
    assert episode.documents[1].text == "[2023/05/20 (Sat) 02:21] assistant: hi"


def test_longmemeval_explicit_file_limit_categories(tmp_path: Path) -> None:
    entries = [lme_entry("a"), lme_entry("b_abs", "temporal-reasoning"), lme_entry("c", "temporal-reasoning")]
    path = write_lme(tmp_path / "elsewhere", entries, name="mine.json")
    episodes = load_dataset("longmemeval_s", data_dir=str(tmp_path), file=str(path), limit=2)
    assert [e.episode_id for e in episodes] == ["a", "b_abs"]
    assert episodes[1].questions[0].meta["abstention"]
    episodes = load_dataset("longmemeval_s", data_dir=str(tmp_path), file=str(path),
                            categories=["temporal-reasoning"])
    assert [e.episode_id for e in episodes] == ["b_abs", "c"]
    message = error_of(lambda: load_dataset("longmemeval_s", data_dir=str(tmp_path), file="nope.json"))
    assert "nope.json" in message and "missing file" in message


def test_select_stops_consuming_at_limit() -> None:
    built: list[int] = []

    def episodes() -> Iterator[Episode]:
        for i in range(10):
            built.append(i)
            yield Episode(str(i), (), (Question(f"q{i}", "?", "x", ""),))

    kept = select(episodes(), Selection(limit=3))
    assert [e.episode_id for e in kept] == ["0", "1", "2"] and built == [0, 1, 2]


def test_unknown_dataset_name() -> None:
    message = error_of(lambda: load_dataset("locomo11"))
    assert "unknown dataset 'locomo11'" in message
    assert all(name in message for name in ("orgmem", "locomo", "longmemeval_s"))


def test_unknown_option(tmp_path: Path) -> None:
    message = error_of(lambda: load_dataset("orgmem", data_dir=str(tmp_path), tiers="medium"))
    assert "unknown options ['tiers']" in message and "tier" in message


def test_missing_data_dir_lists_every_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # the user data cache is searched last: keep the real one out
    repo = tmp_path / "repo"
    repo.mkdir()
    message = error_of(lambda: resolve_data_dir(None, env={}, cwd=tmp_path / "cwd", repo_root=repo))
    for place in (tmp_path / "cwd" / "data", repo / "data", tmp_path / "shared" / "data"):
        assert str(place) in message


def test_explicit_and_env_data_dir(tmp_path: Path) -> None:
    missing = tmp_path / "absent"
    message = error_of(lambda: load_dataset("locomo", data_dir=str(missing)))
    assert str(missing) in message and "data_dir argument" in message
    message = error_of(lambda: resolve_data_dir(None, env={"MEMPP_DATA_DIR": str(missing)}))
    assert str(missing) in message and "$MEMPP_DATA_DIR" in message
    assert resolve_data_dir(None, env={"MEMPP_DATA_DIR": str(tmp_path)}) == tmp_path.resolve()
    (tmp_path / "data").mkdir()
    assert resolve_data_dir(None, env={}, cwd=tmp_path, repo_root=tmp_path / "x") == (tmp_path / "data").resolve()


def test_missing_dataset_file(tmp_path: Path) -> None:
    message = error_of(lambda: load_dataset("locomo", data_dir=str(tmp_path)))
    assert str(tmp_path / "locomo" / "locomo10.json") in message and "missing file" in message
    message = error_of(lambda: load_dataset("orgmem", data_dir=str(tmp_path)))
    assert "unknown OrgMemBench tier 'medium'" in message


def test_bad_limit(tmp_path: Path) -> None:
    assert "limit" in error_of(lambda: load_dataset("locomo", data_dir=str(tmp_path), limit=-1))



@pytest.mark.parametrize("gz", [False, True])
def test_longmemeval_builds_only_what_the_selection_needs(tmp_path: Path, gz: bool, monkeypatch) -> None:
    from loaders import longmemeval

    built: list[str] = []
    build = longmemeval.build_episode

    def counting_build(entry, index, path):
        built.append(entry["question_id"])
        return build(entry, index, path)

    monkeypatch.setattr(longmemeval, "build_episode", counting_build)
    entries = [lme_entry("a"), lme_entry("b", "temporal-reasoning"), lme_entry("c", "temporal-reasoning")]
    write_lme(tmp_path, entries, gz=gz)
    assert [e.episode_id for e in load_dataset("longmemeval_s", data_dir=str(tmp_path), limit=2)] == ["a", "b"]
    assert built == ["a", "b"]  # 'c' is read for its id, never built
    # the category filter applies while streaming: the first temporal-reasoning question is 'b'
    built.clear()
    episodes = load_dataset("longmemeval_s", data_dir=str(tmp_path), limit=1, categories=["temporal-reasoning"])
    assert [e.episode_id for e in episodes] == ["b"] and built == ["a", "b"]


@pytest.mark.parametrize("gz", [False, True])
def test_longmemeval_truncated_file_fails_whatever_the_limit(tmp_path: Path, gz: bool) -> None:
    # two good entries, then a cut-off third: the ids of the entries beyond a limit are still read
    entries = [lme_entry("a"), lme_entry("b", "temporal-reasoning"), lme_entry("c", "temporal-reasoning")]
    text = json.dumps(entries)
    cut = text[: text.index('"question_id": "c"') + 10]
    path = tmp_path / "longmemeval" / "longmemeval_s_cleaned.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(gzip.compress(cut.encode()) if gz else cut.encode())
    for limit in (2, None):
        message = error_of(lambda: load_dataset("longmemeval_s", data_dir=str(tmp_path), limit=limit))
        assert str(path) in message and "invalid or truncated JSON" in message and "\n" not in message


def test_longmemeval_top_level_must_be_a_list_and_ids_unique(tmp_path: Path) -> None:
    path = tmp_path / "longmemeval" / "longmemeval_s_cleaned.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"question_id": "a"}))
    message = error_of(lambda: load_dataset("longmemeval_s", data_dir=str(tmp_path)))
    assert str(path) in message and "expected a JSON list of questions, got dict" in message
    write_lme(tmp_path, [lme_entry("a"), lme_entry("a")])
    message = error_of(lambda: load_dataset("longmemeval_s", data_dir=str(tmp_path)))
    assert "duplicate question_id" in message and "record a" in message


def test_a_loader_that_reads_no_files_needs_no_data_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def load_inline(size: int = 1) -> Iterator[Episode]:
        yield Episode("inline", (Document("d1", "The launch moved to Friday."),),
                      (Question("q1", "When is the launch?", "easy", "Friday", evidence_ids=("d1",)),)[:size])

    loader = DatasetLoader("inline", load_inline, ("easy",), needs_data=False)
    monkeypatch.setenv("MEMPP_DATA_DIR", str(tmp_path / "absent"))  # would be an error for a loader of files
    assert prepare_data_dir(loader) is None and loader.options() == ["size"]
    episodes = load_dataset(loader, size=1)
    assert [q.qid for e in episodes for q in e.questions] == ["q1"]
    with pytest.raises(DatasetError, match="does not exist"):
        prepare_data_dir("locomo")
