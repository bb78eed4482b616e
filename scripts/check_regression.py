"""CI regression on scores: recompute the golden retrieval metrics and fail on any change.

    python scripts/check_regression.py            # compare with results/golden/
    python scripts/check_regression.py --update   # rewrite the goldens (commit them with a reason)
    python scripts/check_regression.py --only orgmem/mempp

Each ``results/golden/<dataset>/<system>.json`` runs as run.py would with the overrides it records
and holds each category's metrics rounded to 6 decimals; any difference fails. A new pair is added
with ``--update --only dataset/system``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time

from script_common import ROOT, run_with

from harness.safe_write import atomic_write
from judges.metrics.registry import TOLERANCE, lookup

GOLDEN_DIR = ROOT / "results" / "golden"
# The overrides a dataset's goldens are computed with when first written (a golden file records its own).
# LongMemEval_S: a fixed subset (the first questions by id) keeps CI well inside its time budget.
DATASET_OVERRIDES = {"longmemeval_s": ["dataset.limit=5"]}


def golden_values(summary: dict) -> dict[str, dict[str, float | int | None]]:
    return {category: {key: None if value is None or (isinstance(value, float) and math.isnan(value))
                       else round(float(value), 6) for key, value in row.items()} for category, row in summary.items()}


def differences(expected: dict, actual: dict) -> list[str]:
    problems = []
    for category in sorted(set(expected) | set(actual)):
        exp_row, act_row = expected.get(category, {}), actual.get(category, {})
        for key in sorted(set(exp_row) | set(act_row)):
            a, b = exp_row.get(key), act_row.get(key)
            same = (a is None and b is None) or (a is not None and b is not None and abs(a - b) <= TOLERANCE)
            if not same:
                metric = lookup(key)
                way = "" if metric is None or a is None or b is None else \
                    " (better)" if (b > a) == metric.higher_is_better else " (worse)"
                problems.append(f"{category}.{key}: golden {a} -> now {b}{way}")
    return problems


def pairs(only: list[str]) -> list[str]:
    """``dataset/system`` pairs: every golden file's, or ``only`` (which may name a pair not yet golden)."""
    found = sorted(f"{path.parent.name}/{path.stem}" for path in GOLDEN_DIR.glob("*/*.json"))
    order = {"orgmem": 0, "locomo": 1, "longmemeval_s": 2}
    found.sort(key=lambda pair: (order.get(pair.split("/")[0], 9), pair))
    return [pair for pair in found if pair in only] + [pair for pair in only if pair not in found] if only else found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--update", action="store_true", help="write the goldens instead of comparing")
    parser.add_argument("--only", action="append", default=[], help="dataset/system pairs to run (repeatable)")
    args = parser.parse_args()
    failures: list[str] = []
    results_dir = tempfile.mkdtemp(prefix="mempp-regression-")
    for pair in pairs(args.only):
        dataset, system = pair.split("/")
        path = GOLDEN_DIR / dataset / f"{system}.json"
        extra = json.loads(path.read_text())["overrides"] if path.exists() else DATASET_OVERRIDES.get(dataset, [])
        started = time.perf_counter()
        result = run_with(f"dataset={dataset}", f"system={system}", f"store.results_dir={results_dir}", *extra)
        actual = golden_values(json.loads(result.summary.to_json(orient="index")))
        elapsed = time.perf_counter() - started
        if args.update:
            atomic_write(path, json.dumps({"overrides": extra, "summary": actual}, indent=1, sort_keys=True) + "\n")
            print(f"wrote {path.relative_to(ROOT)} ({elapsed:.1f} s)")
            continue
        if not path.exists():
            failures.append(f"{pair}: no golden file {path.relative_to(ROOT)} (run with --update)")
            continue
        problems = differences(json.loads(path.read_text())["summary"], actual)
        status = "ok" if not problems else f"CHANGED ({len(problems)} values)"
        print(f"{pair:32s} {status:20s} {elapsed:6.1f} s", flush=True)
        failures += [f"{pair}: {p}" for p in problems]
    if failures:
        print("\nScore regression: the following values differ from results/golden/:")
        print("\n".join(f"  {line}" for line in failures))
        return 1
    print("\nregression check: all goldens match" if not args.update else "")
    return 0


if __name__ == "__main__":
    sys.exit(main())
