"""Published per-question LoCoMo results in one shape, whichever project wrote them
(``../shared/data/published/SOURCE.md``):

- locomo-audit's ``eval_results.json``: ``detailed_results`` {conversation: [{question, golden_answer,
  generated_answer, llm_judgments {judgment_1..n: bool}, category}]} and ``metadata``;
- mem0's ``evals.py`` results: {conversation: [{question, answer, response, category, llm_score 0/1,
  f1_score, bleu_score}]};
- Zep's grades: {conversation: [{question, golden_answer, answer, grade bool, category}]}.

A conversation key ends with its index in ``locomo10.json``; categories are LoCoMo's official numbers.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loaders.reading import read_text
from memory_protocol import DatasetError

FORMATS = ("locomo-audit", "mem0", "zep")
_TRAILING_INDEX = re.compile(r"(\d+)$")


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
