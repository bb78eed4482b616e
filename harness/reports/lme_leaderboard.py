"""LongMemEval_S retrieval: our systems beside the published MiniLM-only, no-LLM figures.

Our figures are session recall_any@5 (``judges/metrics/longmemeval.py``, the official
``run_retrieval.py`` rules) and turn recall_all@10, over every scored question and over the held-out
questions (:mod:`harness.reports.lme_split`), read from a run folder's ``records.jsonl``. Where this
machine holds no full run folder of a system, they are read from results/PLUS.md, which
scripts/plus_ablation.py generated from run folders (the page says which source each row has).

The published figures come from ``results/paper/longmemeval_s_published.csv`` (long format, one
source per row): for each system its figure, its question count and how it was measured.

They all score by another rule than the official one: every question counts, the gold is every
answer session whole, and k = 5 is the first five distinct sessions. A run folder's records allow
that rule too (:func:`published_rule_hit`): each kept hit names its session in its id
(``<session>#<turn>``, ``@n`` for a repeated session) and its role, and an answer session is one
whose id holds ``answer`` (as the official code takes it; in all 499 of our questions these are
exactly ``answer_session_ids``).
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.reports.lme_split import LME_TUNED, held_out_means, held_out_records, overall_means
from harness.run_folder import check_run_folder, is_staging
from judges.metrics.longmemeval import ANSWER_MARK

DATASET = "longmemeval_s"
SESSION_METRIC = "session_recall_any@5"
TURN_METRIC = "recall_all@10"
KEYS = [SESSION_METRIC, TURN_METRIC]
TARGET = 0.98  # issue 24: session recall_any@5 >= 0.98 on the held-out questions
OUR_SYSTEMS = ("mempp", "mempp_plus", "rag")
PUBLISHED_TABLE = "longmemeval_s_leaderboard"
# Scored questions of our 499 under the official rules: 30 abstention questions and 51 without a
# gold user turn are skipped (judges/metrics/longmemeval.py). PLUS.md prints the held-out count but
# not this one, so a row read from it takes this count.
SCORED_ALL = 499 - 30 - 51
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
class Figures:
    """Session recall_any@5 and turn recall_all@10 over one question set (``n_scored`` may be unknown)."""

    n_scored: int | None
    session_any5: float
    turn_all10: float


@dataclass(frozen=True)
class PublishedRule:
    """Session recall_any@5 by the published systems' rule over every question (abstention and
    no-gold ones included), counting every turn's session or only user turns' sessions."""

    n_every: int
    every_all_turns: float
    every_user_turns: float
    n_held_out: int
    held_all_turns: float
    held_user_turns: float

    def value(self, held_out: bool, turns: str) -> float:
        if held_out:
            return self.held_user_turns if turns == "user" else self.held_all_turns
        return self.every_user_turns if turns == "user" else self.every_all_turns


@dataclass(frozen=True)
class OurRow:
    system: str
    every: Figures
    held_out: Figures | None
    source: str  # the run folder, or the generated page the figures were read from
    limit: int | None = None  # the run's dataset.limit: only its first questions were run
    published_rule: PublishedRule | None = None  # only from a run folder's records

    @property
    def label(self) -> str:
        return self.system if self.limit is None else f"{self.system} (first {self.limit} questions)"


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


# ---------------------------------------------------------------------------------------------
# Our figures


def hit_session(doc_id: str) -> str:
    """The haystack session of a LongMemEval_S turn id ``<session>[@n]#<turn>``."""
    return re.sub(r"@\d+$", "", doc_id.rsplit("#", 1)[0])


def published_rule_hit(hits: Sequence[dict[str, Any]], k: int = 5, user_turns_only: bool = False) -> float:
    """1.0 when an answer session is among the first ``k`` distinct sessions of the kept hits (every
    hit's session, or only user turns' sessions), else 0.0: the published systems' rule."""
    sessions: list[str] = []
    for hit in hits:
        if user_turns_only and hit.get("author") != "user":
            continue
        session = hit_session(str(hit["doc_id"]))
        if session not in sessions:
            sessions.append(session)
            if len(sessions) == k:
                break
    return float(any(ANSWER_MARK in session for session in sessions))


