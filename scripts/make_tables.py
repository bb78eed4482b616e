"""The paper's Tables 1, 2, 3, 4 and 7 from the results store, as Markdown and CSV.

    python scripts/make_tables.py                                  # outputs/runs -> results/tables
    python scripts/make_tables.py --runs outputs/runs --out results/tables --tables 1,4,7
    python scripts/make_tables.py --mode retrieval                 # ignore judge metrics

The logic lives in harness/tables.py; the paper's numbers come from results/paper/.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.reports.tables import DEFAULT_OUT_DIR, DEFAULT_PAPER_DIR, DEFAULT_RUNS_DIR, TABLES, build_tables, write_tables  # noqa: E402


def parse_tables(text: str) -> list[int]:
    try:
        numbers = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--tables takes numbers like 1,2,7, got {text!r}") from None
    unknown = sorted(set(numbers) - set(TABLES))
    if unknown or not numbers:
        raise argparse.ArgumentTypeError(f"--tables: choose from {','.join(map(str, TABLES))}, got {text!r}")
    return numbers


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=Path, default=DEFAULT_RUNS_DIR, help="results store (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT_DIR, help="output folder (default: %(default)s)")
    parser.add_argument("--tables", type=parse_tables, default=list(TABLES), help="e.g. 1,2,3,4,7 (default: all)")
    parser.add_argument("--paper", type=Path, default=DEFAULT_PAPER_DIR, help="published numbers (default: results/paper)")
    parser.add_argument("--mode", choices=["auto", "judge", "retrieval"], default="auto",
                        help="judge metrics if any run has them (auto), or force one kind")
    parser.add_argument("--quiet", action="store_true", help="do not print the tables")
    args = parser.parse_args(argv)
    if not args.runs.is_dir():
        print(f"error: no results store at {args.runs}", file=sys.stderr)
        return 2
    tables = build_tables(args.runs, args.paper, args.tables, mode=args.mode)
    written = write_tables(tables, args.out)
    if not args.quiet:
        for table in tables:
            print(table.markdown())
    print(f"wrote {len(written)} files to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
