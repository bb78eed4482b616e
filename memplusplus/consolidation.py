"""Write-time consolidation (paper Algorithm 2), run once after ingest and before any retrieval.

Active rows are grouped greedily in ingest order: a row joins the first group whose FIRST row has
cosine >= tau with it, else it opens a new group. Every group of two or more rows gets one model
call that labels it:

- conflict: every older row is linked as superseded by the latest-dated one (ties: the last
  ingested); all stay active and retrievable;
- restatement: one merged row is added (text cut to at most 220 tokens, the group's earliest
  date, all its authors) and the originals are archived;
- distinct, a failed call or an unparsable reply: nothing changes.

No row is ever deleted. Singletons cost no call. "Token" here is a whitespace-separated word (our
choice: the paper states the 220 limit but not its tokenizer).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime

import numpy as np

from memplusplus.evidence import NO_AUTHOR, header
from memplusplus.llm import Complete, ask_json
from memplusplus.memory import MemPlusPlus, MemPPConfig
from memplusplus.store import Row
from memory_protocol.documents import Document, Hit

LABELS: tuple[str, ...] = ("conflict", "restatement", "distinct")
MAX_MERGED_TOKENS = 220

SYSTEM_PROMPT = (
    "You maintain an organisation's memory. You are shown a few records that look alike. "
    "Decide how they relate and reply with JSON only.\n"
    '- "conflict": they state incompatible versions of the same fact (a later one replaces an earlier one).\n'
    '- "restatement": they say the same thing in different words; then also write "merged": one '
    f"record of at most {MAX_MERGED_TOKENS} words that keeps every fact, name, number and date of them.\n"
    '- "distinct": they are about different things, or you are unsure.\n'
    'Reply as {"label": "conflict" | "restatement" | "distinct", "merged": "..."}.'
)
SCHEMA = {
    "type": "object",
    "properties": {"label": {"type": "string", "enum": list(LABELS)}, "merged": {"type": "string"}},
    "required": ["label"],
}


@dataclass
class ConsolidationReport:
    """What one pass did: groups seen, calls made, and rows touched per label."""

    groups: int = 0
    calls: int = 0
    labels: dict[str, int] = field(default_factory=lambda: {label: 0 for label in (*LABELS, "failed")})
    superseded: list[str] = field(default_factory=list)
    archived: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)


def group_rows(memory: MemPlusPlus, tau: float) -> list[list[int]]:
    """Greedy groups (row seqs, ingest order) of active rows by cosine >= tau to each group's first row."""
    seqs = [row.seq for row in memory.store.rows if row.active]
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


def _user_prompt(rows: list[Row]) -> str:
    lines = []
    for number, row in enumerate(rows, start=1):
        when = row.date.isoformat() if row.date else "undated"
        lines.append(f"Record {number} [{when}] by {row.author or 'unknown'}:\n{row.text}")
    return "\n\n".join(lines)


def _latest(rows: list[Row]) -> Row:
    return max(rows, key=lambda row: (row.date or datetime.min, row.seq))


def _authors(rows: list[Row]) -> str | None:
    names = list(dict.fromkeys(row.author for row in rows if row.author))
    return ", ".join(names) if names else None


def cut_tokens(text: str, limit: int = MAX_MERGED_TOKENS) -> str:
    tokens = text.split()
    return text.strip() if len(tokens) <= limit else " ".join(tokens[:limit])


def consolidate(memory: "ConsolidatedMemPP", complete: Complete, tau: float = 0.85) -> ConsolidationReport:
    """One pass of Algorithm 2 over ``memory``'s active rows (see the module docstring)."""
    report = ConsolidationReport()
    for group in group_rows(memory, tau):
        if len(group) < 2:
            continue
        report.groups += 1
        rows = [memory.store.rows[seq] for seq in group]
        report.calls += 1
        reply = ask_json(complete, SYSTEM_PROMPT, _user_prompt(rows), SCHEMA)
        label = reply.get("label") if isinstance(reply, dict) else None
        merged_text = reply.get("merged") if isinstance(reply, dict) else None
        if label == "restatement" and not (isinstance(merged_text, str) and merged_text.strip()):
            label = None  # a restatement without a merged text is unusable: change nothing
        if label not in LABELS:
            report.labels["failed"] += 1
            continue
        report.labels[label] += 1
        if label == "conflict":
            latest = _latest(rows)
            for row in rows:
                if row.seq != latest.seq:
                    memory.supersede(row.doc_id, latest.doc_id)
                    report.superseded.append(row.doc_id)
        elif label == "restatement":
            _merge(memory, rows, cut_tokens(merged_text), report)
    return report


def _merge(memory: "ConsolidatedMemPP", rows: list[Row], text: str, report: ConsolidationReport) -> None:
    dated = [row.date for row in rows if row.date is not None]
    first = rows[0]
    doc = Document(
        doc_id=f"merged:{first.doc_id}",
        text=text,
        author=_authors(rows),
        date=min(dated) if dated else None,
        thread=first.thread,
        evidence=first.evidence,
    )
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
        """A merged row is no document of the corpus: it is returned like a chunk, its text led
        by its own ``[date] authors`` header and its sources the rows it merged."""
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


__all__ = ["ConsolidatedMemPP", "ConsolidationReport", "consolidate", "cut_tokens", "group_rows"]
