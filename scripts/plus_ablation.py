"""Mem++ against Mem++ plus and Mem++ plus with each lever removed, on the three benchmarks; each cell
the "overall" row of a run through the runner (cached runs are cheap), written to results/PLUS.md.

    python scripts/plus_ablation.py                          # all three, every question
    python scripts/plus_ablation.py --datasets orgmem locomo
    python scripts/plus_ablation.py --lme-limit 50           # LongMemEval_S: the first 50 questions only
"""

from __future__ import annotations

import argparse
import math
import resource
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from script_common import ROOT, git_commit, markdown, run_with

from harness.compose import compose_config
from harness.reports.lme_figures import LME_TUNED, held_out_means  # shared with the leaderboard
from harness.safe_write import atomic_write

METRICS = {
    "orgmem": ["recall_any@10", "recall_all@10", "recall_any@50", "in_budget_recall", "in_budget_gold_chars"],
    "locomo": ["recall_any@10", "recall_all@10", "recall_any@50", "in_budget_recall", "in_budget_gold_chars"],
    "longmemeval_s": ["recall_all@10", "recall_any@10", "session_recall_all@5", "session_recall_any@5",
                      "in_budget_gold_chars"],
}
LEVERS = {
    "mempp_plus_no_lexical": ("any-term BM25 lexical leg",
                              "the lexical leg matches a row sharing any content word of the question, ranked by "
                              "BM25 (bm25s, the paper leg's stems and stop words), with its own RRF weight; off: the "
                              "paper's leg (conjunctive cover density on OrgMemBench and LongMemEval_S)"),
    "mempp_plus_no_threads": ("thread expansion",
                              "a taken row brings the other in-scope rows of its thread right after it (OrgMemBench: "
                              "the whole event; LoCoMo and LongMemEval_S: the neighbouring turns of its session)"),
    "mempp_plus_no_dates": ("date-aware ranking",
                            "a question naming a day, a month or a relative date (counted from its as-of day) adds "
                            "a leg ranking the in-scope rows dated in or near it; the as-of rule is unchanged"),
    "mempp_plus_no_clauses": ("clause views",
                              "the vector leg scores a row by its best cosine over the whole question and each of "
                              "its clauses (at least 3 content words), so a long multi-part question's topic clause "
                              "is not drowned by its instructions"),
    "mempp_plus_no_sentences": ("sentence views",
                                "each sentence of a row is embedded too (at write time, no generative call), and the "
                                "vector leg scores a row by its best cosine over the row and its sentences, so a fact "
                                "said in passing inside a turn or artefact about something else is found "
                                "(LongMemEval_S: user turns only)"),
}
# Levers off in mempp_plus; their config turns them on (the effect is reported "with").
ADDED = {
    "mempp_plus_packing": ("budget packing",
                           "near-duplicate rows go last, and a row that no longer fits whole in the character "
                           "budget lets a following row that fits go first; rows are never cut. Off by default: "
                           "see the budget sweep below"),
}
SYSTEMS = ["mempp", "mempp_plus", *LEVERS, *ADDED]  # each lever removed, then each added
PACKING_BUDGETS = [8000, 16000, 24000, 40000]  # OrgMemBench's own budget is 40,000 characters
HEADLINE = {"orgmem": ["in_budget_recall", "in_budget_gold_chars"], "locomo": ["recall_any@10", "in_budget_recall"],
            "longmemeval_s": ["session_recall_any@5", "recall_all@10"]}


@dataclass(frozen=True)
class Target:
    """``metric`` at least ``threshold`` (None: above mempp's), on every or the held-out questions."""

    metric: str
    threshold: float | None
    held_out: bool = False
    beside: tuple[str, ...] = ()


# The issues' targets: fixed thresholds, or "above mempp". LongMemEval_S (issue 24, restating the
# beyond-the-paper issue's): session recall_any@5 >= 0.98 on the held-out questions -- the metric
# published MiniLM-only systems report (results/LONGMEMEVAL_LEADERBOARD.md) -- with turn
# recall_all@10 reported beside it.
TARGETS = {"orgmem": [Target("in_budget_recall", 0.80), Target("in_budget_gold_chars", 0.75)],
           "locomo": [Target("recall_any@10", None), Target("in_budget_recall", None)],
           "longmemeval_s": [Target("session_recall_any@5", 0.98, held_out=True, beside=("recall_all@10",))]}


