"""Dataset loaders: real counts on the shared data, and clear errors on bad input."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest

from loaders import DatasetError, load_dataset
from loaders.datadir import resolve_data_dir
from loaders.schema import Episode, Question
from loaders.selection import Selection, select


# ---------------------------------------------------------------- real data


@pytest.fixture(scope="module")
def data_dir() -> Path:
    try:
        root = resolve_data_dir(None)
    except DatasetError as exc:
        pytest.skip(f"benchmark data directory not found: {exc}")
    if not (root / "locomo").is_dir():
        pytest.skip(f"data directory {root} has no benchmark folders")
    return root


@pytest.fixture(scope="module")
def orgmem_episode(data_dir: Path) -> Episode:
    (episode,) = load_dataset("orgmem", data_dir=str(data_dir))
    return episode


@pytest.fixture(scope="module")
def locomo_episodes(data_dir: Path) -> list[Episode]:
    return load_dataset("locomo", data_dir=str(data_dir))


@pytest.fixture(scope="module")
def lme_episodes(data_dir: Path) -> list[Episode]:
    return load_dataset("longmemeval_s", data_dir=str(data_dir))


# OrgMemBench -------------------------------------------------------


def test_orgmem_corpus_counts(orgmem_episode: Episode) -> None:
    docs = orgmem_episode.documents
    assert orgmem_episode.episode_id == "orgmem-medium"
    assert len(docs) == 443
    assert len({d.doc_id for d in docs}) == 443
    assert len({d.thread for d in docs}) == 157
    assert docs[0].doc_id == "ART-EV-2023-002-001"  # corpus_index order
    assert all(d.author is None for d in docs)  # the benchmark passes no author
    assert {(d.author_role, d.evidence) for d in docs} == {("author", "header")}


def test_orgmem_documents_are_stripped_and_dated(orgmem_episode: Episode) -> None:
    docs = orgmem_episode.documents
    assert not any(d.text.startswith("<!--") for d in docs)
    assert all(d.text == d.text.strip() and d.text for d in docs)
    assert all(datetime(2023, 1, 10) <= d.date <= datetime(2024, 6, 15) for d in docs)
    assert {d.date.time() for d in docs} == {datetime.min.time()}
    first = docs[0]
    assert first.text.startswith("[09:00:00] Omar: Okay, so we need to talk about the TransLink thing")
    assert first.date == datetime(2023, 1, 15)
    assert first.thread == "EV-2023-002"
    assert first.meta == {
        "persona_id": "P-0009", "genre": "meeting_transcript", "role": "primary",
        "testimony_type": "direct", "event_id": "EV-2023-002", "recorded_at": "2023-01-15",
    }


def test_orgmem_questions(orgmem_episode: Episode) -> None:
    questions = orgmem_episode.questions
    assert len(questions) == 73
    assert Counter(q.category for q in questions) == {"C1": 15, "C2": 15, "C3": 7, "C4": 15, "C5": 15, "C6": 6}
    assert sum(len(q.rubric) for q in questions) == 247
    facets = Counter(q.category for q in questions for _ in q.rubric)
    assert facets == {"C1": 60, "C2": 58, "C3": 21, "C4": 45, "C5": 45, "C6": 18}
    # weights sum to 1.0, except 3 x 0.333 = 0.999 in the 43 three-facet questions
    assert all(abs(sum(f.max_score for f in q.rubric) - 1.0) <= 0.001 + 1e-9 for q in questions)
    doc_ids = {d.doc_id for d in orgmem_episode.documents}
    assert all(q.evidence_ids and set(q.evidence_ids) <= doc_ids for q in questions)
    assert not any("missing_evidence" in q.meta for q in questions)  # nothing was dropped
    assert len({e for q in questions for e in q.evidence_ids}) == 158
    first = questions[0]
    assert first.qid == "Q-0001"
    assert first.rubric[0].facet_id == "C1.sub1" and first.rubric[0].max_score == 0.25
    assert first.meta["ground_truth"]["change_date"] == "2023-09-15"
    assert "Change date: 2023-09-15" in first.answer
    assert len(first.meta["paraphrases"]) == 3


def test_orgmem_as_of_only_c4_and_read_from_text(orgmem_episode: Episode) -> None:
    c4 = [q for q in orgmem_episode.questions if q.category == "C4"]
    assert len(c4) == 15
    assert all(q.as_of is not None and q.as_of == q.meta["as_of_field"] for q in c4)
    assert all(q.as_of is None for q in orgmem_episode.questions if q.category != "C4")
    by_id = {q.qid: q.as_of for q in c4}
    assert by_id["Q-0044"] == date(2023, 4, 2)  # "As of April 2, 2023"
    assert by_id["Q-0049"] == date(2023, 3, 31)  # "as of March 31, 2023"


def test_orgmem_persona_author_option(data_dir: Path) -> None:
    (episode,) = load_dataset("orgmem", data_dir=str(data_dir), author="persona", limit=1)
    assert episode.documents[0].author == "Omar Al-Jabri"
    assert len(episode.questions) == 1


def test_orgmem_small_tier_has_no_corpus(data_dir: Path) -> None:
    with pytest.raises(DatasetError, match="tier 'small' has no corpus files"):
        load_dataset("orgmem", data_dir=str(data_dir), tier="small")


def test_orgmem_limit_and_categories(data_dir: Path) -> None:
    (episode,) = load_dataset("orgmem", data_dir=str(data_dir), categories=["C4", "C6"])
    assert Counter(q.category for q in episode.questions) == {"C4": 15, "C6": 6}
    assert len(episode.documents) == 443
    (empty,) = load_dataset("orgmem", data_dir=str(data_dir), limit=0)
    assert empty.questions == () and len(empty.documents) == 443


# LoCoMo ---------------------------------------------------------------


def test_locomo_counts(locomo_episodes: list[Episode]) -> None:
    assert [e.episode_id for e in locomo_episodes][:3] == ["conv-26", "conv-30", "conv-41"]
    assert len(locomo_episodes) == 10
    questions = [q for e in locomo_episodes for q in e.questions]
    assert len(questions) == 1986
    assert sum(len(e.documents) for e in locomo_episodes) == 5882
    assert sum(len({d.thread for d in e.documents}) for e in locomo_episodes) == 272
    assert Counter(q.meta["category_id"] for q in questions) == {1: 282, 2: 321, 3: 96, 4: 841, 5: 446}
    assert Counter(q.category for q in questions)["temporal"] == 321


def test_locomo_known_turn(locomo_episodes: list[Episode]) -> None:
    conv26 = locomo_episodes[0]
    assert len({d.thread for d in conv26.documents}) == 19  # 35 date_time keys, 19 sessions
    turn = {d.doc_id: d for d in conv26.documents}["D1:5"]
    assert turn.text == (
        "[1:56 pm on 8 May, 2023] Caroline: The transgender stories were so inspiring! I was so happy and "
        "thankful for all the support. [shared an image: a photo of a dog walking past a wall with a "
        "painting of a woman]"
    )
    assert turn.date == datetime(2023, 5, 8, 13, 56)
    assert turn.author == "Caroline" and turn.thread == "session_1"
    # A speaker, not an author the source names: shown, not tagged; text shown as stored.
    assert (turn.author_role, turn.evidence) == ("speaker", "as_stored")
    assert {(d.author_role, d.evidence) for e in locomo_episodes for d in e.documents} == {("speaker", "as_stored")}
    assert turn.meta == {"session": 1, "img_url": ["https://i.redd.it/l7hozpetnhlb1.jpg"]}
    last = conv26.documents[-1]
    assert last.doc_id == "D19:15" and last.date == datetime(2023, 10, 22, 9, 55)


def test_locomo_answers_and_evidence(locomo_episodes: list[Episode]) -> None:
    questions = {q.qid: q for e in locomo_episodes for q in e.questions}
    assert questions["conv-26/1"].answer == "2022"  # int in the file
    assert questions["conv-26/37"].evidence_ids == ("D8:6", "D9:17")  # "D8:6; D9:17"
    assert questions["conv-49/31"].evidence_ids == ("D9:1", "D4:4", "D4:6")
    adversarial = [q for q in questions.values() if q.category == "adversarial"]
    assert all("adversarial_answer" in q.meta for q in adversarial)
    assert sum(q.answer == "" for q in adversarial) == 444  # 2 adversarial items carry an answer
    missing = {(q.meta["sample_id"], e) for q in questions.values() for e in q.meta.get("missing_evidence", [])}
    assert missing == {("conv-42", "D10:19"), ("conv-47", "D4:36"), ("conv-50", "D30:05")}
    for episode in locomo_episodes:
        doc_ids = {d.doc_id for d in episode.documents}
        assert all(set(q.evidence_ids) <= doc_ids for q in episode.questions)


def test_locomo_limit_and_categories(data_dir: Path) -> None:
    episodes = load_dataset("locomo", data_dir=str(data_dir), categories=["temporal", "5"], limit=400)
    questions = [q for e in episodes for q in e.questions]
    assert len(questions) == 400
    assert {q.category for q in questions} == {"temporal", "adversarial"}
    assert all(e.questions for e in episodes) and len(episodes) < 10
    with pytest.raises(DatasetError, match=r"unknown categories \['C1'\].*multi-hop"):
        load_dataset("locomo", data_dir=str(data_dir), categories=["C1"])


# LongMemEval_S ------------------------------------------------------------


def test_longmemeval_counts(lme_episodes: list[Episode]) -> None:
    assert len(lme_episodes) == 499
    questions = [e.questions[0] for e in lme_episodes]
    assert all(len(e.questions) == 1 and e.episode_id == e.questions[0].qid for e in lme_episodes)
    assert Counter(q.category for q in questions) == {
        "single-session-user": 70, "single-session-assistant": 56, "single-session-preference": 30,
        "multi-session": 133, "knowledge-update": 78, "temporal-reasoning": 132,
    }
    assert sum(q.meta["abstention"] for q in questions) == 30
    assert "gpt4_7a0daae1" not in {q.qid for q in questions}
    assert sum(len(e.documents) for e in lme_episodes) == 246_189
    assert len({d.thread for e in lme_episodes for d in e.documents}) == 19_167


def test_longmemeval_evidence(lme_episodes: list[Episode]) -> None:
    for episode in lme_episodes:
        question = episode.questions[0]
        docs = {d.doc_id: d for d in episode.documents}
        assert len(docs) == len(episode.documents)  # unique even where a session id recurs
        assert all(docs[e].thread in question.meta["evidence_sessions"] for e in question.evidence_ids)
        if not question.meta["abstention"]:
            assert question.meta["evidence_sessions"] and question.evidence_ids


def test_longmemeval_known_entry(lme_episodes: list[Episode]) -> None:
    episode = {e.episode_id: e for e in lme_episodes}["e47becba"]
    question = episode.questions[0]
    assert question.meta["question_date"] == datetime(2023, 5, 30, 23, 40)
    assert question.as_of == date(2023, 5, 30)
    threads = list(dict.fromkeys(d.thread for d in episode.documents))
    assert threads[:2] == ["sharegpt_yywfIrx_0", "85a1be56_1"]
    first = episode.documents[0]
    assert first.doc_id == "sharegpt_yywfIrx_0#0" and first.author == "user"
    assert first.date == datetime(2023, 5, 20, 2, 21)
    # paper §3.1: date and speaker lead a conversational row's text, as in LoCoMo's "[date] speaker: ..."
    assert first.text.startswith("[2023/05/20 (Sat) 02:21] user: The farmer needs to transport a fox, a chicken")
    assert first.meta == {"role": "user"}  # a filler session: no has_answer
    # paper §3.2/§3.4: a role is a speaker, not an author tag; the row is shown as stored
    assert {(d.author_role, d.evidence) for d in episode.documents} == {("speaker", "as_stored")}
    assert question.evidence_ids and all(e.startswith("answer_280352e9#") for e in question.evidence_ids)
    repeated = {e.episode_id: e for e in lme_episodes}["001be529"]
    ids = [d.doc_id for d in repeated.documents if d.thread == "sharegpt_SYbLHTK_0"]
    assert ids[0] == "sharegpt_SYbLHTK_0#0" and ids[-1].startswith("sharegpt_SYbLHTK_0@2#")


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
            {"question": "Did Bob say bye?", "adversarial_answer": "yes", "evidence": ["D1:2", "D9:9"],
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
    assert adversarial.evidence_ids == ("D1:2",) and adversarial.meta["missing_evidence"] == ["D9:9"]
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


def test_missing_data_dir_lists_every_place(tmp_path: Path) -> None:
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



# ---- as-of scope against the gold evidence (what Mem++'s date filter can and cannot see) ----

def _gold_after_as_of(episodes: list[Episode]) -> tuple[int, int]:
    from memplusplus.scope import end_of_day

    total = after = 0
    for episode in episodes:
        dates = {doc.doc_id: doc.date for doc in episode.documents}
        for question in episode.questions:
            if question.as_of is None:
                continue
            for gold in question.evidence_ids:
                total += 1
                after += dates[gold] > end_of_day(question.as_of)
    return total, after


def test_longmemeval_gold_turns_all_fall_inside_the_question_day_scope(lme_episodes):
    # theta is the end of the question's day, so the 76 same-day time inversions lose no evidence.
    assert _gold_after_as_of(lme_episodes) == (894, 0)


def test_orgmem_audit_replay_cites_two_artefacts_dated_after_its_as_of(orgmem_episode):
    # C4 asks what changed after the as-of date; 2 of its 45 gold ids lie beyond the scope.
    assert _gold_after_as_of([orgmem_episode]) == (45, 2)


@pytest.mark.parametrize("gz", [False, True])
def test_longmemeval_reads_only_as_far_as_the_selection_needs(tmp_path: Path, gz: bool) -> None:
    # two good entries, then a cut-off third: a limit met by the first two never reaches the cut
    entries = [lme_entry("a"), lme_entry("b", "temporal-reasoning"), lme_entry("c", "temporal-reasoning")]
    text = json.dumps(entries)
    cut = text[: text.index('"question_id": "c"') + 10]
    path = tmp_path / "longmemeval" / "longmemeval_s_cleaned.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(gzip.compress(cut.encode()) if gz else cut.encode())
    assert [e.episode_id for e in load_dataset("longmemeval_s", data_dir=str(tmp_path), limit=2)] == ["a", "b"]
    # the category filter applies while streaming: the first temporal-reasoning question is 'b'
    episodes = load_dataset("longmemeval_s", data_dir=str(tmp_path), limit=1, categories=["temporal-reasoning"])
    assert [e.episode_id for e in episodes] == ["b"]
    message = error_of(lambda: load_dataset("longmemeval_s", data_dir=str(tmp_path)))
    assert str(path) in message and "invalid or truncated JSON" in message


def test_longmemeval_top_level_must_be_a_list_and_ids_unique(tmp_path: Path) -> None:
    path = tmp_path / "longmemeval" / "longmemeval_s_cleaned.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"question_id": "a"}))
    message = error_of(lambda: load_dataset("longmemeval_s", data_dir=str(tmp_path)))
    assert str(path) in message and "expected a JSON list of questions, got dict" in message
    write_lme(tmp_path, [lme_entry("a"), lme_entry("a")])
    message = error_of(lambda: load_dataset("longmemeval_s", data_dir=str(tmp_path)))
    assert "duplicate question_id" in message and "record a" in message
