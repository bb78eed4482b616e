"""OrgMemBench (helix corpus): one episode, 443 artefacts and 73 rubric-graded questions (medium tier)."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Mapping
from dataclasses import replace
from datetime import date, datetime
from pathlib import Path
from typing import Any

from loaders.reading import (
    DAY_RE, MAX_TOKEN_BYTES, MONTH_RE, MONTHS, get_field, quote, read_jsonl, read_text, require_file,
)
from memory_protocol import DatasetError, Document, Episode, Question, RubricFacet

log = logging.getLogger(__name__)

CATEGORIES: tuple[str, ...] = ("C1", "C2", "C3", "C4", "C5", "C6")
AS_OF_CATEGORY = "C4"
AUTHOR_MODES: tuple[str | None, ...] = (None, "persona")
SUBDIR = Path("orgmembench") / "datasets" / "helix"
QUESTIONS_FILE = "benchmark_v0.0.jsonl"
HEADER_RE = re.compile(r"\A\s*<!--\s*artefact_metadata\b(?P<body>.*?)-->", re.DOTALL)
Events = dict[str, tuple[date, str | None]]  # (occurred_at, recorded_at) by event id
HEADER_FIELDS: tuple[str, ...] = ("slot_id", "event_id", "genre", "role", "author", "testimony_type")
# the dates a question's text may hold: ISO, 'April 2, 2023', '2 April 2023', 'Apr 2, 2023'
TEXT_DATE_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"(?<![\d-])(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})(?![\d-])"),
    re.compile(rf"\b{MONTH_RE}\s+{DAY_RE},?\s+(?P<year>\d{{4}})\b", re.IGNORECASE),
    re.compile(rf"\b{DAY_RE}\s+{MONTH_RE},?\s+(?P<year>\d{{4}})\b", re.IGNORECASE),
)


def parse_iso_date(value: str) -> date:
    if not isinstance(value, str) or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value.strip()):
        raise ValueError(f"expected a YYYY-MM-DD date, got {quote(value)}")
    return date.fromisoformat(value.strip())


def find_date_in_text(text: str) -> date | None:
    """The first date written in ``text`` (TEXT_DATE_PATTERNS), or None; ValueError when it is impossible
    ('2023-02-30')."""
    matches = [m for pattern in TEXT_DATE_PATTERNS for m in pattern.finditer(text)]
    if not matches:
        return None
    first = min(matches, key=lambda m: m.start())
    month = first["month"]
    try:
        return date(int(first["year"]), int(month) if month.isdigit() else MONTHS[month.lower().rstrip(".")],
                    int(first["day"]))
    except ValueError as exc:
        raise ValueError(f"impossible date {quote(first.group(0))}: {exc}") from None


def tier_dir(data_dir: Path, tier: str) -> Path:
    """The folder of one tier, checked to exist and to carry its corpus files."""
    base = data_dir / SUBDIR
    root = base / tier
    if not root.is_dir():
        available = sorted(p.name for p in base.iterdir() if p.is_dir()) if base.is_dir() else []
        raise DatasetError(str(root), f"unknown OrgMemBench tier {tier!r}; available tiers: {available or 'none'}")
    if not (root / "corpus").is_dir():
        raise DatasetError(str(root / "corpus"), f"OrgMemBench tier {tier!r} has no corpus files (only its questions "
                                                 "and index are present), so it cannot be run; use tier 'medium'")
    return root


def load_events(path: Path) -> Events:
    events: Events = {}
    for lineno, record in read_jsonl(path, "OrgMemBench events"):
        rec = f"line {lineno}"
        event_id = get_field(record, "id", path, rec, str)
        occurred = get_field(record, "occurred_at", path, f"{rec} ({event_id})", str)
        try:
            occurred_at = parse_iso_date(occurred)
        except ValueError as exc:
            raise DatasetError(str(path), f"unparsable date: {exc}", f"{rec} ({event_id})", "occurred_at") from None
        recorded_at = get_field(record, "recorded_at", path, rec, (str, type(None)), default=None)
        events[event_id] = occurred_at, recorded_at
    return events


def load_persona_names(path: Path) -> dict[str, str]:
    names: dict[str, str] = {}
    for lineno, record in read_jsonl(path, "OrgMemBench personas"):
        persona_id = get_field(record, "persona_id", path, f"line {lineno}", str)
        names[persona_id] = get_field(record, "display_name", path, f"line {lineno} ({persona_id})", str)
    return names


def split_artefact(text: str, path: Path) -> tuple[dict[str, str], str]:
    """The ``<!-- artefact_metadata ... -->`` header's fields and the body (stripped)."""
    match = HEADER_RE.match(text)
    if match is None:
        raise DatasetError(str(path), "missing '<!-- artefact_metadata ... -->' header", field_name="header")
    header: dict[str, str] = {}
    for line in match["body"].splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip():
            header[key.strip()] = value.strip()
    for name in HEADER_FIELDS:
        if name not in header:
            raise DatasetError(str(path), "missing field in artefact header", field_name=name)
    return header, text[match.end():].strip()