def _rule_mean(records: Sequence[dict[str, Any]], user_turns_only: bool) -> float:
    values = [published_rule_hit(record.get("hits") or [], user_turns_only=user_turns_only) for record in records]
    return sum(values) / len(values) if values else math.nan


def published_rule(records: Sequence[dict[str, Any]]) -> PublishedRule | None:
    """The published rule over every record and over the held-out ones (None without kept hits)."""
    if not any(record.get("hits") for record in records):
        return None
    held = held_out_records(records) if len(records) > LME_TUNED else []
    return PublishedRule(len(records), _rule_mean(records, False), _rule_mean(records, True),
                         len(held), _rule_mean(held, False), _rule_mean(held, True))


def _figures(means: dict[str, float]) -> Figures:
    return Figures(int(means["n_scored"]), means[SESSION_METRIC], means[TURN_METRIC])


def row_from_records(system: str, records: Sequence[dict[str, Any]], source: str, limit: int | None = None) -> OurRow:
    """Our row from a run's records: every scored question, and the held-out ones by id."""
    if not any(SESSION_METRIC in (record.get("metrics") or {}) for record in records):
        raise ValueError(f"{source}: its records hold no {SESSION_METRIC} (not a LongMemEval_S retrieval run?)")
    held_out = _figures(held_out_means(records, KEYS)) if len(records) > LME_TUNED else None
    return OurRow(system, _figures(overall_means(records, KEYS)), held_out, source, limit, published_rule(records))


