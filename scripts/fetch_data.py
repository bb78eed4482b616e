"""Fetch, verify and cache the benchmarks' data files.

    python scripts/fetch_data.py                 # all three
    python scripts/fetch_data.py orgmem          # or locomo, longmemeval_s
    python scripts/fetch_data.py locomo --data-dir /somewhere

Files go to $MEMPP_DATA_DIR when set, else ~/.cache/mempp/data (the last place the loaders look).
Files already there are hash-checked and kept; missing or corrupted ones are fetched. GitHub files
come from $MEMPP_DATA_MIRROR when set (same <owner>/<repo>/<commit>/<path> layout), the hub file
through huggingface_hub (HF_ENDPOINT, HF_HOME). One summary line per benchmark; exit 2 on failure.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from loaders.datadir import ENV_VAR, user_data_dir  # noqa: E402
from loaders.download import SourceUnreachable  # noqa: E402
from loaders.fetch import fetch_benchmark  # noqa: E402
from memory_protocol import DatasetError  # noqa: E402
from loaders.sources import benchmark_sources  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    names = list(benchmark_sources())
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("benchmark", nargs="?", default="all", choices=[*names, "all"])
    parser.add_argument("--data-dir", type=Path, default=None,
                        help=f"where to put the files (default: ${ENV_VAR}, else {user_data_dir()})")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    data_dir = (args.data_dir or Path(os.environ.get(ENV_VAR) or user_data_dir())).expanduser()
    chosen = names if args.benchmark == "all" else [args.benchmark]
    for name in chosen:
        try:
            report = fetch_benchmark(name, data_dir, progress=not args.no_progress and sys.stderr.isatty())
        except (SourceUnreachable, DatasetError) as exc:
            print(f"error: {name}: {exc}", file=sys.stderr)
            return 2
        print(report.line())
    return 0


if __name__ == "__main__":
    sys.exit(main())