@dataclass
class Cell:
    system: str
    values: dict[str, float]
    folder: str
    held_out: dict[str, float] = field(default_factory=dict)  # LongMemEval_S: the questions not tuned on


def run_one(dataset: str, system: str, extra: list[str]) -> Cell:
    cli = [f"system={system}", f"dataset={dataset}", *extra]
    result = run_with(*cli, cli=cli)
    overall = result.summary.loc["overall"].to_dict()
    folder = "?"
    if result.paths:
        root = Path(result.paths.root).resolve()
        folder = str(root.relative_to(ROOT)) if root.is_relative_to(ROOT) else str(root)
    keys = METRICS[dataset]
    held_out = held_out_means(result.records, keys) if dataset == "longmemeval_s" and len(result.records) > LME_TUNED else {}
    return Cell(system, {key: float(overall.get(key, math.nan)) for key in keys}, folder, held_out)


def fmt(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.3f}"


def table(keys: list[str], cells: list[Cell], held_out: bool = False) -> str:
    rows = [[c.system, *(fmt((c.held_out if held_out else c.values)[key]) for key in keys)] for c in cells
            if c.held_out or not held_out]
    return markdown(["system", *keys], rows)


def lever_effects(dataset: str, cells: list[Cell]) -> list[str]:
    by_name = {cell.system: cell for cell in cells}
    full = by_name.get("mempp_plus")
    if full is None:
        return []
    headline = HEADLINE[dataset]
    notes = []
    for system, (lever, _) in [*LEVERS.items(), *ADDED.items()]:
        if system not in by_name:
            continue
        change = "with" if system in ADDED else "without"
        deltas = ", ".join(
            f"{key} {fmt(full.values[key])} -> {fmt(by_name[system].values[key])} "
            f"({by_name[system].values[key] - full.values[key]:+.3f})"
            for key in headline
        )
        notes.append(f"- {change} {lever}: {deltas}")
    return notes


def switched_off(dataset: str, extra: list[str]) -> list[str]:
    """The levers the dataset's own settings leave off in mempp_plus (their ablation equals it)."""
    plus = compose_config(["system=mempp_plus", f"dataset={dataset}", *extra])["system"]["plus"]
    switches = ("any_term_lexical", "thread_expansion", "date_scope", "clause_views", "sentence_views")  # LEVERS' order
    return [lever for (lever, _), key in zip(LEVERS.values(), switches) if not plus.get(key)]


def target_lines(dataset: str, cells: list[Cell]) -> list[str]:
    by_name = {cell.system: cell for cell in cells}
    full, base = by_name.get("mempp_plus"), by_name.get("mempp")
    lines = []
    for target in TARGETS[dataset]:
        if full is None or (target.threshold is None and base is None):
            continue
        if target.held_out and not full.held_out:
            continue  # a limited run has no held-out part
        values = full.held_out if target.held_out else full.values
        scope = " on the held-out questions" if target.held_out else ""
        value = values[target.metric]
        bar = target.threshold if target.threshold is not None else base.values[target.metric]  # type: ignore[union-attr]
        wanted = f">= {target.threshold:.2f}" if target.threshold is not None else f"> mempp's {bar:.3f}"
        met = value >= bar if target.threshold is not None else value > bar
        beside = "".join(f"; {key} beside it: {fmt(values[key])}" for key in target.beside)
        lines.append(f"- {target.metric}{scope} {fmt(value)}, target {wanted}: {'met' if met else 'NOT met'}{beside}")
    return lines


def held_out_table(cells: list[Cell]) -> list[str]:
    keys = METRICS["longmemeval_s"][:4]
    part = next(c.held_out for c in cells if c.held_out)
    last, n = LME_TUNED + int(part["n_questions"]), int(part["n_scored"])
    return [f"Held out: questions {LME_TUNED + 1}-{last} by id ({n} scored), which no LongMemEval_S setting was chosen on:",
            "", table(keys, cells, held_out=True), ""]


