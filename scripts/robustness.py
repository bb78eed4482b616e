"""The judge-robustness table of judged runs of the same answers (a run and its rejudge copies):
each system's score under each judge, rank movement, Cohen's and Fleiss' kappa, leniency.

    python scripts/robustness.py outputs/runs/locomo/mempp__...  outputs/runs/locomo/mempp__...__rejudge-...
"""

from __future__ import annotations

import sys
from pathlib import Path

import script_common  # noqa: F401 - this checkout on sys.path
from harness.cli_options import CliError, run_script


def body(argv: list[str]) -> list[str]:
    from harness.robustness import published_leniency, robustness
    from harness.run_data import load_run
    from judges.aggregate import format_table
    from loaders import resolve_data_dir
    from memory_protocol import DatasetError

    runs = [load_run(Path(a)) for a in argv]
    if not all(run.answered for run in runs):
        raise CliError("every folder must be a judged run (an answerer and a judge)")
    try:
        leniency = published_leniency(resolve_data_dir(None))
    except DatasetError:  # no data directory: the published figures are left out
        leniency = {}
    table, lines = robustness(runs, leniency)
    return [format_table(table, floatfmt=".1f"), *lines]


if __name__ == "__main__":
    sys.exit(run_script(__doc__, sys.argv[1:], body))
