"""Why one question of a run missed: where each gold document ranked in every leg and in the fused
list, whether the answerer's budget cut it, and the answer against the reference.

    python scripts/explain.py outputs/runs/locomo/mempp__... conv-26/1
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from harness.explain import NotExplainable, explain, load_record  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path, help="a run folder (it holds records.jsonl)")
    parser.add_argument("qid", help="a question id as the records name it, e.g. conv-26/1")
    args = parser.parse_args(argv)
    try:
        record = load_record(args.run_dir, args.qid)
    except NotExplainable as exc:
        print(exc, file=sys.stderr)
        return 2
    print("\n".join(explain(record)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
