"""Two runs on the same questions: per category the paired difference with its 95% interval, its
p-value (paired permutation; McNemar's exact where scores are 0/1) and the minimum detectable difference.

    python scripts/compare.py outputs/runs/locomo/mempp-... outputs/runs/locomo/rag_4096-... [metric=recall_any@10]

Options: ``metric=`` (default: the judge metric of two answered runs, else recall_any@10), ``resamples=N``, ``seed=N``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import script_common  # noqa: F401 - this checkout on sys.path
from harness.run_data import int_option, parse_options, run_script


def body(argv: list[str]) -> list[str]:
    from harness.compare import compare_runs, lines
    from harness.run_data import load_run
    from harness.stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED

    options = parse_options(argv[2:], ("metric", "resamples", "seed"))
    a, b = load_run(Path(argv[0])), load_run(Path(argv[1]))
    metric, results = compare_runs(a, b, options.get("metric"), int_option(options, "resamples", DEFAULT_RESAMPLES),
                                   int_option(options, "seed", DEFAULT_SEED))
    return lines(a, b, metric, results)


if __name__ == "__main__":
    sys.exit(run_script(__doc__, sys.argv[1:], body, min_args=2))
