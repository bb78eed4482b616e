"""The lines ``scripts/rescore.py`` prints (at most 120 characters each)."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import pandas as pd

from harness.run_data import CliError, int_option, load_run
from harness.rescore import METRIC, Rescored, metadata_check, rescore
from harness.stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, Interval
from judges.aggregate import format_table
from loaders.fetch import fetch_errata
from loaders.locomo import load_locomo
from loaders.published import load_errata, read_published
from memory_protocol import DatasetError

WIDTH = 120


def _bounds(interval: Interval | None) -> str:
    if interval is None or math.isnan(interval.estimate):
        return "—"
    return f"[{interval.low:.2f}, {interval.high:.2f}]"


def table(result: Rescored) -> pd.DataFrame:
    """One row per category, then overall: n, the judge mean, its judge-run std, its interval; with
    errata the score on the sound golds with its interval, the ceiling and the wrong golds."""
    summary = result.summary
    rows = {}
    for name in summary.index:
        row = {"n": int(summary.loc[name, "n"]), METRIC: float(summary.loc[name, METRIC])}
        if f"{METRIC}_std" in summary.columns and len(result.run_intervals) > 1:
            row["judge_std"] = float(summary.loc[name, f"{METRIC}_std"])
        row["95% interval"] = _bounds(result.intervals.get(name))
        for extra in ("f1_set", "bleu1"):
            if extra in summary.columns:
                row[extra] = float(summary.loc[name, extra])
        if result.errata:
            sound = result.sound_intervals[name]
            row["sound golds"] = sound.estimate
            row["sound 95%"] = _bounds(sound)
            row["ceiling"] = result.ceilings[name]
            row["wrong golds"] = result.wrong_golds[name]
        rows[name] = row
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index.name = "category"
    return frame


def report(result: Rescored) -> list[str]:
    run = result.published
    lines = [f"rescore: {run.path.name} ({run.format}), {len(result.records):,} questions on our LoCoMo ids, "
             f"{len(result.run_intervals)} judge run(s)", "", format_table(table(result), floatfmt=".2f"), ""]
    runs = "; ".join(f"run {i + 1} {iv.estimate:.2f} {_bounds(iv)}" for i, iv in enumerate(result.run_intervals))
    lines.append(f"judge runs: {runs}")
    if len(result.run_intervals) > 1:
        lines.append(f"majority vote: {result.majority.estimate:.2f} {_bounds(result.majority)}")
    if run.metadata:
        problems = metadata_check(result)
        lines.append("the file's own metadata (per-run, mean, std, per category, majority vote): "
                     + ("agrees to 0.01" if not problems else "DIFFERS: " + "; ".join(problems)))
    overall = result.intervals["overall"]
    lines.append(f"intervals: {overall.method} ({overall.clusters} units)")
    if result.errata:
        lines.append(f"errata {result.errata}: sound golds = the judge score over the questions whose gold is not "
                     f"wrong; ceiling = their share (the best score a system can reach with every gold counted)")
    return wrap(lines)


def wrap(lines: list[str]) -> list[str]:
    """Every line at most ``WIDTH`` characters (a table wider than that stays whole)."""
    out: list[str] = []
    for line in (part for entry in lines for part in entry.split("\n")):
        fits = len(line) <= WIDTH or line.startswith("|")
        out += [line] if fits else textwrap.wrap(line, WIDTH, subsequent_indent="  ")
    return out


def rescore_file(path: Path, options: dict[str, str]) -> list[str]:
    """Read, map, score and lay out ``path``; CliError (one line) for anything wrong with the input."""
    from loaders import resolve_data_dir

    try:
        data_dir = resolve_data_dir(options.get("dataset.data_dir"))
        published = load_run(path) if path.is_dir() else read_published(path)
        if path.is_dir() and not published.answered:
            return corrected_lines(published, data_dir, options)
        episodes = list(load_locomo(data_dir))
        name = options.get("dataset.errata")
        if name in ("", "none", "null"):
            name = None
        errata = _errata(name, data_dir, options) if name is not None else None
        result = rescore(published, episodes, errata, name, int_option(options, "resamples", DEFAULT_RESAMPLES),
                         int_option(options, "seed", DEFAULT_SEED))
    except (DatasetError, ValueError, OSError) as exc:
        raise CliError(str(exc).splitlines()[0]) from None
    return report(result)


def _errata(name: str, data_dir: Path, options: dict[str, str]):
    """``errata_file``, else the data folder's copy, else fetched by its pin (as a run does)."""
    file = options.get("errata_file")
    return load_errata(name, file=Path(file) if file else fetch_errata(name, data_dir, options.get("dataset.data_dir")))


def corrected_lines(run, data_dir, options: dict[str, str]) -> list[str]:
    """A retrieval-only LoCoMo run: recall_any@10 on the original and on the corrected evidence."""
    from harness.corrected_evidence import audited_questions, corrected_recall

    name = options.get("dataset.errata")
    if run.dataset != "locomo" or not name:
        raise CliError(f"{run.folder}: a retrieval-only run is rescored on LoCoMo with dataset.errata=<name> only")
    audited = audited_questions(_errata(name, data_dir, options), list(load_locomo(data_dir)))
    corrected = {qid: list(e.correct_evidence) for qid, e in audited.items()}
    frame = corrected_recall(run.records, corrected, 10, run.excluded())
    return [f"rescore: {run.folder.name}, recall_any@10 on LoCoMo's evidence and on {name}'s corrected evidence", "",
            format_table(frame, floatfmt=".3f")]
