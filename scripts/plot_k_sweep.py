"""Figure 4: Mem++'s score (or, without judge metrics, its recall) against k, with the tokens read.

    python scripts/plot_k_sweep.py                                   # -> outputs/tables/figure4_k_sweep.png
    python scripts/plot_k_sweep.py --runs outputs/runs --dataset orgmem --out fig.png

Needs matplotlib. The data are Table 7's (harness/reports/ksweep.py), from the runs its preset asks for.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import script_common  # noqa: F401 - this checkout on sys.path
from harness.reports.selection import select_runs
from harness.reports.ksweep import plot_k_sweep
from harness.reports.paper import load_paper
from harness.reports.store import latest_runs, scan_runs
from harness.reports.tables import DEFAULT_OUT_DIR
from make_tables import add_selection_arguments, selection_options


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT_DIR / "figure4_k_sweep.png", help="PNG path (default: %(default)s)")
    parser.add_argument("--dataset", default="orgmem", help="dataset of the sweep (default: %(default)s)")
    add_selection_arguments(parser)
    args = parser.parse_args(argv)
    if not args.runs.is_dir():
        print(f"error: no results store at {args.runs}", file=sys.stderr)
        return 2
    try:
        tidy, differences = scan_runs(args.runs), None
    except ValueError as exc:  # a half-written run folder
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.newest or args.dataset != "orgmem":
        tidy = latest_runs(tidy)
    else:  # the runs Table 7's preset asks for (configs/experiment/k_sweep.yaml)
        from harness.reports.presets import table_jobs

        chosen = select_runs(tidy, table_jobs(7), selection_options(args))
        tidy, differences = chosen.tidy, chosen.differences
        for note in chosen.notes:
            print(note)
    try:
        path = plot_k_sweep(tidy, load_paper(args.paper), args.out, args.dataset, args.mode, differences)
    except (RuntimeError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
