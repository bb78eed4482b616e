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

import script_common  # noqa: F401 - this checkout on sys.path
from harness.run_data import CliError
from harness.question_report import NotExplainable, explain, load_record, miss_report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path, help="a run folder (it holds records.jsonl)")
    parser.add_argument("qid", nargs="?", help="a question id as the records name it, e.g. conv-26/1")
    parser.add_argument("more", nargs="*", type=Path, help="with --misses: more run folders")
    parser.add_argument("--misses", action="store_true", help="the miss split per system and category")
    args = parser.parse_args(argv)
    if not args.misses and (args.qid is None or args.more):
        print("give one run folder and one question id (or --misses and run folders)", file=sys.stderr)
        return 2
    try:
        if args.misses:
            print("\n".join(miss_report([args.run_dir, *([Path(args.qid)] if args.qid else []), *args.more])))
        else:
            print("\n".join(explain(load_record(args.run_dir, args.qid))))
    except (CliError, NotExplainable) as exc:
        print(exc, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