def packing_sweep() -> list[str]:
    """OrgMemBench at several budgets, packing off and on: packing lets more blocks *start* inside the
    budget (in_budget_recall) for the same characters read; in_budget_gold_chars tells which."""
    keys = ["in_budget_recall", "in_budget_gold_chars"]
    rows = []
    for budget in PACKING_BUDGETS:
        extra = [f"dataset.context_budget={budget}"]
        off, on = (run_one("orgmem", system, extra).values for system in ("mempp_plus", "mempp_plus_packing"))
        rows.append([f"{budget:,}", *(fmt(side[key]) for key in keys for side in (off, on))])
    header = ["budget (chars)", *(name for key in keys for name in (f"{key} off", "on"))]
    return ["Budget packing across budgets (OrgMemBench, mempp_plus with packing off / on):", "",
            markdown(header, rows), ""]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=list(METRICS), choices=list(METRICS))
    parser.add_argument("--lme-limit", type=int, default=None,
                        help="LongMemEval_S: only the first N questions by id (default: all; a cold run embeds for hours)")
    parser.add_argument("--out", default=str(ROOT / "results" / "PLUS.md"))
    args = parser.parse_args()
    started, cpu = time.perf_counter(), time.process_time()
    sections: list[str] = []
    for dataset in args.datasets:
        extra = [f"dataset.limit={args.lme_limit}"] if dataset == "longmemeval_s" and args.lme_limit else []
        cells = []
        for system in SYSTEMS:
            cell = run_one(dataset, system, extra)
            print(f"{dataset:14s} {system:24s} " + " ".join(f"{k}={fmt(v)}" for k, v in cell.values.items()), flush=True)
            cells.append(cell)
        scope = f" (first {args.lme_limit} questions)" if extra else ""
        off = switched_off(dataset, extra)
        off_note = f"Off by this dataset's settings (their ablation equals mempp_plus): {', '.join(off)}." if off else ""
        sections += [f"## {dataset}{scope}", "", table(METRICS[dataset], cells), "", "Targets:", "", *target_lines(dataset, cells), "",
                     "Measured effect of each lever (mempp_plus -> lever removed, or added when off by default):", "",
                     *lever_effects(dataset, cells), "",
                     *(packing_sweep() if dataset == "orgmem" else []),
                     *(held_out_table(cells) if any(c.held_out for c in cells) else []),
                     *([off_note, ""] if off_note else []),
                     "Run folders:", "", *[f"- {c.system}: `{c.folder}`" for c in cells], ""]
    commit = git_commit()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    header = [
        "# Mem++ plus: levers and ablations",
        "",
        "Generated by `python scripts/plus_ablation.py` from the runner's outputs (the `overall` row of each run's "
        f"summary; retrieval only, encoder all-MiniLM-L6-v2, no answerer), git {commit or '?'}. Do not edit by hand.",
        "",
        "`mempp_plus` keeps Mem++'s store and write path (documents whole, no model call at write time) and changes "
        "only the read path. Its levers, each a switch (`system=mempp_plus_no_<lever>` or `system.plus.<switch>=false`):",
        "",
        *[f"- **{lever}** ({system.removeprefix('mempp_plus_')}): {text}." for system, (lever, text) in LEVERS.items()],
        *[f"- **{lever}** ({system.removeprefix('mempp_plus_')}, turns it on): {text}." for system, (lever, text) in ADDED.items()],
        "",
        "Settings that differ between benchmarks are set once per dataset in `configs/system/mempp_plus.yaml` "
        "(`configs/system/per_dataset/mempp_plus/`). The OrgMemBench lexical weight (8) and its switches (clause and sentence views on) were "
        "chosen on the same 73 questions they are measured on, so its figure there is optimistic "
        "(`scripts/plus_weight_cv.py` re-picks the weight by cross-validation: results/PLUS_CV.md); the LoCoMo "
        "settings were likewise picked on its own questions. The LongMemEval_S settings were chosen on its first "
        "100 questions by id only, and the held-out table reports the rest apart.",
        "",
        "Notes. Thread expansion fills the first ranks with the rest of a taken row's event, so on OrgMemBench it "
        "trades recall_any@10 (other events leave the top 10) for in-budget recall; on LoCoMo and LongMemEval_S the "
        "neighbouring turns took the slots of evidence turns, so it is off there. Packing only acts when a "
        "character budget is set (OrgMemBench only); it is off by default, see the budget sweep. Sentence views "
        "cost embeddings at write time: on LongMemEval_S about 285,000 sentences of user turns besides the "
        "246,000 rows (first run only; embeddings are cached), on OrgMemBench about 8,700 besides its 443 artefacts.",
        "",
    ]
    footer = [f"Wall {time.perf_counter() - started:.0f} s, process CPU {time.process_time() - cpu:.0f} s "
              f"(max RSS {usage.ru_maxrss // 1024} MB) for this script's last run (cached runs are cheap)."]
    atomic_write(args.out, "\n".join(header + sections + footer) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
