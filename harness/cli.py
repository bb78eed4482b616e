"""What run.py calls: build the run config, run it, print the summary; clear errors, no traceback."""

from __future__ import annotations

import logging
import sys
from typing import Any

from harness.config import ConfigError, RunConfig
from harness.models.llm_client import CacheMissError, MissingAPIKeyError
from loaders.schema import DatasetError
from memplusplus.openai_encoder import EmbeddingServiceError


def execute(raw_config: dict[str, Any], overrides: list[str] | None = None) -> int:
    """Run one configuration; returns the process exit code (0 ok, 2 bad input). ``overrides``:
    the command-line overrides, recorded with the run."""
    for noisy in ("sentence_transformers", "httpx", "httpx2", "openai"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    try:
        config = RunConfig.from_dict(raw_config)
        from harness.runner import run

        result = run(config, overrides)
    except (ConfigError, DatasetError, ValueError, MissingAPIKeyError, CacheMissError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except EmbeddingServiceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if result.estimates:
        print("\nDry run (estimate=true): nothing was sent.")
        for estimate in result.estimates:
            print(estimate.format())
        known = [e.usd for e in result.estimates]
        total = "n/a (a price is unknown)" if any(v is None for v in known) else f"${sum(known):.2f}"
        print(f"total for this configuration: {total}")
        return 0
    print()
    print(result.table)
    stats = result.stats
    print(
        f"\n{stats['questions']} questions in {stats['episodes']} episode(s); "
        f"retrieval cache hits {stats['retrieval_cache_hits']}; texts embedded {stats['embedded_texts']} "
        f"(cache hits {stats['embedding_cache_hits']}); {stats['seconds_total']:.1f} s"
    )
    for key in ("answer_spend", "judge_spend"):
        if key in stats:
            print(stats[key])
    if stats.get("judge_unparsed") or stats.get("judge_failures") or stats.get("answer_failures"):
        print(
            f"unparsable judge outputs {stats.get('judge_unparsed', 0)}, failed judge calls "
            f"{stats.get('judge_failures', 0)}, failed answers {stats.get('answer_failures', 0)} (left unscored)"
        )
    print(f"results: {result.paths.root}")
    if stats.get("qa_all_failed"):  # every answer or every judge call failed (errors printed above)
        return 1
    return 0
