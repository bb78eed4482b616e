"""What run.py calls: build the run config, run it, print the summary; errors in one line, no traceback.
Library log lines go to Hydra's log file only, progress bars to a terminal only."""

from __future__ import annotations

import logging
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

from memory_protocol import ConfigError, DatasetError, cache_root

from harness.config import BATCH_STATUS as STATUS
from model_clients.kvstore import LLM_REPLIES
from harness.config import RunConfig
from judges.aggregate import CONSOLE_WIDTH
from harness.stage_log import enable_when_not_a_terminal
from harness.config import encoder_label
from harness.errors import RunInterrupted
from harness.safe_write import DiskFullError, as_disk_full
from harness.systems import entry_for
from harness.sweep_summary import JobPointer, write_pointer
from model_clients.batch.runner import BatchError
from model_clients.call_counts import format_model_calls
from model_clients.llm_client import CacheMissError, CallsInterrupted, MissingAPIKeyError
from model_clients.model_listing import UnknownModelError
from memplusplus.openai_encoder import EmbeddingServiceError

MAX_MESSAGE_CHARS = 1000  # an error quoting a huge value (a 5 MB field) is cut to this


def quiet_console() -> None:
    """Library loggers and console handlers to WARNING on stderr (the log file keeps INFO)."""
    for noisy in ("sentence_transformers", "httpx", "httpx2", "openai", "bm25s", "transformers"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler):
            if handler.stream is sys.stdout:
                handler.setStream(sys.stderr)
            handler.setLevel(logging.WARNING)


def print_wrapped(text: str, width: int = CONSOLE_WIDTH) -> None:
    """Each line wrapped at the console table's width, continuations indented."""
    for line in text.split("\n"):
        print("\n".join(textwrap.wrap(line, width=width, subsequent_indent="  ", break_long_words=False,
                                       break_on_hyphens=False)) if line else "")


def one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    if len(text) > MAX_MESSAGE_CHARS:
        text = f"{text[:MAX_MESSAGE_CHARS]}... ({len(text):,} characters)"
    return f"error: {text}"


def execute(raw_config: dict[str, Any], overrides: list[str] | None = None, pointer: str | Path | None = None) -> int:
    """Run one configuration; the exit code is 0 ok, 1 service failure, 2 bad input or a full disk,
    130 Ctrl-C. ``pointer``: where the job's run folder and dry-run figures go for the sweep summary."""
    job = JobPointer(list(overrides or []))
    code = _execute(raw_config, overrides, job)
    if pointer is not None:
        job.exit_code = code
        try:
            write_pointer(pointer, job)
        except DiskFullError as exc:
            print(one_line(exc), file=sys.stderr)
            code = code or 2
    return code


def _print_estimate(result: Any, config: RunConfig, job: JobPointer) -> None:
    """Each estimate and the total (with some calls by batch, beside it the dollars all live)."""
    print("\nDry run (estimate=true): nothing was sent.")
    print(f"{config.system.name} on {config.dataset.name}: encoder "
          f"{encoder_label(config.encoder.backend, config.encoder.params)}")
    priced = ([result.embedding_estimate] if result.embedding_estimate is not None else []) + result.estimates
    for estimate in priced:
        print_wrapped(estimate.format())
    known = [e.usd for e in priced]
    by_batch = any(getattr(e, "batch", False) for e in priced)
    live_each = [e.live_usd if getattr(e, "batch", False) else e.usd for e in priced]
    live = sum(live_each) if by_batch and None not in live_each else None
    if None in known:
        total = "n/a (a price is unknown)"
    elif not by_batch:
        total = f"${sum(known):.2f}"
    else:
        total = f"${sum(known):.2f} with batch=true (batch tier where set); all live: " + (
            "n/a" if live is None else f"${live:.2f}")
    print(f"total for this configuration: {total}")
    job.estimate_calls = sum(e.calls for e in result.estimates)
    job.estimate_usd = sum(v for v in known if v is not None)
    job.estimate_priced = None not in known
    job.estimate_live_usd = live


