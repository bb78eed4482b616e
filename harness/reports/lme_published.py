"""LongMemEval_S retrieval: the published MiniLM-only, no-LLM figures our systems are set beside.

They come from ``results/paper/longmemeval_s_published.csv`` (long format, one source per row): for
each system its figure, its question count and how it was measured.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

from harness.reports.lme_figures import SESSION_METRIC

PUBLISHED_TABLE = "longmemeval_s_leaderboard"
# What the CSV says of each published figure, in the order the page prints it.
PROTOCOL_FIELDS = {
    "question_set": "questions",
    "skips": "skipped",
    "gold": "gold",
    "documents": "documents",
    "k_rule": "k",
    "encoder": "encoder, LLM",
}


@dataclass(frozen=True)
class PublishedRow:
    system: str
    figure: str  # e.g. "held-out 450"
    held_out: bool
    value: float
    n_questions: int
    protocol: dict[str, str]
    status: str
    source: str
    turns: str = "all"  # the turns it indexes: "user", or "all" (user and assistant)

    @property
    def url(self) -> str:
        return self.source.split()[0]


def standard_error(value: float, n: int | None) -> float:
    """Binomial standard error of a mean of 0/1 hits over ``n`` questions (NaN when n is unknown)."""
    if not n or math.isnan(value):
        return math.nan
    return math.sqrt(value * (1.0 - value) / n)




def read_published(path: Path) -> list[PublishedRow]:
    """The published figures of ``path`` (long format: table, answerer, row, column, category,
    metric, value, source), one :class:`PublishedRow` per (row, column); each needs its figure, its
    question count and one source that starts with its URL."""
    groups: dict[tuple[str, str], list[dict[str, str]]] = {}
    with path.open(encoding="utf-8", newline="") as handle:
        for line in csv.DictReader(handle):
            if line["table"] == PUBLISHED_TABLE:
                groups.setdefault((line["row"], line["column"]), []).append(line)
    rows = []
    for (system, figure), lines in groups.items():
        fields = {line["metric"]: line["value"] for line in lines}
        sources = {line["source"] for line in lines}
        if len(sources) != 1 or not next(iter(sources)).startswith("http"):
            raise ValueError(f"{path}: {system} ({figure}) needs one source that starts with its URL")
        missing = [key for key in (SESSION_METRIC, "n_questions", "status", "turns") if not fields.get(key)]
        if missing:
            raise ValueError(f"{path}: {system} ({figure}) lacks {', '.join(missing)}")
        rows.append(PublishedRow(system, figure, lines[0]["category"] == "held_out", float(fields[SESSION_METRIC]),
                                 int(fields["n_questions"]), {key: fields.get(key, "") for key in PROTOCOL_FIELDS},
                                 fields["status"], sources.pop(), fields["turns"]))
    return rows


