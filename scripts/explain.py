"""Why one question of a run missed: where each gold document ranked in every leg and in the fused
list, whether the answerer's budget cut it, the answer against the reference, and where the miss
came from (retrieval, budget, synthesis, or a wrong gold).

    python scripts/explain.py outputs/runs/locomo/mempp__... conv-26/1
    python scripts/explain.py --misses RUN_DIR [RUN_DIR ...]    # the split per system and category
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from harness.explain import NotExplainable, explain, load_record  # noqa: E402


def misses(run_dirs: list[Path]) -> int:
    from harness.cli_options import CliError
    from harness.misses_report import miss_report

    try:
        print("\n".join(miss_report(run_dirs)))
    except CliError as exc:
        print(exc, file=sys.stderr)
        return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path, help="a run folder (it holds records.jsonl)")
    parser.add_argument("qid", nargs="?", help="a question id as the records name it, e.g. conv-26/1")
    parser.add_argument("more", nargs="*", type=Path, help="with --misses: more run folders")
    parser.add_argument("--misses", action="store_true", help="the miss split per system and category")
    args = parser.parse_args(argv)
    if args.misses:
        return misses([args.run_dir, *([Path(args.qid)] if args.qid else []), *args.more])
    if args.qid is None or args.more:
        print("give one run folder and one question id (or --misses and run folders)", file=sys.stderr)
        return 2
    try:
        record = load_record(args.run_dir, args.qid)
    except NotExplainable as exc:
        print(exc, file=sys.stderr)
        return 2
    print("\n".join(explain(record)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
