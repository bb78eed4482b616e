"""A published per-question LoCoMo results file (or one of our judged runs) scored as our runs are:
questions mapped onto our ids (:func:`loaders.published.match_keys`), records shaped like ours, the same aggregation
and intervals; with errata, the score on the sound golds and the ceiling per row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from harness.stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, Interval, bootstrap_mean
from harness.stats.records import category_intervals, row_groups, unit_of
from judges.aggregate import summarize
from loaders.locomo import CATEGORY_NAMES
from harness.corrected_evidence import audited_questions
from loaders.published import Erratum, PublishedRun, match_keys
from harness.run_data import RunData
from memory_protocol import Episode

METRIC = "llm_judge"
SOUND = "llm_judge_sound"  # the score over the questions whose gold is sound (errata), NaN elsewhere
CEILING = "gold_sound"  # 100 where a graded question's gold is sound, 0 where wrong: a row's mean is its ceiling
MAJORITY = "llm_judge_majority"


@dataclass
class Rescored:
    published: PublishedRun
    records: list[dict[str, Any]]
    summary: pd.DataFrame
    intervals: dict[str, Interval]
    run_intervals: list[Interval]
    majority: Interval
    errata: str | None = None
    sound_intervals: dict[str, Interval] = field(default_factory=dict)
    ceilings: dict[str, float] = field(default_factory=dict)  # share of sound golds per row, 0-100
    wrong_golds: dict[str, int] = field(default_factory=dict)


def _scores(grades: tuple[bool | None, ...]) -> dict[str, float | None]:
    metrics: dict[str, float | None] = {f"{METRIC}_run{i}": None if g is None else 100.0 * g for i, g in enumerate(grades)}
    given = [100.0 * g for g in grades if g is not None]
    metrics[METRIC] = sum(given) / len(given) if given else None
    metrics[f"{METRIC}_paper"] = sum(given) / len(grades) if grades else None
    metrics[MAJORITY] = None if not given else 100.0 * (sum(given) / 100.0 > len(given) / 2)
    return metrics


def published_records(run: PublishedRun, episodes: list[Episode]) -> list[dict[str, Any]]:
    """One record per published question, under our question id and category."""
    questions = match_keys([(i.conversation, i.question, i.gold) for i in run.items], episodes, str(run.path))
    records = []
    for item, question in zip(run.items, questions):
        category = CATEGORY_NAMES.get(item.category, str(item.category))
        if category != question.category:
            raise ValueError(f"{run.path}: {question.qid} is {question.category!r} here but category "
                             f"{item.category} ({category}) in the file")
        records.append({"episode": question.meta.get("sample_id"), "qid": question.qid, "category": category,
                        "question": question.text, "reference": question.answer, "answer": item.answer,
                        "metrics": {**_scores(item.grades), **item.extra}})
    return records


def errata_keys(keys: list[str], metric: str) -> list[str]:
    """A judged run's summary columns with the score on sound golds and the ceiling beside ``metric``."""
    at = keys.index(metric) + 1
    return [*keys[:at], f"{metric}_sound", CEILING, *keys[at:]]


def errata_note(name: str, metric: str) -> str:
    return (f"errata {name}: {metric}_sound = {metric} over the questions whose gold answer is sound; "
            f"{CEILING} = their share (the ceiling: the best score with every gold counted)")


def mark_erratum(record: dict[str, Any], audited: dict[str, Erratum]) -> None:
    """``erratum`` on an audited record (:mod:`harness.misses` then says the gold is wrong)."""
    erratum = audited.get(record["qid"])
    if erratum is not None:
        record["erratum"] = {"type": erratum.error_type, "wrong_gold": erratum.wrong_gold,
                             "correct_answer": erratum.correct_answer, "correct_evidence": list(erratum.correct_evidence)}


def sound_scores(record: dict[str, Any], metric: str = METRIC) -> None:
    """``<metric>_sound`` (None where the gold is wrong) and ``gold_sound`` (None where ungraded)."""
    metrics = record["metrics"]
    wrong = bool((record.get("erratum") or {}).get("wrong_gold"))
    graded = metrics.get(f"{metric}_paper") is not None
    metrics[f"{metric}_sound"] = None if wrong else metrics.get(metric)
    metrics[CEILING] = (0.0 if wrong else 100.0) if graded else None


