"""One self-contained HTML report over one or more run folders (inline CSS, JS and SVG; no network).

    python scripts/report.py outputs/runs/locomo/mempp__...            # -> outputs/reports/<run>.html
    python scripts/report.py RUN_A RUN_B RUN_C --out k_sweep.html       # side by side; a k sweep or a
                                                                        # leg ablation is drawn when the
                                                                        # runs differ only in that
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import script_common  # noqa: F401 - this checkout on sys.path
from harness.reports.html import write_report
from harness.run_data import CliError

DEFAULT_DIR = Path("outputs/reports")


def default_name(run_dirs: list[Path]) -> str:
    """The run folder's name, or the first one's plus the number of runs; reduced to a safe file name."""
    name = run_dirs[0].resolve().name if len(run_dirs) == 1 else f"{run_dirs[0].resolve().name}+{len(run_dirs) - 1}"
    return re.sub(r"[^A-Za-z0-9._+=,-]+", "_", name)[:150]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dirs", nargs="+", type=Path, metavar="RUN_DIR", help="run folders (records.jsonl, metrics.json, config.json)")
    parser.add_argument("--out", type=Path, help=f"the HTML file (default: {DEFAULT_DIR}/<name>.html)")
    parser.add_argument("--title", help="the page title")
    args = parser.parse_args(argv)
    out = args.out or DEFAULT_DIR / f"{default_name(args.run_dirs)}.html"
    try:
        path = write_report(args.run_dirs, out, args.title)
    except (CliError, FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