def build_document(row: Mapping[str, str], root: Path, events: Events, author_mode: str | None,
                   personas: Mapping[str, str]) -> Document:
    """One artefact -> Document dated at midnight of its event's occurred_at. No author is passed unless
    ``author_mode`` asks (as the benchmark's runner does; the evidence header then shows a placeholder)."""
    path = root / row["path"]
    text = read_text(require_file(path, f"artefact {row['slot_id']}"))
    if len(text) > MAX_TOKEN_BYTES:
        raise DatasetError(str(path), f"artefact longer than {MAX_TOKEN_BYTES:,} characters, the cap for one "
                                      f"document (the longest real one is 11,632 bytes); refused", row["slot_id"])
    header, body = split_artefact(text, path)
    for name in ("slot_id", "event_id"):  # the header must agree with its corpus_index row
        if header[name] != row[name]:
            raise DatasetError(str(path), f"header says {header[name]!r} but corpus_index.jsonl says {row[name]!r}",
                               header["slot_id"], name)
    event_id = row["event_id"]
    if event_id not in events:
        raise DatasetError(str(path), f"event {event_id!r} is not in source_of_truth/events.jsonl",
                           row["slot_id"], "event_id")
    occurred_at, recorded_at = events[event_id]
    return Document(doc_id=row["slot_id"], text=body,
                    author=None if author_mode is None else personas.get(header["author"], header["author"]),
                    date=datetime.combine(occurred_at, datetime.min.time()), thread=event_id,
                    meta={"persona_id": header["author"], "genre": header["genre"], "role": header["role"],
                          "testimony_type": header["testimony_type"], "event_id": event_id,
                          "recorded_at": recorded_at})


def read_index(path: Path) -> list[dict[str, str]]:
    """corpus_index.jsonl rows {slot_id, path, event_id}, slot ids unique."""
    rows: list[dict[str, str]] = []
    seen: set[str] = set()
    for lineno, record in read_jsonl(path, "OrgMemBench corpus index"):
        row = {name: get_field(record, name, path, f"line {lineno}", str) for name in ("slot_id", "path", "event_id")}
        if row["slot_id"] in seen:
            raise DatasetError(str(path), f"duplicate slot_id {row['slot_id']!r}", f"line {lineno}", "slot_id")
        seen.add(row["slot_id"])
        rows.append(row)
    return rows


def load_documents(root: Path, author_mode: str | None) -> list[Document]:
    """Every artefact listed in corpus_index.jsonl, in index order."""
    events = load_events(root / "source_of_truth" / "events.jsonl")
    personas = load_persona_names(root / "helix_canon" / "personas.jsonl") if author_mode else {}
    index = root / "corpus_index.jsonl"
    docs = [build_document(row, root, events, author_mode, personas) for row in read_index(index)]
    if not docs:
        raise DatasetError(str(index), "the corpus index lists no artefacts, so there is nothing to retrieve from")
    if author_mode:
        unknown = sorted({d.meta["persona_id"] for d in docs} - personas.keys())
        if unknown:
            log.warning("OrgMemBench: persona ids not in personas.jsonl, kept as author: %s", unknown)
    return docs


def _render(value: Any) -> str:
    if isinstance(value, Mapping):
        return ", ".join(f"{k}: {_render(v)}" for k, v in value.items())
    if isinstance(value, list):
        return "".join(f"\n  - {_render(item)}" for item in value) if value else "none"
    return str(value).strip()


def render_answer(ground_truth: Mapping[str, Any]) -> str:
    """'Label: value' lines of a ground-truth dict (lists become bullet lines)."""
    lines = []
    for key, value in ground_truth.items():
        rendered = _render(value)
        lines.append(f"{key.replace('_', ' ').strip().capitalize()}:{'' if rendered.startswith(chr(10)) else ' '}{rendered}")
    return "\n".join(lines)


