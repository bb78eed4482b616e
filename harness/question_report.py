"""What scripts/explain.py prints: why one question of a run missed, from its record alone
(``gold_docs``), or the miss split of answered runs per system and category.

Ranks print 1-based (#1 = best): records store hits' ``leg_ranks`` 0-based (RRF's rank) and
``gold_docs`` ranks 1-based.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.run_data import CliError, load_run
from harness.misses import attribute, miss_line, miss_table
from judges.aggregate import format_table


class NotExplainable(Exception):
    """A question the run does not hold: one line for the user."""


def load_record(run_dir: Path, qid: str) -> dict[str, Any]:
    records = load_run(run_dir, need=("records.jsonl",), sealed=("records.jsonl",)).records
    found = next((record for record in records if record.get("qid") == qid.strip()), None)
    if found is None:
        sample = ", ".join(str(record.get("qid")) for record in records[:3])
        raise NotExplainable(f"no question {qid!r} in {run_dir} ({len(records)} questions, e.g. {sample})")
    return found


def _rank(value: int | None, depth: int | None) -> str:
    return f"#{value}" if value is not None else f"not in the top {depth}" if depth else "not retrieved"


def _leg_rank(leg: str, rank: int | None, depth: int | None, sizes: dict[str, int]) -> str:
    if rank is None and sizes.get(leg) == 0:
        return f"{leg} matched nothing"
    return f"{leg} {_rank(rank, depth)}"


def _gold_lines(gold: dict[str, Any], depth: int | None, sizes: dict[str, int]) -> list[str]:
    doc_id = gold["doc_id"]
    lines = [f"gold {doc_id}: system rank {_rank(gold['rank'], depth)}"
             + (f", returned at #{gold['returned_rank']}" if gold["returned_rank"] is not None else ", not returned")]
    if "legs" in gold:
        if not gold.get("stored", True):
            lines.append("  no row holds it (never stored: an empty text?)")
        elif not gold.get("in_scope", True):
            lines.append("  out of scope: its row is dated after the question's as-of day")
        legs = ", ".join(_leg_rank(leg, rank, depth, sizes) for leg, rank in gold["legs"].items())
        lines.append(f"  legs: {legs}; fused {_rank(gold['fused_rank'], depth)}")
        lost = [leg for leg, rank in gold["legs"].items() if rank is None and sizes.get(leg) != 0]
        if lost:
            lines.append(f"  lost by the {', '.join(lost)} leg(s) (not in their top {depth})")
        if gold["fused_rank"] is None and any(rank is not None for rank in gold["legs"].values()):
            lines.append(f"  fusion put it below #{depth} despite the leg(s) that ranked it")
    if gold["budget_cut"]:
        lines.append("  budget: returned but cut by the answerer's context budget (not read)")
    elif gold["read"]:
        lines.append("  budget: read by the answerer")
    else:
        lines.append("  budget: nothing to read (not returned)")
    if gold.get("text"):
        lines.append(f"  text: {gold['text'][:120]!r}")
    return lines


def explain(record: dict[str, Any], metric: str | None = None) -> list[str]:
    """The lines ``scripts/explain.py`` prints for one record (``metric``: the run's judge metric,
    which decides where an answered question's miss came from)."""
    lines = [f"{record['qid']} [{record['category']}] {record['question']}"]
    if "gold_docs" not in record:
        return lines + ["this run's records predate explanations (no gold_docs): run it again to get them"]
    depth = record.get("explain_depth")
    if not record["gold_docs"]:
        lines.append("no gold evidence for this question")
    for gold in record["gold_docs"]:
        lines += _gold_lines(gold, depth, record.get("leg_sizes", {}))
    if record.get("hits"):
        top = record["hits"][0]
        legs = ", ".join(f"{leg} #{rank + 1}" for leg, rank in top.get("leg_ranks", {}).items())
        lines.append(f"top hit: {top['doc_id']}" + (f" ({legs})" if legs else "") + (" [gold]" if top.get("gold") else ""))
    if "answer" in record:
        answer = record["answer"] if record["answer"] is not None else f"(no answer: {record.get('answer_error')})"
        lines.append(miss_line(record.get("miss") or attribute(record, metric or _judge_metric(record))))
        lines.append(f"answer: {answer!r}; reference: {record.get('reference')!r}")
    else:
        lines.append(f"answer: not answered (retrieval-only run); reference: {record.get('reference')!r}")
    return lines


def _judge_metric(record: dict[str, Any]) -> str:
    """The judge metric a record holds (the one with per-run columns), else ``llm_judge``."""
    metrics = record.get("metrics") or {}
    for key in metrics:
        if key.endswith("_run0"):
            return key[: -len("_run0")]
    return "llm_judge"


def miss_report(run_dirs: list[Path]) -> list[str]:
    """The miss split as ``explain --misses`` prints it: a row per system and category, each outcome in %."""
    runs = [load_run(folder) for folder in run_dirs]
    answered = [run for run in runs if run.answered]
    if not answered:
        raise CliError("no answered run among these folders: a miss needs an answer and a grade")
    excluded = answered[0].excluded()
    frame = miss_table(((run.system, run.records) for run in answered), answered[0].headline(),
                       exclude_from_overall=excluded)
    frame = frame.set_index("system")
    skipped = [run.system for run in runs if not run.answered]
    lines = ["where each question was lost (% of the questions of the row; right = judged right)", "",
             format_table(frame, floatfmt=".1f")]
    if skipped:
        lines.append(f"retrieval-only runs left out (nothing answered): {', '.join(skipped)}")
    return lines