def mark_errata(records: list[dict[str, Any]], audited: dict[str, Erratum]) -> None:
    for record in records:
        mark_erratum(record, audited)
        sound_scores(record)


def run_records(run: RunData) -> tuple[PublishedRun, list[dict[str, Any]], int]:
    """One of our judged LoCoMo runs as input: its graded records, each with its majority vote."""
    if run.dataset != "locomo" or not run.answered:
        raise ValueError(f"{run.folder}: rescore reads judged LoCoMo runs (this one: {run.dataset}, "
                         f"{'answered' if run.answered else 'retrieval only'})")
    records = []
    for record in run.records:
        grades = [v for k, v in sorted(record["metrics"].items()) if k.startswith(f"{METRIC}_run")]
        if record["metrics"].get(METRIC) is None and not grades:
            continue  # not graded (adversarial)
        metrics = {**record["metrics"], **{k: v for k, v in _scores(tuple(
            None if g is None else g >= 50.0 for g in grades)).items() if k == MAJORITY}}
        records.append({**record, "metrics": metrics})
    runs = max((sum(1 for k in r["metrics"] if k.startswith(f"{METRIC}_run")) for r in records), default=0)
    return PublishedRun(run.folder, "our run", (), {}), records, runs


def rescore(run: PublishedRun | RunData, episodes: list[Episode], errata: list[Erratum] | None = None,
            errata_name: str | None = None, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> Rescored:
    """``run``: a published results file, or one of our judged LoCoMo run folders."""
    from harness.qa import add_judge_columns

    if isinstance(run, RunData):
        run, records, runs = run_records(run)
    else:
        records, runs = published_records(run, episodes), run.runs
    keys = [METRIC, f"{METRIC}_paper", *(f"{METRIC}_run{i}" for i in range(runs))]
    extra = sorted({k for r in records for k in r["metrics"] if k in ("f1_set", "bleu1")})
    if errata is not None:
        mark_errata(records, audited_questions(errata, episodes))
        extra += [SOUND, CEILING]
    flat = [{"category": r["category"], **r["metrics"]} for r in records]
    summary = add_judge_columns(summarize(flat, keys + extra), METRIC, runs)
    unit, clusters = unit_of(records)
    run_intervals = [bootstrap_mean([_get(r, f"{METRIC}_run{i}") for r in records], clusters, unit, n_resamples, seed)
                     for i in range(runs)]
    majority = bootstrap_mean([_get(r, MAJORITY) for r in records], clusters, unit, n_resamples, seed)
    out = Rescored(run, records, summary, category_intervals(records, METRIC, (), n_resamples, seed), run_intervals,
                   majority)
    if errata is not None:  # the ceiling as the run's summary computes it: the mean of gold_sound per row
        out.errata = errata_name
        out.sound_intervals = category_intervals(records, SOUND, (), n_resamples, seed)
        out.ceilings = {str(row): float(value) for row, value in summary[CEILING].items()}
        for row, group in row_groups(records).items():
            out.wrong_golds[row] = sum(1 for r in group if r.get("erratum", {}).get("wrong_gold"))
    return out


def _get(record: dict[str, Any], key: str) -> float:
    value = record["metrics"].get(key)
    return math.nan if value is None else float(value)


def metadata_check(rescored: Rescored, tolerance: float = 0.01) -> list[str]:
    """Where our figures differ from the file's own metadata by more than ``tolerance`` points."""
    meta = rescored.published.metadata
    if not meta:
        return []
    summary, problems = rescored.summary, []

    def check(what: str, ours: float, theirs: Any) -> None:
        if theirs is not None and not abs(ours - 100.0 * float(theirs)) <= tolerance:
            problems.append(f"{what}: ours {ours:.2f}, the file's {100.0 * float(theirs):.2f}")

    check("mean", float(summary.loc["overall", METRIC]), meta.get("mean_accuracy"))
    check("std", float(summary.loc["overall", f"{METRIC}_std"]), meta.get("std_accuracy"))
    for i, value in enumerate(meta.get("run_scores") or []):
        check(f"run {i + 1}", rescored.run_intervals[i].estimate, value)
    for key, figures in (meta.get("category_accuracies") or {}).items():
        name = CATEGORY_NAMES.get(int(key), key)
        check(f"{name} mean", float(summary.loc[name, METRIC]), figures.get("mean"))
    check("majority vote", rescored.majority.estimate, meta.get("majority_vote_accuracy"))
    return problems