def run_limit(run_dir: Path) -> int | None:
    """The ``dataset.limit`` a run folder's config.json records (None: every question)."""
    try:
        config = json.loads((run_dir / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    limit = (config.get("dataset") or {}).get("limit")
    return int(limit) if limit is not None else None


def read_records(run_dir: Path) -> list[dict[str, Any]]:
    check_run_folder(run_dir, hashed=("records.jsonl",))  # HalfWrittenRun (a ValueError): one line
    with (run_dir / "records.jsonl").open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _is_default_run(run_dir: Path, system: str, limited: bool = False) -> bool:
    """A LongMemEval_S run of ``system`` with no override but the dataset (and, when ``limited``,
    a ``dataset.limit``); ``limited=False`` asks for every question."""
    try:
        config = json.loads((run_dir / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    dataset, chosen = config.get("dataset") or {}, config.get("system") or {}
    overrides = run_dir.name.rsplit("-", 1)[0].partition("__")[2]
    limit = dataset.get("limit")
    allowed = (f"dataset={DATASET},dataset.limit={limit}",) if limited else ("", f"dataset={DATASET}")
    return (chosen.get("name") == system and dataset.get("name") == DATASET and (limit is not None) == limited
            and overrides in allowed and (run_dir / "records.jsonl").is_file())


def find_run_folder(runs_dir: Path, system: str, limited: bool = False) -> Path | None:
    """The newest default LongMemEval_S run folder of ``system`` under ``runs_dir``: over every
    question, or (``limited``) over the first questions only."""
    parent = runs_dir / DATASET
    if not parent.is_dir():
        return None
    found = [p for p in parent.iterdir() if p.is_dir() and not is_staging(p) and _is_default_run(p, system, limited)]
    return max(found, key=lambda p: (p / "records.jsonl").stat().st_mtime) if found else None


def _markdown_table(lines: list[str]) -> list[dict[str, str]]:
    """The first markdown table in ``lines``, one dict per body row."""
    rows = [line for line in lines if line.startswith("|")]
    if len(rows) < 2:
        return []
    header = [cell.strip() for cell in rows[0].strip("|").split("|")]
    return [dict(zip(header, (cell.strip() for cell in row.strip("|").split("|")))) for row in rows[2:]]


def _table_after(lines: list[str], start: int) -> list[dict[str, str]]:
    body: list[str] = []
    for line in lines[start:]:
        if line.startswith("|"):
            body.append(line)
        elif body:
            break
    return _markdown_table(body)


def rows_from_plus_page(path: Path, systems: Iterable[str],
                        every_scored: int | None = SCORED_ALL) -> dict[str, OurRow]:
    """Our rows as results/PLUS.md prints them (its LongMemEval_S section over every question, not a
    ``--lme-limit`` one): the first table holds every scored question (``every_scored`` of them),
    the held-out table the questions after the first ``LME_TUNED`` (its count is on its line)."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    if "## longmemeval_s" not in lines:
        return {}
    start = lines.index("## longmemeval_s") + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("## ")), len(lines))
    section = lines[start:end]
    every = {row["system"]: row for row in _table_after(section, 0)}
    marker = next((i for i, line in enumerate(section) if line.startswith("Held out:")), None)
    held = {row["system"]: row for row in _table_after(section, marker)} if marker is not None else {}
    scored = re.search(r"\((\d+) scored\)", section[marker]) if marker is not None else None
    commit = re.search(r"\bgit ([0-9a-f]{7,40})\b", text)
    source = f"{path.name} (git {commit.group(1)})" if commit else path.name
    rows: dict[str, OurRow] = {}
    for system in systems:
        if system not in every:
            continue
        cells = every[system]
        held_cells = held.get(system)
        held_figures = (Figures(int(scored.group(1)) if scored else None, float(held_cells[SESSION_METRIC]),
                                float(held_cells[TURN_METRIC])) if held_cells else None)
        rows[system] = OurRow(system, Figures(every_scored, float(cells[SESSION_METRIC]), float(cells[TURN_METRIC])),
                              held_figures, source)
    return rows


def our_rows(runs_dir: Path, plus_page: Path | None, systems: Sequence[str] = OUR_SYSTEMS,
             explicit: dict[str, Path] | None = None) -> list[OurRow]:
    """Each system's row from its run folder (``explicit`` first, then the newest full default run
    under ``runs_dir``), else from ``plus_page``; a system found in neither is left out."""
    fallback = rows_from_plus_page(plus_page, systems) if plus_page and plus_page.is_file() else {}
    rows = []
    for system in systems:
        folder = (explicit or {}).get(system) or find_run_folder(runs_dir, system)
        if folder is not None:
            rows.append(row_from_records(system, read_records(folder), str(folder), run_limit(folder)))
        elif system in fallback:
            rows.append(fallback[system])
    return rows


# ---------------------------------------------------------------------------------------------
# Published figures


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


# ---------------------------------------------------------------------------------------------
# The page


def fmt(value: float | None) -> str:
    return "—" if value is None or math.isnan(value) else f"{value:.3f}"


def _count(value: int | None) -> str:
    return "—" if value is None else str(value)


def our_table(rows: Sequence[OurRow]) -> list[str]:
    lines = ["| system | scored (all) | session recall_any@5 (all) | turn recall_all@10 (all) | scored (held out) "
             "| **session recall_any@5 (held out)** | turn recall_all@10 (held out) | read from |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    for row in rows:
        held = row.held_out
        lines.append(f"| {row.label} | {_count(row.every.n_scored)} | {fmt(row.every.session_any5)} | "
                     f"{fmt(row.every.turn_all10)} | {_count(held.n_scored if held else None)} | "
                     f"**{fmt(held.session_any5 if held else None)}** | {fmt(held.turn_all10 if held else None)} | "
                     f"`{row.source}` |")
    return lines


def rule_sensitivity(runs_dir: Path, system: str = "mempp_plus") -> str | None:
    """One line: the official rule against the published one on the newest limited default run of
    ``system`` (its first questions by id), or None when there is none."""
    folder = find_run_folder(runs_dir, system, limited=True)
    if folder is None:
        return None
    row = row_from_records(system, read_records(folder), str(folder), run_limit(folder))
    rule = row.published_rule
    if rule is None:
        return None
    command = f"python run.py dataset={DATASET} system={system} dataset.limit={row.limit}"
    return (f"- On a {system} run of the first {row.limit} questions by id (`{command}`), the official rule gives "
            f"{fmt(row.every.session_any5)} over {row.every.n_scored} scored questions, the published rule "
            f"{fmt(rule.every_all_turns)} over all {rule.n_every} ({fmt(rule.every_user_turns)} counting user turns "
            "only): how far the rule alone moves a figure, on a small sample.")


def published_rule_table(rows: Sequence[OurRow]) -> list[str]:
    """Our rows scored by the published rule, where a run folder's records allow it."""
    lines = ["| system | questions (all) | every turn | user turns only | questions (held out) | every turn "
             "| user turns only |", "|---|---:|---:|---:|---:|---:|---:|"]
    for row in rows:
        rule = row.published_rule
        if rule is None:
            continue
        held = (f"{rule.n_held_out} | {fmt(rule.held_all_turns)} | {fmt(rule.held_user_turns)}" if rule.n_held_out
                else "— | — | —")
        lines.append(f"| {row.label} | {rule.n_every} | {fmt(rule.every_all_turns)} | {fmt(rule.every_user_turns)} "
                     f"| {held} |")
    return lines if len(lines) > 2 else []


def link_label(url: str) -> str:
    """``github.com/<owner>/<repo>`` for a GitHub address, else the host."""
    parts = url.split("//", 1)[-1].split("/")
    return "/".join(parts[:3]) if parts[0] == "github.com" else parts[0]


def published_table(rows: Sequence[PublishedRow]) -> list[str]:
    lines = ["| system | figure | session recall_any@5 | questions | ±1 SE | source |", "|---|---|---:|---:|---:|---|"]
    for row in sorted(rows, key=lambda r: -r.value):
        se = standard_error(row.value, row.n_questions)
        lines.append(f"| {row.system} | {row.figure} | {fmt(row.value)} | {row.n_questions} | {fmt(se)} | "
                     f"[{link_label(row.url)}]({row.url}) |")
    return lines


def protocol_notes(rows: Sequence[PublishedRow]) -> list[str]:
    lines = []
    for row in rows:
        lines.append(f"**{row.system}** ({row.figure}, {fmt(row.value)}; {row.status})")
        lines.append("")
        lines += [f"- {label}: {row.protocol[key]}" for key, label in PROTOCOL_FIELDS.items() if row.protocol.get(key)]
        lines += [f"- source: {row.source}", ""]
    return lines


@dataclass(frozen=True)
class Gap:
    """Our figure against one published figure: the difference, and it in combined standard errors
    (as if the two question sets were independent; they overlap, so this is a scale, not a test)."""

    ours_label: str
    ours: float
    published: PublishedRow
    combined_se: float

    @property
    def difference(self) -> float:
        return self.ours - self.published.value

    @property
    def in_se(self) -> float:
        return self.difference / self.combined_se if self.combined_se else math.nan


def gaps(ours: Sequence[OurRow], published: Sequence[PublishedRow], system: str = "mempp_plus") -> list[Gap]:
    """Our ``system`` against each published figure on the nearest question set we have: held out
    against a held-out figure, every scored question against an all-question one."""
    mine = next((row for row in ours if row.system == system), None)
    if mine is None:
        return []
    found = []
    rule = mine.published_rule
    for row in sorted(published, key=lambda r: -r.value):
        held = row.held_out and mine.held_out is not None
        scope = "held out" if held else "all scored" if mine.limit is None else f"first {mine.limit} questions"
        if rule is not None:  # like for like: their rule over our rankings
            n = rule.n_held_out if held else rule.n_every
            value = rule.value(held, row.turns)
            turns = "user turns" if row.turns == "user" else "every turn"
            scope = f"{scope.replace('all scored', 'all')}, their rule, {turns}"
        else:
            figures = mine.held_out if held and mine.held_out else mine.every
            n, value = figures.n_scored, figures.session_any5
        combined = math.sqrt(standard_error(value, n) ** 2 + standard_error(row.value, row.n_questions) ** 2)
        found.append(Gap(scope, value, row, combined))
    return found


def verdict_lines(found: Sequence[Gap], system: str = "mempp_plus") -> list[str]:
    return [f"- {system} {gap.ours_label} {fmt(gap.ours)} vs {gap.published.system} {gap.published.figure} "
            f"{fmt(gap.published.value)}: {gap.difference:+.3f}, {gap.in_se:+.1f} combined SE ({fmt(gap.combined_se)})"
            + (" **beyond two SEs**" if abs(gap.in_se) > 2 else "")
            for gap in found]


def target_line(ours: Sequence[OurRow], system: str = "mempp_plus") -> str:
    mine = next((row for row in ours if row.system == system and row.held_out), None)
    if mine is None or mine.held_out is None:
        return f"- {system}: no held-out figure here."
    value = mine.held_out.session_any5
    met = "met" if value >= TARGET else "NOT met"
    return (f"- {system}: session recall_any@5 on the held-out questions {fmt(value)}, target >= {TARGET:.2f}: "
            f"{met}; turn recall_all@10 beside it: {fmt(mine.held_out.turn_all10)}")
