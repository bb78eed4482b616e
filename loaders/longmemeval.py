"""LongMemEval_S (cleaned): one episode per question, its own haystack of ~48 sessions as turn documents."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from loaders.reading import JsonListStream, find_data_file, get_field, quote
from memory_protocol import DatasetError, Document, Episode, Question

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
CATEGORIES: tuple[str, ...] = ("single-session-user", "single-session-assistant", "single-session-preference",
                               "multi-session", "knowledge-update", "temporal-reasoning")
ABSTENTION_MARK = "_abs"
ANSWER_SESSION_MARK = "answer"  # the official code takes a session whose id contains it as an answer session
HAYSTACK_FIELDS: tuple[str, ...] = ("haystack_session_ids", "haystack_dates", "haystack_sessions")
DATE_RE = re.compile(r"^\s*(?P<year>\d{4})/(?P<month>\d{1,2})/(?P<day>\d{1,2})\s*(?:\([A-Za-z]+\))?\s*"
                     r"(?P<hour>\d{1,2}):(?P<minute>\d{2})\s*$")


def parse_longmemeval_datetime(value: str) -> datetime:
    """'2023/05/30 (Tue) 23:40' -> datetime(2023, 5, 30, 23, 40) (the weekday is not checked); ValueError else."""
    match = DATE_RE.match(value) if isinstance(value, str) else None
    if match is None:
        raise ValueError(f"expected a date like '2023/05/30 (Tue) 23:40', got {quote(value)}")
    return datetime(*(int(match[k]) for k in ("year", "month", "day", "hour", "minute")))


def parse_date_field(value: Any, path: Path, rec: str, field_name: str) -> datetime:
    try:
        return parse_longmemeval_datetime(value)
    except ValueError as exc:
        raise DatasetError(str(path), f"unparsable date: {exc}", rec, field_name) from None


_ABSENT = object()


def has_answer_flag(turn: Mapping[str, Any], session_id: str, role: str, path: Path, rec: str) -> bool | None:
    """A turn's ``has_answer`` as the official turn indexing reads it (None: it has none).

    LongMemEval's ``src/retrieval/run_retrieval.py`` (``process_item_flat_index``, lines 219-221 at
    6a92d1ab) requires it on every user turn of an answer session and asserts it is in ``[True, False]``
    (1 and 0 pass, "true" does not); a value it would reject is refused here rather than read as "not gold".
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
    """One haystack turn -> Document '<session>#<turn>', text ``[<date>] <role>: <content>`` as LoCoMo's
    (paper §3.1); meta keeps the role and ``has_answer``, which LongMemEval's retrieval metrics need."""
    rec = f"{rec} session {key} turn {index}"
    role = get_field(turn, "role", path, rec, str)
    meta: dict[str, Any] = {"role": role}
    has_answer = has_answer_flag(turn, session_id, role, path, rec)
    if has_answer is not None:
        meta["has_answer"] = has_answer
    return Document(doc_id=f"{key}#{index}", text=f"[{stamp}] {role}: {get_field(turn, 'content', path, rec, str)}",
                    author=role, date=when, thread=session_id, meta=meta,
                    author_role="speaker",  # a role, not an author: kept out of the tag leg unless tags=speaker
                    evidence="as_stored")  # its text already leads with date and role (paper §3.4)


