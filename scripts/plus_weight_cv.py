"""mempp_plus's OrgMemBench lexical weight was picked on the 73 questions it is reported on; this picks
it by cross-validation instead (markdown to stdout).

    python scripts/plus_weight_cv.py                       # weights 1..32, 2- and 5-fold, 20 splits each
    python scripts/plus_weight_cv.py --weights 4 8 16 --folds 2

Per split, each fold gets the weight with the best mean in-budget recall on the other folds; the
held-out means are the cross-validated figure. The other per-dataset settings stay as configured, so
it is still an upper bound on what fresh questions would give.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys

from script_common import markdown, run_with

METRICS = ("in_budget_recall", "in_budget_gold_chars")


def per_question(weight: float) -> dict[str, tuple[float, float]]:
    """Each question's (in_budget_recall, in_budget_gold_chars) at this lexical weight."""
    result = run_with("system=mempp_plus", "dataset=orgmem", f"system.plus.lexical_weight={weight}")
    return {record["qid"]: tuple(record["metrics"][m] for m in METRICS) for record in result.records}


def cross_validated(scores: dict[float, dict[str, tuple[float, float]]], folds: int, seed: int):
    """(held-out mean of each metric, the weight chosen for each fold)."""
    qids = sorted(next(iter(scores.values())))
    random.Random(seed).shuffle(qids)
    parts = [qids[i::folds] for i in range(folds)]
    held: dict[str, tuple[float, float]] = {}
    chosen = []
    for i, test in enumerate(parts):
        train = [q for j, part in enumerate(parts) if j != i for q in part]
        # best mean in-budget recall on the training folds; a tie goes to the smaller weight
        best = max(scores, key=lambda w: (statistics.mean(scores[w][q][0] for q in train), -w))
        chosen.append(best)
        held.update({q: scores[best][q] for q in test})
    return tuple(statistics.mean(v[m] for v in held.values()) for m in range(len(METRICS))), chosen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--weights", nargs="+", type=float, default=[1, 2, 4, 8, 12, 16, 32])
    parser.add_argument("--folds", nargs="+", type=int, default=[2, 5])
    parser.add_argument("--splits", type=int, default=20, help="random splits per fold count")
    args = parser.parse_args()
    scores = {w: per_question(w) for w in args.weights}
    means = [[f"{weight:g}", *(f"{statistics.mean(v[m] for v in values.values()):.3f}" for m in range(len(METRICS)))]
             for weight, values in scores.items()]
    print(markdown(["lexical weight", *METRICS], means))
    rows = []
    for folds in args.folds:
        results = [cross_validated(scores, folds, seed) for seed in range(args.splits)]
        spans = [[r[0][m] for r in results] for m in range(len(METRICS))]
        picked = sorted({w for _, chosen in results for w in chosen})
        rows.append([folds, args.splits, *(f"{statistics.mean(v):.3f} ({min(v):.3f}-{max(v):.3f})" for v in spans),
                     ", ".join(f"{w:g}" for w in picked)])
    header = ["folds", "splits", *(f"held-out {m} (mean, min-max)" for m in METRICS), "weights chosen"]
    print("\n" + markdown(header, rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