def _dates(text: str, ground_truth: Mapping[str, Any], path: Path, rec: str) -> tuple[date, date | None]:
    """A C4 question's as-of date written in its text, and ground_truth_answer.as_of_date (or None)."""
    value = ground_truth.get("as_of_date")
    try:
        field = None if value is None else parse_iso_date(value)
    except ValueError as exc:
        raise DatasetError(str(path), f"unparsable date: {exc}", rec, "ground_truth_answer.as_of_date") from None
    try:
        found = find_date_in_text(text)
    except ValueError as exc:
        raise DatasetError(str(path), f"unparsable date in question text: {exc}", rec, "text") from None
    if found is None:
        raise DatasetError(str(path), f"{AS_OF_CATEGORY} question text contains no as-of date", rec, "text")
    return found, field


def build_question(record: Mapping[str, Any], lineno: int, path: Path) -> Question:
    qid = get_field(record, "id", path, f"line {lineno}", str)
    rec = f"line {lineno} ({qid})"
    category = get_field(record, "category", path, rec, str)
    if category not in CATEGORIES:
        raise DatasetError(str(path), f"unknown category {category!r}; expected one of {list(CATEGORIES)}", rec, "category")
    text = get_field(record, "text", path, rec, str)
    if not text.strip():
        raise DatasetError(str(path), "empty question", rec, "text")
    ground_truth = get_field(record, "ground_truth_answer", path, rec, dict)
    meta: dict[str, Any] = {"ground_truth": ground_truth,
                            "paraphrases": list(get_field(record, "paraphrases", path, rec, list[str], default=[])),
                            "source_metadata": record.get("metadata", {})}
    as_of = None
    if category == AS_OF_CATEGORY:
        as_of, meta["as_of_field"] = _dates(text, ground_truth, path, rec)
    rubric = tuple(RubricFacet(
        facet_id=get_field(item, "id", path, f"{rec} rubric_subpoints[{i}]", str),
        max_score=float(get_field(item, "max_score", path, f"{rec} rubric_subpoints[{i}]", (int, float))),
        criterion=get_field(item, "criterion", path, f"{rec} rubric_subpoints[{i}]", str),
        fail_criterion=get_field(item, "fail_criterion", path, f"{rec} rubric_subpoints[{i}]", str, default=""),
    ) for i, item in enumerate(get_field(record, "rubric_subpoints", path, rec, list)))
    return Question(qid=qid, text=text, category=category, answer=render_answer(ground_truth), as_of=as_of,
                    rubric=rubric, evidence_ids=tuple(get_field(record, "evidence_artefact_ids", path, rec, list[str])),
                    meta=meta)


def load_questions(path: Path, doc_ids: set[str]) -> list[Question]:
    """All questions, file order, ids unique; evidence missing from the corpus goes to meta['missing_evidence']."""
    questions = [build_question(record, lineno, path) for lineno, record in read_jsonl(path, "questions")]
    ids = [q.qid for q in questions]
    duplicate = next((qid for i, qid in enumerate(ids) if qid in ids[:i]), None)
    if duplicate is not None:
        raise DatasetError(str(path), "duplicate question id", duplicate, "id")
    out = []
    for q in questions:
        missing = [e for e in q.evidence_ids if e not in doc_ids]
        if missing:
            log.warning("OrgMemBench %s: evidence ids not in the corpus: %s", q.qid, missing)
            q = replace(q, evidence_ids=tuple(e for e in q.evidence_ids if e in doc_ids),
                        meta={**q.meta, "missing_evidence": missing})
        out.append(q)
    return out


def load_orgmem(data_dir: Path, tier: str = "medium", author: str | None = None) -> Iterator[Episode]:
    """The single episode ``orgmem-<tier>``; ``author="persona"`` passes each artefact's persona display name
    (helix_canon/personas.jsonl) as its author, None none (as the benchmark's runner does)."""
    if author not in AUTHOR_MODES:
        raise DatasetError("orgmem", f"unknown author option {author!r}; expected one of {list(AUTHOR_MODES)}",
                           field_name="author")
    root = tier_dir(data_dir, tier)
    documents = load_documents(root, author)
    questions = load_questions(root / QUESTIONS_FILE, {d.doc_id for d in documents})
    log.info("OrgMemBench %s: %d documents, %d questions", tier, len(documents), len(questions))
    yield Episode(episode_id=f"orgmem-{tier}", documents=tuple(documents), questions=tuple(questions))
