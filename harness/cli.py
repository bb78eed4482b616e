"""What run.py calls: build the run config, run it, print the summary; clear errors, no traceback."""

from __future__ import annotations

import logging
import sys
from typing import Any

from harness.config import ConfigError, RunConfig
from loaders.schema import DatasetError


def execute(raw_config: dict[str, Any]) -> int:
    """Run one configuration; returns the process exit code (0 ok, 2 bad input)."""
    logging.getLogger("sentence_transformers").setLevel(logging.WARNING)
    try:
        config = RunConfig.from_dict(raw_config)
        from harness.runner import run

        result = run(config)
    except (ConfigError, DatasetError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print()
    print(result.table)
    stats = result.stats
    print(
        f"\n{stats['questions']} questions in {stats['episodes']} episode(s); "
        f"retrieval cache hits {stats['retrieval_cache_hits']}; texts embedded {stats['embedded_texts']} "
        f"(cache hits {stats['embedding_cache_hits']}); {stats['seconds_total']:.1f} s"
    )
    print(f"results: {result.paths.root}")
    return 0
