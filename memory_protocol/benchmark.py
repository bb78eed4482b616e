"""Benchmark-side data: questions and the episodes that pair them with a corpus."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any

from memory_protocol.documents import Document


@dataclass(frozen=True)
class RubricFacet:
    """One graded sub-point of an OrgMemBench answer; ``max_score`` is its weight."""

    facet_id: str
    max_score: float
    criterion: str
    fail_criterion: str = ""


@dataclass(frozen=True)
class Question:
    """``as_of``: the memory sees rows dated up to the end of that day (None: all). ``evidence_ids``:
    the gold documents; ``meta``: dataset extras (LongMemEval's ``evidence_sessions``, abstention)."""

    qid: str
    text: str
    category: str
    answer: str
    as_of: date | None = None
    rubric: tuple[RubricFacet, ...] | None = None
    evidence_ids: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class Episode:
    """A corpus and the questions asked of it."""

    episode_id: str
    documents: tuple[Document, ...]
    questions: tuple[Question, ...]
