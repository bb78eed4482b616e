"""results/LONGMEMEVAL_LEADERBOARD.md: our systems beside the published MiniLM-only, no-LLM figures.

    python scripts/lme_leaderboard.py                          # run folders under outputs/runs
    python scripts/lme_leaderboard.py --run mempp_plus=outputs/runs/longmemeval_s/<folder>

Our rows come from each system's full LongMemEval_S run folder, else from results/PLUS.md (the page
says which); the published rows from results/paper/longmemeval_s_published.csv.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from script_common import ROOT, git_commit

from harness.reports.lme_figures import OurRow, our_rows
from harness.reports.lme_leaderboard import PublishedRow, page, read_published, rule_sensitivity
from harness.run_data import CliError
from harness.safe_write import atomic_write

PUBLISHED = ROOT / "results" / "paper" / "longmemeval_s_published.csv"
OUT = ROOT / "results" / "LONGMEMEVAL_LEADERBOARD.md"


def console(ours: list[OurRow], published: list[PublishedRow]) -> list[str]:
    """What the script prints: our rows and each published row with its source URL (<= 120 characters)."""
    lines = ["ours (session recall_any@5, turn recall_all@10; all scored | held out):"]
    for row in ours:
        held = row.held_out
        part = f"{held.session_any5:.3f} {held.turn_all10:.3f} (n={held.n_scored})" if held else "n/a"
        lines.append(f"  {row.label:12s} {row.every.session_any5:.3f} {row.every.turn_all10:.3f} | {part}")
    lines.append("published (session recall_any@5):")
    for row in sorted(published, key=lambda r: -r.value):
        lines.append(f"  {row.system:20s} {row.figure:13s} {row.value:.3f} (n={row.n_questions})")
        lines.append(f"    {row.url}"[:120])
    return lines


def parse_runs(items: list[str]) -> dict[str, Path]:
    runs = {}
    for item in items:
        system, sep, folder = item.partition("=")
        if not sep or not system or not folder:
            raise SystemExit(f"--run takes SYSTEM=FOLDER, got {item!r}")
        runs[system] = Path(folder)
    return runs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs-dir", default=str(ROOT / "outputs" / "runs"))
    parser.add_argument("--run", action="append", default=[], metavar="SYSTEM=FOLDER",
                        help="a run folder to read for SYSTEM (default: the newest full default run under --runs-dir)")
    parser.add_argument("--plus-page", default=str(ROOT / "results" / "PLUS.md"),
                        help="where a system without a run folder is read from")
    parser.add_argument("--published", default=str(PUBLISHED))
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    try:
        ours = our_rows(Path(args.runs_dir), Path(args.plus_page), explicit=parse_runs(args.run))
        sensitivity = rule_sensitivity(Path(args.runs_dir))
    except CliError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    published = read_published(Path(args.published))
    atomic_write(args.out, page(ours, published, git_commit(), sensitivity))
    for line in console(ours, published):
        print(line)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
