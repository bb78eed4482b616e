"""Known upstream quirks of the loaded questions made visible: not errors, but none may pass silently.

Gold evidence dropped as a documented quirk (LoCoMo ids matching no turn, OrgMemBench evidence missing from
the corpus), no gold (abstention aside), a question dated before every document, gold dated after the
question: logged once per kind and recorded in ``metrics.json`` -> ``stats.dataset_notes``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date

from memory_protocol import Episode

log = logging.getLogger(__name__)

# question meta keys under which a loader lists gold references it dropped as a known quirk
DROPPED_EVIDENCE_KEYS: tuple[str, ...] = ("missing_evidence", "unparsed_evidence")
MAX_NAMED = 20  # a warning names at most this many questions; the stats keep them all


@dataclass(frozen=True)
class DatasetNotes:
    """Question ids by kind of note, in load order."""

    dropped_evidence: tuple[str, ...] = ()
    without_gold: tuple[str, ...] = ()
    dated_before_documents: tuple[str, ...] = ()
    gold_dated_after_question: tuple[str, ...] = ()

    def kinds(self) -> dict[str, tuple[str, ...]]:
        return {kind: getattr(self, kind) for kind in EXPLANATIONS}

    def as_dict(self) -> dict[str, dict[str, object]]:
        """``{kind: {"count": n, "questions": [...]}}`` for the kinds that occur."""
        return {kind: {"count": len(ids), "questions": list(ids)} for kind, ids in self.kinds().items() if ids}

    def warnings(self, dataset: str) -> list[str]:
        lines = []
        for kind, ids in self.kinds().items():
            if ids:
                named = ", ".join(ids[:MAX_NAMED]) + (f" and {len(ids) - MAX_NAMED} more" if len(ids) > MAX_NAMED else "")
                lines.append(f"{dataset}: {len(ids)} question(s) {EXPLANATIONS[kind]}: {named}")
        return lines


EXPLANATIONS: dict[str, str] = {
    "dropped_evidence": "cite gold evidence that matches no document (a known upstream quirk; the reference "
                        "is dropped, the question kept)",
    "without_gold": "have no gold evidence, so no retrieval score",
    "dated_before_documents": "are dated before every document of their episode (a system that honours the "
                              "question date sees nothing)",
    "gold_dated_after_question": "cite gold evidence dated after the question (a system that honours the question "
                                 "date cannot retrieve that evidence: all-gold recall is 0, and any-gold recall too "
                                 "when every gold item is later)",
}


def dataset_notes(episodes: Iterable[Episode]) -> DatasetNotes:
    dropped: list[str] = []
    without_gold: list[str] = []
    early: list[str] = []
    late_gold: list[str] = []
    for episode in episodes:
        day_of = {doc.doc_id: doc.date.date() for doc in episode.documents if doc.date is not None}
        earliest: date | None = min(day_of.values(), default=None)
        for question in episode.questions:
            if any(question.meta.get(key) for key in DROPPED_EVIDENCE_KEYS):
                dropped.append(question.qid)
            if not question.evidence_ids and not question.meta.get("abstention"):
                without_gold.append(question.qid)
            if question.as_of is not None and earliest is not None and question.as_of < earliest:
                early.append(question.qid)  # its gold is later too: named once, as the broader case
            elif question.as_of is not None and any(day_of.get(e, question.as_of) > question.as_of
                                                    for e in question.evidence_ids):
                late_gold.append(question.qid)
    return DatasetNotes(tuple(dropped), tuple(without_gold), tuple(early), tuple(late_gold))


def log_notes(dataset: str, notes: DatasetNotes) -> None:
    for line in notes.warnings(dataset):
        log.warning(line)
