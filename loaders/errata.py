"""Corrected golds for LoCoMo: the locomo-audit project's errata, pinned by sha256.

``errors.json`` (github.com/dial481/locomo-audit @ 9493fb4b, CC BY-NC 4.0) lists 156 of the 1,540
graded questions: 99 whose gold answer is wrong (hallucinated, wrong date, wrong speaker,
ambiguous, incomplete) and 57 whose answer is right but whose evidence ids are not
(``WRONG_CITATION``). Each entry carries the corrected answer and evidence ids. A system can at
best be right on the sound golds: the ceiling is 1,441 / 1,540 = 93.57 % overall.

The file is looked for under the data directory as ``published/audit/errors.json`` (or given
directly), and refused in one line when its bytes are not the pinned ones.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loaders.jsonio import read_bytes
from memory_protocol import DatasetError

CITATION_ONLY = "WRONG_CITATION"
_CONVERSATION = re.compile(r"(\d+)_qa\d+$")


@dataclass(frozen=True)
class ErrataSource:
    name: str
    repository: str
    commit: str
    remote: str
    local: str  # under the data directory
    sha256: str


ERRATA: dict[str, ErrataSource] = {
    "locomo-audit": ErrataSource(
        "locomo-audit", "dial481/locomo-audit", "9493fb4b", "errors.json", "published/audit/errors.json",
        "f298ef46263fada20688a1d672be37d4f488c6da3b19343eea55ae5c1b5fe55e",
    ),
}


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
    def wrong_gold(self) -> bool:
        """The gold answer itself is wrong (not just its evidence ids)."""
        return self.error_type != CITATION_ONLY


def errata_path(name: str, data_dir: Path | None, file: Path | None = None) -> Path:
    """Where the named errata file is (``file`` if given); one-line DatasetError when absent."""
    source = _source(name)
    path = file or (data_dir / source.local if data_dir is not None else None)
    if path is None or not path.is_file():
        where = path if path is not None else f"<data dir>/{source.local}"
        raise DatasetError(str(where), f"errata {name!r} not found: put {source.remote} of "
                                       f"github.com/{source.repository}@{source.commit} there")
    return path


def _source(name: str) -> ErrataSource:
    if name not in ERRATA:
        raise DatasetError("dataset.errata", f"unknown errata {name!r}; known: {sorted(ERRATA)}")
    return ERRATA[name]


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
    import json

    source = _source(name)
    path = errata_path(name, data_dir, file)
    data = read_bytes(path)
    digest = hashlib.sha256(data).hexdigest()
    if digest != source.sha256:
        raise DatasetError(str(path), f"sha256 {digest[:12]}... is not the pinned {source.sha256[:12]}... of "
                                      f"{source.repository}@{source.commit}:{source.remote}")
    items = json.loads(data)
    if not isinstance(items, list):
        raise DatasetError(str(path), "expected a JSON list of errata")
    return [_entry(item, i, path) for i, item in enumerate(items)]
