"""LongMemEval_S (cleaned): one episode per question, its own haystack of ~48 sessions as turn documents."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from loaders.datadir import find_data_file
from loaders.dates import parse_longmemeval_datetime
from loaders.dates import quote
from loaders.jsonio import get_field, get_str_list
from loaders.jsonstream import JsonListStream
from memory_protocol import DatasetError, Episode, Question
from memory_protocol.documents import Document

log = logging.getLogger(__name__)

SUBDIR = "longmemeval"
# The file names looked for, in order, and what each holds: the official release first (what
# scripts/fetch_data.py fetches), then the 499-question rebuild kept beside this project.
RELEASES: dict[str, str] = {
    "longmemeval_s_cleaned.json": "the official cleaned release, 500 questions",
    "longmemeval_s_cleaned.json.gz": "the official cleaned release, 500 questions",
    "longmemeval_s_cleaned_499.json.gz": "the 499-question rebuild of the cleaned release",
    "longmemeval_s_cleaned_499.json": "the 499-question rebuild of the cleaned release",
}
FILE_NAMES: tuple[str, ...] = tuple(RELEASES)
CATEGORIES: tuple[str, ...] = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "multi-session",
    "knowledge-update",
    "temporal-reasoning",
)
ABSTENTION_MARK = "_abs"
ANSWER_SESSION_MARK = "answer"  # the official code takes a session whose id contains it as an answer session
HAYSTACK_FIELDS: tuple[str, ...] = ("haystack_session_ids", "haystack_dates", "haystack_sessions")


def parse_date_field(record: Mapping[str, Any], name: str, path: Path, rec: str, index: int | None = None) -> datetime:
    """A '2023/05/30 (Tue) 23:40' field (or one element of a list field) as a datetime."""
    value = get_field(record, name, path, rec)
    field_name = name
    if index is not None:
        value, field_name = value[index], f"{name}[{index}]"
    try:
        return parse_longmemeval_datetime(value)
    except ValueError as exc:
        raise DatasetError(str(path), f"unparsable date: {exc}", rec, field_name) from None


def haystack(entry: Mapping[str, Any], path: Path, rec: str) -> tuple[list[Any], list[Any], list[Any]]:
    """The parallel haystack lists (session ids, dates, sessions), checked to be of equal length."""
    ids, dates, sessions = (get_field(entry, name, path, rec, list) for name in HAYSTACK_FIELDS)
    if not len(ids) == len(dates) == len(sessions):
        raise DatasetError(
            str(path),
            f"haystack lists differ in length (ids {len(ids)}, dates {len(dates)}, sessions {len(sessions)})",
            rec, "haystack_sessions",
        )
    return ids, dates, sessions


def session_key(session_id: str, occurrence: int) -> str:
    """Session id, suffixed '@2', '@3'... when the same id recurs in one haystack (13 questions do)."""
    return session_id if occurrence == 1 else f"{session_id}@{occurrence}"


_ABSENT = object()


def has_answer_flag(turn: Mapping[str, Any], session_id: str, role: str, path: Path, rec: str) -> bool | None:
    """A turn's ``has_answer`` as the official turn indexing reads it, or None when it has none.

    LongMemEval's ``src/retrieval/run_retrieval.py`` (``process_item_flat_index``, lines 219-221 at
    commit 6a92d1ab; unchanged at b60a5b7d) requires the field on every user turn of an answer
    session, asserts that its value is one of ``[True, False]`` (so 1 and 0 pass, compared by
    equality, and "true" does not), and takes the turn as gold when the value is truthy. A value
    it would reject is refused here in one line instead of being read as "not gold".
    """
    value = turn.get("has_answer", _ABSENT) if isinstance(turn, Mapping) else _ABSENT
    if value is _ABSENT:
        if role == "user" and ANSWER_SESSION_MARK in session_id:
            raise DatasetError(str(path), "missing field: a user turn of an answer session must say whether it "
                                          "holds the answer (the official turn indexing requires it)", rec, "has_answer")
        return None
    if isinstance(value, (bool, int, float)) and value in (True, False):
        return bool(value)
    raise DatasetError(str(path), f"has_answer must be true or false (1 or 0 also pass, as in the official turn "
                                  f"indexing), got {quote(value)}", rec, "has_answer")


def turn_document(
    turn: Any, key: str, session_id: str, index: int, stamp: str, when: datetime, path: Path, rec: str
) -> Document:
    """One haystack turn -> Document(doc_id '<session>#<turn>') whose text leads with date and role.

    The text is ``[<session date as in the file>] <role>: <content>``, the shape LoCoMo turns have
    (paper §3.1: date and speaker also lead a conversational row's text). ``meta`` keeps the role
    and, where the turn has one, ``has_answer`` as a bool: LongMemEval's retrieval metrics need both.
    """
    rec = f"{rec} session {key} turn {index}"
    role = get_field(turn, "role", path, rec, str)
    meta: dict[str, Any] = {"role": role}
    has_answer = has_answer_flag(turn, session_id, role, path, rec)
    if has_answer is not None:
        meta["has_answer"] = has_answer
    return Document(
        doc_id=f"{key}#{index}",
        text=f"[{stamp}] {role}: {get_field(turn, 'content', path, rec, str)}",
        author=role,
        date=when,
        thread=session_id,
        meta=meta,
        author_role="speaker",  # a role, not an author: kept out of the tag leg unless tags=speaker
        evidence="as_stored",  # its text already leads with date and role (paper §3.4)
    )


def haystack_documents(entry: Mapping[str, Any], path: Path, rec: str) -> list[Document]:
    """Every turn of every haystack session, in haystack order."""
    ids, stamps, sessions = haystack(entry, path, rec)
    seen: dict[str, int] = {}
    docs: list[Document] = []
    for i, (session_id, turns) in enumerate(zip(ids, sessions)):
        if not isinstance(session_id, str) or not isinstance(turns, list):
            raise DatasetError(str(path), "expected a session id string and a list of turns", rec, f"haystack[{i}]")
        seen[session_id] = seen.get(session_id, 0) + 1
        key = session_key(session_id, seen[session_id])
        when = parse_date_field(entry, "haystack_dates", path, rec, i)
        stamp = str(stamps[i])
        docs.extend(turn_document(turn, key, session_id, j, stamp, when, path, rec) for j, turn in enumerate(turns))
    if not docs:
        raise DatasetError(str(path), "the haystack holds no turns, so there is nothing to retrieve from",
                           rec, "haystack_sessions")
    return docs


def answer_sessions(entry: Mapping[str, Any], path: Path, qid: str) -> tuple[str, ...]:
    """``answer_session_ids``, each checked to name a session of the haystack."""
    ids = get_str_list(entry, "answer_session_ids", path, qid)
    haystack_ids = set(get_field(entry, "haystack_session_ids", path, qid, list))
    unknown = [s for s in ids if s not in haystack_ids]
    if unknown:
        raise DatasetError(str(path), f"answer session ids not in haystack_session_ids: {quote(unknown)}",
                           qid, "answer_session_ids")
    return tuple(ids)


def question_text(entry: Mapping[str, Any], path: Path, qid: str) -> str:
    """The question, refused when empty or blank."""
    text = get_field(entry, "question", path, qid, str)
    if not text.strip():
        raise DatasetError(str(path), "empty question", qid, "question")
    return text


def build_question(entry: Mapping[str, Any], qid: str, documents: list[Document], path: Path) -> Question:
    """The entry's question; evidence = turns whose has_answer is true (or 1)."""
    category = get_field(entry, "question_type", path, qid, str)
    if category not in CATEGORIES:
        raise DatasetError(str(path), f"unknown question_type {category!r}; expected one of {list(CATEGORIES)}",
                           qid, "question_type")
    asked_at = parse_date_field(entry, "question_date", path, qid)
    return Question(
        qid=qid,
        text=question_text(entry, path, qid),
        category=category,
        answer=str(get_field(entry, "answer", path, qid, (str, int, float))),
        as_of=asked_at.date(),
        evidence_ids=tuple(d.doc_id for d in documents if d.meta.get("has_answer") is True),
        meta={
            "question_date": asked_at,
            "abstention": ABSTENTION_MARK in qid,
            "evidence_sessions": answer_sessions(entry, path, qid),
        },
    )


def build_episode(entry: Mapping[str, Any], index: int, path: Path) -> Episode:
    """One LongMemEval entry -> Episode(question_id)."""
    qid = get_field(entry, "question_id", path, f"entry [{index}]", str)
    documents = haystack_documents(entry, path, qid)
    question = build_question(entry, qid, documents, path)
    return Episode(episode_id=qid, documents=tuple(documents), questions=(question,))


def unique_question_id(entry: Any, index: int, seen: set[str], path: Path) -> str:
    """The entry's question_id, refused when missing or already seen."""
    qid = get_field(entry, "question_id", path, f"entry [{index}]", str)
    if qid in seen:
        raise DatasetError(str(path), "duplicate question_id", qid, "question_id")
    seen.add(qid)
    return qid


def check_remaining_ids(stream: JsonListStream, start: int, seen: set[str], path: Path) -> None:
    """Read the entries not built (the caller stopped at a limit) for their ids only: unique, present."""
    for index, qid in enumerate(stream.remaining_field("question_id"), start=start):
        unique_question_id({"question_id": qid} if qid is not None else {}, index, seen, path)


def load_longmemeval_s(data_dir: Path, file: str | None = None) -> Iterator[Episode]:
    """Yield one episode per question, lazily (stop iterating to skip building the rest).

    ``file`` overrides the default names (``longmemeval_s_cleaned.json`` or
    ``longmemeval_s_cleaned_499.json.gz``; gzip is detected by magic bytes, not by name).

    Question ids are unique over the whole file whatever the limit: when the caller closes this
    iterator early (``loaders.load_dataset`` does after a limit), the entries it did not build are
    still read, without being built, for their ids.
    """
    path = find_data_file(data_dir, SUBDIR, FILE_NAMES, file, "LongMemEval_S questions")
    log.info("LongMemEval_S: reading %s (%s)", path.name, RELEASES.get(path.name, "a file of your own"))
    stream = JsonListStream(path)
    seen: set[str] = set()
    try:
        for index, entry in enumerate(stream):
            unique_question_id(entry, index, seen, path)
            try:
                yield build_episode(entry, index, path)
            except GeneratorExit:
                check_remaining_ids(stream, index + 1, seen, path)
                raise
        log.info("LongMemEval_S: %s holds %d questions (%s)", path.name, len(seen), path)
    finally:
        stream.close()
