"""Score a published per-question LoCoMo results file as our runs are scored.

    python scripts/rescore.py ../shared/data/published/audit/gpt-4o-mini-memos.eval_results.json
    python scripts/rescore.py FILE dataset.errata=locomo-audit

Formats: locomo-audit's eval_results.json, mem0's evals.py results, Zep's grades file. Options as
``key=value``: ``dataset.errata=locomo-audit`` (the score on the sound golds and the ceiling beside the
raw score), ``dataset.data_dir=DIR`` (where locomo10.json and published/audit/errors.json are),
``errata_file=PATH``, ``resamples=N``, ``seed=N``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import script_common  # noqa: F401 - this checkout on sys.path
from harness.run_data import parse_options, run_script

KEYS = ("dataset.errata", "dataset.data_dir", "errata_file", "resamples", "seed")


def body(argv: list[str]) -> list[str]:
    from harness.rescore_report import rescore_file

    return rescore_file(Path(argv[0]), parse_options(argv[1:], KEYS))


if __name__ == "__main__":
    sys.exit(run_script(__doc__, sys.argv[1:], body))
