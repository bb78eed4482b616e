"""Write-time consolidation (paper Algorithm 2), run after ingest and before any retrieval.

As the authors' pass (AIDAChip-Inc/mem-plus-plus@9196597 memory/consolidation.py): the pool is the
current rows, active and not superseded (``_consolidate_pool``, L378-388), grouped greedily in
ingest order, a row joining the first group whose first row has cosine >= tau (``dedup_groups``,
L179-200). A group of two or more costs at most two calls: a classify call (L257-271) labels it
conflict (every older row superseded by the latest-dated, ties the last ingested; all stay in
scope, L274-296), distinct (or a failed call: nothing changes, L135-147) or restatement; then a
merge call (reply capped at 220 tokens, L419-422) writes the group as one row of at most 220
cl100k tokens (the paper gives the limit, not the tokenizer) with the earliest date and all
authors, and the originals are archived (a failed merge changes nothing, L423-433). Nothing is
deleted; singletons cost no call.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime

import numpy as np

from memplusplus.evidence import NO_AUTHOR, header
from memplusplus.llm import Complete, ask_json, ask_text
from memplusplus.memory import MemPlusPlus, MemPPConfig
from memplusplus.store import Row
from memplusplus.tokens import cut_cl100k
from memory_protocol import Document, Hit

LABELS: tuple[str, ...] = ("conflict", "restatement", "distinct")
MAX_MERGED_TOKENS = 220

CLASSIFY_PROMPT = (
    "You look after an organisation's memory. The records below were grouped because they read "
    "alike. Say how they relate, replying with JSON only.\n"
    '- "conflict": they give different values for the same fact (one replaced another over time).\n'
    '- "restatement": they give the same fact with the same values, only worded differently.\n'
    '- "distinct": they are about different facts, or you cannot tell.\n'
    'Reply as {"label": "conflict" | "restatement" | "distinct"}.'
)
CLASSIFY_SCHEMA = {"type": "object", "properties": {"label": {"type": "string", "enum": list(LABELS)}}, "required": ["label"]}
MERGE_PROMPT = (
    "You look after an organisation's memory. The records below state the same fact in different "
    f"words. Write them as one record of at most {MAX_MERGED_TOKENS} tokens that keeps every name, "
    "number, date, identifier and qualifier exactly as written, leaves nothing out and adds nothing. "
    "Reply with the record's text only."
)


@dataclass
class ConsolidationReport:

    groups: int = 0
    calls: int = 0
    labels: dict[str, int] = field(default_factory=lambda: {label: 0 for label in (*LABELS, "failed")})
    merge_failures: int = 0  # restatements left unchanged: the merge call failed or wrote nothing
    superseded: list[str] = field(default_factory=list)
    archived: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)


def current(row: Row) -> bool:
    return row.active and row.superseded_by is None


def group_rows(memory: MemPlusPlus, tau: float) -> list[list[int]]:
    """Greedy groups (row seqs, ingest order) of current rows by cosine >= tau to each group's first row."""
    seqs = [row.seq for row in memory.store.rows if current(row)]
    if not seqs:
        return []
    vectors = memory.store.vectors[seqs].astype(np.float64)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = vectors / np.where(norms == 0, 1.0, norms)
    leaders: list[int] = []  # index into seqs of each group's first row
    groups: list[list[int]] = []
    for index, seq in enumerate(seqs):
        if leaders:
            sims = vectors[leaders] @ vectors[index]
            joined = np.flatnonzero(sims >= tau)
            if joined.size:
                groups[int(joined[0])].append(seq)
                continue
        leaders.append(index)
        groups.append([seq])
    return groups


def classify_prompt(rows: list[Row]) -> str:
    lines = []
    for number, row in enumerate(rows, start=1):
        when = row.date.isoformat() if row.date else "undated"
        lines.append(f"Record {number} [{when}] by {row.author or 'unknown'}:\n{row.text}")
    return "\n\n".join(lines)


def merge_prompt(rows: list[Row]) -> str:
    return "\n\n".join(f"Record {number}:\n{row.text}" for number, row in enumerate(rows, start=1))


def _latest(rows: list[Row]) -> Row:
    return max(rows, key=lambda row: (row.date or datetime.min, row.seq))