def _print_summary(result: Any, config: RunConfig) -> None:
    print()
    print(result.table if config.print_mode == "full" or not result.console else result.console)
    stats = result.stats
    lines = [f"\n{stats['questions']} questions in {stats['episodes']} episode(s); "
             f"retrieval cache hits {stats['retrieval_cache_hits']}; texts embedded {stats['embedded_texts']} "
             f"(cache hits {stats['embedding_cache_hits']}); {stats['seconds_total']:.1f} s"]
    if stats.get("model_calls"):
        lines.append(format_model_calls(stats["model_calls"], stats["retrieval_cache_hits"]))
    lines += [stats[key]["summary"] for key in ("answer_spend", "judge_spend") if key in stats]
    if stats.get("judge_unparsed") or stats.get("judge_failures") or stats.get("answer_failures"):
        lines.append(f"unparsable judge outputs {stats.get('judge_unparsed', 0)}, failed judge calls "
                     f"{stats.get('judge_failures', 0)}, failed answers {stats.get('answer_failures', 0)} (left unscored)")
    lines.append(silent_legs_note(result.records, config.system.params if entry_for(config.system).leg_note else {}))
    for line in lines:
        if line:
            print_wrapped(line)
    print(f"results: {result.paths.root}")


def enabled_legs(params: dict[str, Any]) -> list[str]:
    """Mem++'s legs that take part in fusion (listed and weighted above 0), in config order."""
    weights = params.get("weights") or {}
    return [leg for leg in params.get("legs") or [] if float(weights.get(leg, 1.0)) > 0]


def silent_legs(records: list[dict[str, Any]], legs: list[str]) -> list[str]:
    """The legs of ``legs`` that no hit of any record holds a rank in (empty when no records)."""
    if not records:
        return []
    seen = {leg for record in records for hit in record.get("hits") or [] for leg in hit.get("leg_ranks") or {}}
    return [leg for leg in legs if leg not in seen]


def silent_legs_note(records: list[dict[str, Any]], params: dict[str, Any]) -> str | None:
    """A console line when an enabled Mem++ leg placed no row among any question's hits (it matched
    nothing, or only rows fused below the top k): an ablation dropping it prints the same table."""
    silent = silent_legs(records, enabled_legs(params))
    if not silent:
        return None
    names = " and ".join(f"the {leg} leg" for leg in silent)
    return (f"note: {names} placed no row among the hits of any of the {len(records)} question(s) "
            f"({'it' if len(silent) == 1 else 'each'} matched nothing, or only rows fused below the top k)")


BAD_INPUT = (ConfigError, DatasetError, ValueError, MissingAPIKeyError, CacheMissError, UnknownModelError)  # exit 2
SERVICE_FAILURE = (EmbeddingServiceError, BatchError)  # exit 1


def _execute(raw_config: dict[str, Any], overrides: list[str] | None, job: JobPointer) -> int:
    quiet_console()
    raw_config = dict(raw_config)
    # redirected: no progress bars in the log, plain stage and progress lines on stdout instead
    enable_when_not_a_terminal(bool(raw_config.get("progress", True)))
    if not sys.stderr.isatty():
        raw_config["progress"] = False
    if raw_config.get("batch") == STATUS:  # list the pending batches of the cache; run nothing
        from model_clients.batch.journal import status_report

        store = raw_config.get("store") or {}
        print_wrapped(status_report(Path(os.path.expanduser(str(store.get("cache_dir") or cache_root()))) / LLM_REPLIES))
        return 0
    try:
        config = RunConfig.from_dict(raw_config)
        from harness.runner import run

        result = run(config, overrides)
    except (RunInterrupted, CallsInterrupted) as exc:
        print(f"\n{exc.message}", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("\ninterrupted; re-run to resume (every finished step is cached)", file=sys.stderr)
        return 130
    except (*BAD_INPUT, *SERVICE_FAILURE, OSError) as exc:
        # a full disk is one line naming the file (nothing half-written is left); any other OSError is a bug
        shown = as_disk_full(exc) if isinstance(exc, OSError) else exc
        if shown is None:
            raise
        print(one_line(shown), file=sys.stderr)
        return 1 if isinstance(exc, SERVICE_FAILURE) else 2
    if result.estimates or result.embedding_estimate is not None:
        _print_estimate(result, config, job)
        return 0
    _print_summary(result, config)
    job.run_folder = str(result.paths.root)
    return 1 if result.stats.get("qa_all_failed") else 0  # every answer or judge call failed (printed above)
