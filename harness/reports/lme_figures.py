"""LongMemEval_S retrieval: our systems' figures, from run folders or from results/PLUS.md.

Session recall_any@5 (the official ``run_retrieval.py`` rules) and turn recall_all@10, over every scored
and over the held-out questions (after the first ``LME_TUNED`` by id). A run folder's kept hits also allow
the published systems' rule (:func:`published_rule_hit`): every question counts, gold is every answer
session whole (an id holding ``answer``, as the official code takes it), k = 5 distinct sessions.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.reports.format import read_markdown
from harness.run_data import load_run
from harness.safe_write import is_staging
from judges.aggregate import OVERALL, summarize
from judges.metrics.longmemeval import ANSWER_MARK

DATASET = "longmemeval_s"
SESSION_METRIC = "session_recall_any@5"
TURN_METRIC = "recall_all@10"
KEYS = [SESSION_METRIC, TURN_METRIC]
OUR_SYSTEMS = ("mempp", "mempp_plus", "rag")
# Scored questions of our 499 under the official rules: 30 abstention questions and 51 without a
# gold user turn are skipped (judges/metrics/longmemeval.py). PLUS.md prints the held-out count but
# not this one, so a row read from it takes this count.
SCORED_ALL = 499 - 30 - 51
LME_TUNED = 100  # mempp_plus's LongMemEval_S settings were chosen on its first 100 questions by id (PLUS.md shares the split)


@dataclass(frozen=True)
class Figures:
    """Session recall_any@5 and turn recall_all@10 over one question set."""

    n_scored: int | None
    session_any5: float
    turn_all10: float


@dataclass(frozen=True)
class PublishedRule:
    """Session recall_any@5 by the published rule over every question, every turn's or user turns' sessions."""

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


def held_out_records(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records after the first ``LME_TUNED`` by ``qid`` (the order of ``records`` does not matter)."""
    return sorted(records, key=lambda record: record["qid"])[LME_TUNED:]


def overall_means(records: Sequence[dict[str, Any]], keys: list[str]) -> dict[str, float]:
    """The summary's overall row (NaN-ignoring means, ``n_scored`` from the first key) with ``n_questions``."""
    overall = summarize([record["metrics"] for record in records], keys).loc[OVERALL]
    return {"n_questions": float(overall["n"]), "n_scored": float(overall["n_scored"]),
            **{key: float(overall[key]) for key in keys}}


def held_out_means(records: Sequence[dict[str, Any]], keys: list[str]) -> dict[str, float]:
    return overall_means(held_out_records(records), keys)


def hit_session(doc_id: str) -> str:
    """The haystack session of a LongMemEval_S turn id ``<session>[@n]#<turn>``."""
    return re.sub(r"@\d+$", "", doc_id.rsplit("#", 1)[0])


def published_rule_hit(hits: Sequence[dict[str, Any]], k: int = 5, user_turns_only: bool = False) -> float:
    """1.0 when an answer session is among the first ``k`` distinct sessions of the kept hits, else 0.0."""
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


def _config(run_dir: Path) -> dict[str, Any]:
    try:
        return json.loads((run_dir / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def row_from_folder(system: str, folder: Path) -> OurRow:
    """Our row from a whole run folder's records: every scored question, and the held-out ones by id
    (with the ``dataset.limit`` its config records)."""
    run = load_run(folder, need=("records.jsonl",), sealed=("records.jsonl",))
    records, limit = run.records, (run.config.get("dataset") or {}).get("limit")
    if not any(SESSION_METRIC in (record.get("metrics") or {}) for record in records):
        raise ValueError(f"{folder}: its records hold no {SESSION_METRIC} (not a LongMemEval_S retrieval run?)")
    held_out = _figures(held_out_means(records, KEYS)) if len(records) > LME_TUNED else None
    return OurRow(system, _figures(overall_means(records, KEYS)), held_out, str(folder),
                  int(limit) if limit is not None else None, published_rule(records))


def _is_default_run(run_dir: Path, system: str, limited: bool = False) -> bool:
    """A LongMemEval_S run of ``system`` with no override but the dataset (and, ``limited``, a limit)."""
    config = _config(run_dir)
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


def rows_from_plus_page(path: Path, systems: Iterable[str],
                        every_scored: int | None = SCORED_ALL) -> dict[str, OurRow]:
    """Our rows from results/PLUS.md's full LongMemEval_S section: its first table over every scored
    question (``every_scored``), its held-out table (the count on its line)."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    if "## longmemeval_s" not in lines:
        return {}
    start = lines.index("## longmemeval_s") + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("## ")), len(lines))
    section = lines[start:end]
    every = read_markdown(section).set_index("system").to_dict("index")
    marker = next((i for i, line in enumerate(section) if line.startswith("Held out:")), None)
    held = read_markdown(section[marker:]).set_index("system").to_dict("index") if marker is not None else {}
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
    """Each system's row from its run folder (``explicit``, else the newest full default run under
    ``runs_dir``), else from ``plus_page``, else none."""
    fallback = rows_from_plus_page(plus_page, systems) if plus_page and plus_page.is_file() else {}
    rows = []
    for system in systems:
        folder = (explicit or {}).get(system) or find_run_folder(runs_dir, system)
        if folder is not None:
            rows.append(row_from_folder(system, folder))
        elif system in fallback:
            rows.append(fallback[system])
    return rows
