"""Fetch, verify and cache the benchmarks' data files (loaders/fetch.py); exit 2 on failure.

    python scripts/fetch_data.py                 # all three, into $MEMPP_DATA_DIR, else <cache root>/data
    python scripts/fetch_data.py locomo --data-dir /somewhere
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from loaders.fetch import DATA_ENV, SourceUnreachable, benchmark_sources, fetch_benchmark  # noqa: E402
from memory_protocol import DatasetError, cache_root  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    names = list(benchmark_sources())
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("benchmark", nargs="?", default="all", choices=[*names, "all"])
    parser.add_argument("--data-dir", type=Path, help=f"where to put the files (default: ${DATA_ENV}, else "
                                                      f"{cache_root() / 'data'})")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    data_dir = (args.data_dir or Path(os.environ.get(DATA_ENV) or cache_root() / "data")).expanduser()
    for name in names if args.benchmark == "all" else [args.benchmark]:
        try:
            report = fetch_benchmark(name, data_dir, progress=not args.no_progress and sys.stderr.isatty())
        except (SourceUnreachable, DatasetError) as exc:
            print(f"error: {name}: {exc}", file=sys.stderr)
            return 2
        print(report.line())
    return 0


if __name__ == "__main__":
    sys.exit(main())