def _authors(rows: list[Row]) -> str | None:
    names = list(dict.fromkeys(row.author for row in rows if row.author))
    return ", ".join(names) if names else None


def cut_tokens(text: str, limit: int = MAX_MERGED_TOKENS) -> str:
    return cut_cl100k(text.strip(), limit)


def classify(complete: Complete, rows: list[Row]) -> str | None:
    """The group's label, or None when the call failed or gave no known label."""
    reply = ask_json(complete, CLASSIFY_PROMPT, classify_prompt(rows), CLASSIFY_SCHEMA)
    label = reply.get("label") if isinstance(reply, dict) else None
    return label if label in LABELS else None


def merged_text(complete: Complete, rows: list[Row]) -> str | None:
    """The group as one text of at most 220 cl100k tokens; None when the call failed or wrote nothing."""
    reply = ask_text(complete, MERGE_PROMPT, merge_prompt(rows), max_tokens=MAX_MERGED_TOKENS)
    text = cut_tokens(reply) if reply else ""
    return text or None


def consolidate(memory: "ConsolidatedMemPP", complete: Complete, tau: float = 0.85) -> ConsolidationReport:
    report = ConsolidationReport()
    for group in group_rows(memory, tau):
        if len(group) < 2:
            continue
        report.groups += 1
        rows = [memory.store.rows[seq] for seq in group]
        report.calls += 1
        label = classify(complete, rows)
        report.labels[label or "failed"] += 1
        if label == "conflict":
            latest = _latest(rows)
            for row in rows:
                if row.seq != latest.seq:
                    memory.supersede(row.doc_id, latest.doc_id)
                    report.superseded.append(row.doc_id)
        elif label == "restatement":
            report.calls += 1
            text = merged_text(complete, rows)
            if text is None:
                report.merge_failures += 1
                continue
            _merge(memory, rows, text, report)
    return report


def _merge(memory: "ConsolidatedMemPP", rows: list[Row], text: str, report: ConsolidationReport) -> None:
    dated = [row.date for row in rows if row.date is not None]
    first = rows[0]
    doc = Document(f"merged:{first.doc_id}", text, _authors(rows), min(dated) if dated else None, first.thread,
                   evidence=first.evidence)
    new_id = MemPlusPlus.ingest(memory, [doc])[0]  # the base ingest: no nested consolidation
    report.merged.append(str(new_id))
    if new_id == doc.doc_id:
        memory.merged_from[doc.doc_id] = tuple(row.doc_id for row in rows)
    for row in rows:
        if row.doc_id != new_id:  # a merged text equal to an original keeps that original active
            memory.archive(row.doc_id)
            report.archived.append(row.doc_id)


class ConsolidatedMemPP(MemPlusPlus):
    """Mem++ with consolidation after every ingest (so before any retrieval)."""

    name = "mempp_consolidated"

    def __init__(self, config: MemPPConfig, complete: Complete, tau: float = 0.85, **kwargs) -> None:
        if not 0.0 < tau <= 1.0:
            raise ValueError(f"tau must be in (0, 1], got {tau}")
        super().__init__(config, **kwargs)
        self.complete = complete
        self.tau = tau
        self.reports: list[ConsolidationReport] = []
        self.merged_from: dict[str, tuple[str, ...]] = {}

    def _hit(self, seq: int, score: float, leg_ranks: dict[str, int], reserve: bool) -> Hit:
        """A merged row is returned like a chunk: its own ``[date] authors`` header, its originals as sources."""
        hit = super()._hit(seq, score, leg_ranks, reserve)
        originals = self.merged_from.get(hit.doc_id)
        if not originals:
            return hit
        text = f"{header(hit, NO_AUTHOR)}\n{hit.text}"
        return replace(hit, text=text, sources=tuple((doc_id, 0) for doc_id in originals))

    def ingest(self, documents: Iterable[Document], show_progress: bool = False) -> list[str | None]:
        ids = super().ingest(documents, show_progress)
        self.reports.append(consolidate(self, self.complete, self.tau))
        return ids


__all__ = ["ConsolidatedMemPP", "ConsolidationReport", "consolidate", "current", "cut_tokens", "group_rows"]
