"""results/LONGMEMEVAL_LEADERBOARD.md's tables and verdict: our systems beside the published
MiniLM-only, no-LLM figures.

Our rows come from :mod:`harness.reports.lme_figures` (run folders, else results/PLUS.md), the
published ones from :mod:`harness.reports.lme_published`; this module prints both as markdown
tables, sets ours against each published figure in combined standard errors and checks the target.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.reports.lme_figures import (  # noqa: F401 - re-exported: the script and tests read them here
    DATASET, KEYS, OUR_SYSTEMS, SCORED_ALL, SESSION_METRIC, TURN_METRIC, Figures, OurRow, PublishedRule,
    _table_after, find_run_folder, hit_session, our_rows, published_rule, published_rule_hit, read_records,
    row_from_records, rows_from_plus_page, run_limit,
)
from harness.reports.lme_published import (  # noqa: F401 - re-exported
    PROTOCOL_FIELDS, PUBLISHED_TABLE, PublishedRow, read_published, standard_error,
)

TARGET = 0.98  # issue 24: session recall_any@5 >= 0.98 on the held-out questions


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
