"""The paper's Tables 1, 2, 3, 4 and 7 from the results store, as Markdown and CSV.

    python scripts/make_tables.py                                  # outputs/runs -> outputs/tables (untracked)
    python scripts/make_tables.py --runs outputs/runs --out outputs/tables --tables 1,4,7
    python scripts/make_tables.py --mode retrieval                 # ignore judge metrics
    python scripts/make_tables.py --include-limited --allow encoder   # also partial runs, any encoder
    python scripts/make_tables.py --estimate                       # price the runs that would fill the tables

Each table shows the runs its preset (configs/experiment/table<N>.yaml, k_sweep.yaml) asks for, matched
by resolved configuration; every other run is named in its notes. The console shows at most 120
characters a line; the files keep every column. The logic lives in harness/reports/.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.reports.format import MISSING  # noqa: E402
from harness.reports.selection import Options  # noqa: E402
from harness.safe_write import DiskFullError, HalfWrittenRun  # noqa: E402
from harness.reports.paper import DEFAULT_PAPER_DIR  # noqa: E402
from harness.reports.store import DEFAULT_RUNS_DIR  # noqa: E402
from harness.reports.tables import DEFAULT_OUT_DIR, TABLES, build_tables, write_tables  # noqa: E402


def parse_tables(text: str) -> list[int]:
    try:
        numbers = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--tables takes numbers like 1,2,7, got {text!r}") from None
    unknown = sorted(set(numbers) - set(TABLES))
    if unknown or not numbers:
        raise argparse.ArgumentTypeError(f"--tables: choose from {','.join(map(str, TABLES))}, got {text!r}")
    return numbers


def add_selection_arguments(parser: argparse.ArgumentParser) -> None:
    """The results store, the paper's numbers, the mode and which runs a table may show."""
    parser.add_argument("--runs", type=Path, default=DEFAULT_RUNS_DIR, help="results store (default: %(default)s)")
    parser.add_argument("--paper", type=Path, default=DEFAULT_PAPER_DIR, help="published numbers (default: results/paper)")
    parser.add_argument("--mode", choices=["auto", "judge", "retrieval"], default="auto",
                        help="judged rows where runs have judge metrics, retrieval rows otherwise (auto), or one kind")
    parser.add_argument("--include-limited", action="store_true", help="also runs with dataset.limit / categories")
    parser.add_argument("--include-failed", action="store_true", help="also runs whose answers all failed")
    parser.add_argument("--include-plumbing", action="store_true",
                        help="also runs with a local model or a non-provider endpoint")
    parser.add_argument("--allow", action="append", default=[], metavar="KEY",
                        help="tolerate differences from the preset under KEY (e.g. encoder, system.params.conjunctive)")
    parser.add_argument("--newest", action="store_true",
                        help="ignore the presets: newest run per (dataset, system, k, answerer), a quick look")


def selection_options(args: argparse.Namespace) -> Options:
    return Options(args.include_limited, args.include_failed, args.include_plumbing, tuple(args.allow))


def rows_from(table) -> str:
    """One line per table: which run folder each of its rows comes from, wrapped at 120 characters."""
    fed = []
    for frame in (table.frame, table.retrieval):
        if frame is None or "run" not in frame.columns:
            continue
        name = [c for c in ("system", "answerer", "k") if c in frame.columns]
        fed += [f"{' '.join(str(r[c]) for c in name)} <- {r['run']}"
                for _, r in frame.drop_duplicates(name[:2] + ["run"]).iterrows() if r["run"] != MISSING]
    text = f"{table.key} rows from: " + ("; ".join(dict.fromkeys(fed)) if fed else "no runs")
    return "\n".join(textwrap.wrap(text, 120, subsequent_indent="    ", break_long_words=False, break_on_hyphens=False))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT_DIR, help="output folder (default: %(default)s)")
    parser.add_argument("--tables", type=parse_tables, default=list(TABLES), help="e.g. 1,2,3,4,7 (default: all)")
    parser.add_argument("--quiet", action="store_true", help="do not print the tables")
    parser.add_argument("--print", dest="print_mode", choices=["console", "full"], default="console",
                        help="console: at most 120 characters a line (default); full: the Markdown as written")
    parser.add_argument("--estimate", action="store_true",
                        help="price the runs that would fill the empty judged cells: their dry runs (estimate=true) "
                             "in-process (seconds a job, a minute or more for Full Context: Table 2 took 4 min here); "
                             "without it the tables print the estimate command")
    add_selection_arguments(parser)
    args = parser.parse_args(argv)
    if not args.runs.is_dir():
        print(f"error: no results store at {args.runs}", file=sys.stderr)
        return 2
    jobs = None
    if not args.newest:
        from harness.reports.presets import table_jobs

        jobs = {number: table_jobs(number) for number in args.tables}
    try:
        tables = build_tables(args.runs, args.paper, args.tables, mode=args.mode, jobs=jobs,
                              options=selection_options(args), estimate=args.estimate and jobs is not None,
                              progress=args.estimate)
    except HalfWrittenRun as exc:  # never a table from a folder that mixes two runs' files
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        written = write_tables(tables, args.out)
    except DiskFullError as exc:  # nothing was replaced: the previous tables stay whole
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not args.quiet:
        for table in tables:
            print(table.markdown() if args.print_mode == "full" else table.console(where=str(args.out / f"{table.key}.md")))
    for table in tables:
        print(rows_from(table))
    print(f"wrote {len(written)} files to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