def haystack_documents(entry: Mapping[str, Any], path: Path, rec: str) -> list[Document]:
    """Every turn of every haystack session, in haystack order; a session id that recurs (13 questions)
    is keyed '<id>@2', '@3'..."""
    ids, stamps, sessions = (get_field(entry, name, path, rec, list) for name in HAYSTACK_FIELDS)
    if not len(ids) == len(stamps) == len(sessions):
        raise DatasetError(str(path), f"haystack lists differ in length (ids {len(ids)}, dates {len(stamps)}, "
                                      f"sessions {len(sessions)})", rec, "haystack_sessions")
    seen: dict[str, int] = {}
    docs: list[Document] = []
    for i, (session_id, turns) in enumerate(zip(ids, sessions)):
        if not isinstance(session_id, str) or not isinstance(turns, list):
            raise DatasetError(str(path), "expected a session id string and a list of turns", rec, f"haystack[{i}]")
        seen[session_id] = seen.get(session_id, 0) + 1
        key = session_id if seen[session_id] == 1 else f"{session_id}@{seen[session_id]}"
        when = parse_date_field(stamps[i], path, rec, f"haystack_dates[{i}]")
        docs.extend(turn_document(turn, key, session_id, j, str(stamps[i]), when, path, rec)
                    for j, turn in enumerate(turns))
    if not docs:
        raise DatasetError(str(path), "the haystack holds no turns, so there is nothing to retrieve from",
                           rec, "haystack_sessions")
    return docs


def build_episode(entry: Mapping[str, Any], qid: str, path: Path) -> Episode:
    """The entry's haystack and its one question; evidence = turns whose has_answer is true (or 1)."""
    documents = haystack_documents(entry, path, qid)
    category = get_field(entry, "question_type", path, qid, str)
    if category not in CATEGORIES:
        raise DatasetError(str(path), f"unknown question_type {category!r}; expected one of {list(CATEGORIES)}",
                           qid, "question_type")
    asked_at = parse_date_field(get_field(entry, "question_date", path, qid), path, qid, "question_date")
    text = get_field(entry, "question", path, qid, str)
    if not text.strip():
        raise DatasetError(str(path), "empty question", qid, "question")
    answer = str(get_field(entry, "answer", path, qid, (str, int, float)))
    sessions = get_field(entry, "answer_session_ids", path, qid, list[str])
    unknown = [s for s in sessions if s not in set(get_field(entry, "haystack_session_ids", path, qid, list))]
    if unknown:
        raise DatasetError(str(path), f"answer session ids not in haystack_session_ids: {quote(unknown)}",
                           qid, "answer_session_ids")
    question = Question(qid=qid, text=text, category=category, answer=answer, as_of=asked_at.date(),
                        evidence_ids=tuple(d.doc_id for d in documents if d.meta.get("has_answer") is True),
                        meta={"question_date": asked_at, "abstention": ABSTENTION_MARK in qid,
                              "evidence_sessions": tuple(sessions)})
    return Episode(episode_id=qid, documents=tuple(documents), questions=(question,))


def claim_id(qid: str, seen: set[str], path: Path) -> str:
    if qid in seen:
        raise DatasetError(str(path), "duplicate question_id", qid, "question_id")
    seen.add(qid)
    return qid


def load_longmemeval_s(data_dir: Path, file: str | None = None) -> Iterator[Episode]:
    """One episode per question, lazily; ``file`` overrides the default names (gzip known by its magic bytes).
    Question ids are unique over the whole file whatever the limit: closed early (``load_dataset`` does
    after a limit), the entries not built are still read for their ids."""
    path = find_data_file(data_dir, SUBDIR, FILE_NAMES, file, "LongMemEval_S questions")
    log.info("LongMemEval_S: reading %s (%s)", path.name, RELEASES.get(path.name, "a file of your own"))
    stream = JsonListStream(path)
    seen: set[str] = set()
    try:
        for index, entry in enumerate(stream):
            qid = claim_id(get_field(entry, "question_id", path, f"entry [{index}]", str), seen, path)
            try:
                yield build_episode(entry, qid, path)
            except GeneratorExit:
                for later, other in enumerate(stream.elements("question_id"), start=index + 1):
                    entry = {"question_id": other} if other is not None else {}
                    claim_id(get_field(entry, "question_id", path, f"entry [{later}]", str), seen, path)
                raise
        log.info("LongMemEval_S: %s holds %d questions (%s)", path.name, len(seen), path)
    finally:
        stream.close()
