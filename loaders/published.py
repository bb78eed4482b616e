"""Published per-question LoCoMo results in one shape, whichever project wrote them
(``../shared/data/published/SOURCE.md``), and our questions found for them (:func:`match_keys`):

- locomo-audit's ``eval_results.json``: ``detailed_results`` {conversation: [{question, golden_answer,
  generated_answer, llm_judgments {judgment_1..n: bool}, category}]} and ``metadata``;
- mem0's ``evals.py`` results: {conversation: [{question, answer, response, category, llm_score 0/1,
  f1_score, bleu_score}]};
- Zep's grades: {conversation: [{question, golden_answer, answer, grade bool, category}]}.

A conversation key ends with its index in ``locomo10.json``; categories are LoCoMo's official numbers.
Also the errata (:func:`load_errata`, pinned by sha256): locomo-audit's ``errors.json`` corrects 156 of the
1,540 graded questions, 99 wrong golds and 57 wrong evidence ids only (``WRONG_CITATION``); ceiling 93.57 %.

Such records (and the errata) name questions their own way (``locomo_0_qa1``, a list position); what they
share with ours is the conversation, the question's text and its gold answer, compared after collapsing
whitespace. Where one text and gold occur twice in a conversation, the records take our questions in file
order; anything left unmatched is refused in one line, so a file made on another version of
``locomo10.json`` never scores silently.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loaders.locomo import ADVERSARIAL
from loaders.fetch import ERRATA_FOR, errata_source
from loaders.reading import read_bytes, read_text
from memory_protocol import ConfigError, DatasetError, Episode, Question

FORMATS = ("locomo-audit", "mem0", "zep")
_TRAILING_INDEX = re.compile(r"(\d+)$")
Key = tuple[int, str, str]
CITATION_ONLY = "WRONG_CITATION"
_CONVERSATION = re.compile(r"(\d+)_qa\d+$")


@dataclass(frozen=True)
class PublishedItem:
    conversation: int
    question: str
    gold: str
    category: int
    answer: str
    grades: tuple[bool | None, ...]  # one per judge run
    extra: dict[str, float] = field(default_factory=dict)  # the file's own answer metrics (f1, bleu1)


@dataclass(frozen=True)
class PublishedRun:
    path: Path
    format: str
    items: tuple[PublishedItem, ...]
    metadata: dict[str, Any]

    @property
    def runs(self) -> int:
        return max((len(item.grades) for item in self.items), default=0)


def _grade(value: Any) -> bool | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    raise ValueError(f"grade {value!r} is neither true/false nor 0/1")


def _audit_item(conversation: int, item: dict[str, Any]) -> PublishedItem:
    judgments = item["llm_judgments"]
    runs = sorted(judgments, key=lambda k: int(_TRAILING_INDEX.search(k)[1]) if _TRAILING_INDEX.search(k) else 0)
    return PublishedItem(conversation, str(item["question"]), str(item["golden_answer"]), int(item["category"]),
                         str(item.get("generated_answer", "")), tuple(_grade(judgments[k]) for k in runs))


def _mem0_item(conversation: int, item: dict[str, Any]) -> PublishedItem:
    extra = {name: float(item[key]) for name, key in (("f1_set", "f1_score"), ("bleu1", "bleu_score")) if key in item}
    return PublishedItem(conversation, str(item["question"]), str(item["answer"]), int(item["category"]),
                         str(item.get("response", "")), (_grade(item["llm_score"]),), extra)


def _zep_item(conversation: int, item: dict[str, Any]) -> PublishedItem:
    return PublishedItem(conversation, str(item["question"]), str(item["golden_answer"]), int(item["category"]),
                         str(item.get("answer", "")), (_grade(item["grade"]),))


def detect_format(data: Any) -> str | None:
    if isinstance(data, dict) and "detailed_results" in data:
        return "locomo-audit"
    if isinstance(data, dict) and data and all(isinstance(v, list) for v in data.values()):
        first = next((items[0] for items in data.values() if items), None)
        if isinstance(first, dict):
            return "mem0" if "llm_score" in first else "zep" if "grade" in first else None
    return None


READERS = {"locomo-audit": _audit_item, "mem0": _mem0_item, "zep": _zep_item}


def read_published(path: Path) -> PublishedRun:
    """Every question of a published results file; one-line DatasetError for a file we cannot read."""
    try:
        data = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise DatasetError(str(path), f"not JSON ({exc.msg} at line {exc.lineno})") from None
    kind = detect_format(data)
    if kind is None:
        raise DatasetError(str(path), f"not a published results file of a known format ({', '.join(FORMATS)})")
    groups = data["detailed_results"] if kind == "locomo-audit" else data
    reader = READERS[kind]
    items: list[PublishedItem] = []
    for key, entries in groups.items():
        match = _TRAILING_INDEX.search(str(key))
        if match is None:
            raise DatasetError(str(path), f"conversation key {key!r} does not end with the conversation's index")
        conversation = int(match[1])
        for index, entry in enumerate(entries):
            try:
                items.append(reader(conversation, entry))
            except (KeyError, TypeError, ValueError) as exc:
                raise DatasetError(str(path), f"unreadable entry ({type(exc).__name__}: {exc})",
                                   f"{key}[{index}]") from None
    metadata = data.get("metadata", {}) if kind == "locomo-audit" else {}
    return PublishedRun(path, kind, tuple(items), metadata)


def _normalise(text: object) -> str:
    return " ".join(str(text).split())


def match_keys(keys: Sequence[Key], episodes: Sequence[Episode], what: str) -> list[Question]:
    """Our graded (not adversarial) question for each (conversation index, question, gold), in order; a
    one-line DatasetError naming the first that has none."""
    table: dict[Key, list[Question]] = {}
    for index, episode in enumerate(episodes):
        for question in episode.questions:
            if question.meta.get("category_id") != ADVERSARIAL:
                key = (index, _normalise(question.text), _normalise(question.answer))
                table.setdefault(key, []).append(question)
    out: list[Question] = []
    missing: list[Key] = []
    for conversation, text, gold in keys:
        key = (conversation, _normalise(text), _normalise(gold))
        if table.get(key):
            out.append(table[key].pop(0))
        else:
            missing.append(key)
    if missing:
        conversation, text, gold = missing[0]
        raise DatasetError(what, f"{len(missing)} of {len(keys)} questions match none of our LoCoMo questions by "
                                 f"text and gold, e.g. conversation {conversation}: {text[:60]!r} / gold {gold[:40]!r}")
    return out


def check_errata(name: str | None, loader: str, evidence: bool = False) -> None:
    """``dataset.errata``: a known name for this benchmark, or null (then no ``errata_evidence``)."""
    if name is None:
        if evidence:
            raise ConfigError("dataset.errata_evidence=true needs dataset.errata=<name> (the corrected evidence ids)")
        return
    if ERRATA_FOR.get(str(name)) != loader:
        choices = ", ".join(["null", *(n for n, on in ERRATA_FOR.items() if on == loader)])
        known = ", ".join(f"{n} ({on} only)" for n, on in ERRATA_FOR.items())
        raise ConfigError(f"dataset.errata={name!r}: the {loader} benchmark takes {choices}; known errata: {known}")


@dataclass(frozen=True)
class Erratum:
    """One audited question, keyed (conversation index, question text, gold) as the file states it."""

    conversation: int
    question: str
    gold: str
    category: int
    error_type: str
    correct_answer: str
    correct_evidence: tuple[str, ...]

    @property
    def wrong_gold(self) -> bool:  # not just its evidence ids
        return self.error_type != CITATION_ONLY


def _entry(item: Any, index: int, path: Path) -> Erratum:
    if not isinstance(item, dict):
        raise DatasetError(str(path), "an erratum is not an object", f"[{index}]")
    try:
        match = _CONVERSATION.search(str(item["question_id"]))
        if match is None:
            raise DatasetError(str(path), f"question_id {item['question_id']!r} names no conversation", f"[{index}]")
        return Erratum(int(match[1]), str(item["question"]), str(item["golden_answer"]), int(item["category"]),
                       str(item["error_type"]), str(item["correct_answer"]), tuple(map(str, item["correct_evidence"])))
    except KeyError as exc:
        raise DatasetError(str(path), f"missing field {exc}", f"[{index}]") from None


def load_errata(name: str, data_dir: Path | None = None, file: Path | None = None) -> list[Erratum]:
    """The named errata, after checking the file's sha256 against the pinned one."""
    source, pin = errata_source(name)
    path = file or (data_dir / pin.local if data_dir is not None else None)
    if path is None or not path.is_file():
        raise DatasetError(str(path or f"<data dir>/{pin.local}"), f"errata {name!r} not found: put {pin.remote} "
                                                                   f"of github.com/{source.repo}@{source.commit} there")
    data = read_bytes(path)
    digest = hashlib.sha256(data).hexdigest()
    if digest != pin.sha256:
        raise DatasetError(str(path), f"sha256 {digest[:12]}... is not the pinned {pin.sha256[:12]}... of "
                                      f"{source.repo}@{source.commit}:{pin.remote}")
    items = json.loads(data)
    if not isinstance(items, list):
        raise DatasetError(str(path), "expected a JSON list of errata")
    return [_entry(item, i, path) for i, item in enumerate(items)]
