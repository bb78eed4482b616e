"""The judge-robustness table of judged runs of the same answers (a run and its rejudge copies):
each system's score under each judge, rank movement, Cohen's and Fleiss' kappa, and each judge's
leniency: its accept rate on locomo-audit's deliberately wrong answers (ap_v1, ap_v2; LoCoMo runs).

    python scripts/robustness.py outputs/runs/locomo/mempp__...  outputs/runs/locomo/mempp__...__rejudge-...
    python scripts/robustness.py RUN... estimate=true   # price grading them with every judge (sends nothing)
    python scripts/robustness.py RUN... leniency=true   # grade them (cached; a judge graded once is free)
"""

from __future__ import annotations

import sys
from pathlib import Path

import script_common  # noqa: F401 - this checkout on sys.path
from harness.run_data import CliError, run_script


def body(argv: list[str]) -> list[str]:
    from harness.robustness import Leniency, probed_leniency, published_leniency, robustness
    from harness.run_data import load_run
    from judges.aggregate import format_table
    from loaders import resolve_data_dir
    from memory_protocol import DatasetError

    folders = [Path(a) for a in argv if Path(a).is_dir()]  # a run folder's name may hold "="
    options = dict(a.partition("=")[::2] for a in argv if not Path(a).is_dir())
    if set(options) - {"leniency", "estimate"} or set(options.values()) - {"true", "false"}:
        bad = " ".join(a for a in argv if not Path(a).is_dir())
        raise CliError(f"expected run folders and leniency=true|false, estimate=true|false; got {bad}")
    send = "send" if options.get("leniency") == "true" else "cached"
    mode = "estimate" if options.get("estimate") == "true" else send
    runs = [load_run(folder) for folder in folders]
    if not runs or not all(run.answered for run in runs):
        raise CliError("every folder must be a judged run (an answerer and a judge)")
    leniency: dict[str, Leniency] = {}
    notes: list[str] = []
    try:
        data_dir = resolve_data_dir(None)
        leniency.update(published_leniency(data_dir))
        probed, notes = probed_leniency(runs, data_dir, mode)
        leniency.update(probed)
    except DatasetError as exc:  # no data directory, or no LoCoMo or probe files: what is known so far
        notes = [f"leniency of the runs' judges left out: {str(exc).splitlines()[0]}"]
    table, lines = robustness(runs, leniency)
    return [format_table(table, floatfmt=".1f"), *lines, *notes]


if __name__ == "__main__":
    sys.exit(run_script(__doc__, sys.argv[1:], body))
