"""Compare two runs on the same questions: the paired difference per category with its 95% interval,
its p-value (paired permutation; McNemar's exact test where scores are 0/1) and the minimum
detectable difference.

    python scripts/compare.py outputs/runs/locomo/mempp-... outputs/runs/locomo/rag_4096-... [metric=recall_any@10]

Options as ``key=value``: ``metric=`` (default: the judge metric when both runs were answered, else
recall_any@10), ``resamples=N``, ``seed=N``.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.cli_options import CliError, int_option, parse_options  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) < 2 or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    try:
        options = parse_options(argv[2:], ("metric", "resamples", "seed"))
        from harness.compare import compare_runs, lines
        from harness.run_data import load_run
        from harness.stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED

        a, b = load_run(Path(argv[0])), load_run(Path(argv[1]))
        metric, results = compare_runs(a, b, options.get("metric"), int_option(options, "resamples", DEFAULT_RESAMPLES),
                                       int_option(options, "seed", DEFAULT_SEED))
    except CliError as exc:
        print(exc, file=sys.stderr)
        return 2
    print("\n".join(lines(a, b, metric, results)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
