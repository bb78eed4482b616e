"""Compare two runs' hit lists question by question (e.g. the memory and postgres backends): the
share of identical top-N lists and of equal top-N sets, and both runs' overall metrics.

    python scripts/compare_hits.py outputs/runs/orgmem/A outputs/runs/orgmem/B --top 10
"""

from __future__ import annotations

import argparse
from pathlib import Path

import script_common  # noqa: F401 - this checkout on sys.path
from harness.run_data import CliError, load_run


def load(run: Path) -> dict[tuple[str, str], list[str]]:
    """Each question's hit list, from a whole run folder (run_data.load_run reads it)."""
    try:
        records = load_run(run, sealed=("records.jsonl", "summary.csv")).records
    except CliError as exc:
        raise SystemExit(f"error: {exc}") from None
    return {(record["episode"], record["qid"]): [hit["doc_id"] for hit in record["hits"]] for record in records}


def overall(run: Path) -> dict[str, float]:
    import pandas as pd

    summary = pd.read_csv(run / "summary.csv", index_col=0)
    return {k: float(v) for k, v in summary.loc["overall"].items() if k not in ("n", "n_scored")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("first", type=Path)
    parser.add_argument("second", type=Path)
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args()
    a, b = load(args.first), load(args.second)
    if a.keys() != b.keys():
        raise SystemExit("the two runs did not answer the same questions")
    same_order = sum(a[key][: args.top] == b[key][: args.top] for key in a)
    same_set = sum(set(a[key][: args.top]) == set(b[key][: args.top]) for key in a)
    print(f"questions: {len(a)}")
    print(f"identical top-{args.top} lists: {same_order}/{len(a)} = {same_order / len(a):.3f}")
    print(f"same top-{args.top} sets:       {same_set}/{len(a)} = {same_set / len(a):.3f}")
    first, second = overall(args.first), overall(args.second)
    for key in first:
        print(f"{key:22s} {first[key]:.4f} {second.get(key, float('nan')):.4f} diff {second.get(key, 0) - first[key]:+.4f}")


if __name__ == "__main__":
    main()
