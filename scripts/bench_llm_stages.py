"""How close the answer and judge stages come to an endpoint's latency limit (issue 30): a local server
answers every request after ``--latency`` s; the harness answers and judges OrgMemBench from an empty
LLM cache, then a plain asyncio client sends the same bodies with as many in flight; both times and
their ratio are printed (fixture replies: the times are the measure, not the scores).

    PYTHONPATH=$PWD python scripts/bench_llm_stages.py [--latency 0.5] [--limit N] [--in-flight N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from script_common import run_config  # this checkout on sys.path, after a PYTHONPATH naming another

from tests.fake_openai_server import FakeOpenAIServer
from tests.qa_replies import fixture_reply

KEY_ENV = "MEMPP_BENCH_KEY"


def _harness_run(overrides: list[str]) -> tuple[float, dict[str, Any]]:
    from harness.runner import run

    started = time.perf_counter()
    result = run(run_config(*overrides))
    return time.perf_counter() - started, result.stats


def _role_overrides(role: str, config: str, model: str, base_url: str) -> list[str]:
    return [f"{role}={config}", f"{role}.model={model}", f"{role}.base_url={base_url}", f"{role}.api_key_env={KEY_ENV}"]


def run_harness(server: FakeOpenAIServer, work: Path, args: argparse.Namespace) -> tuple[float, dict[str, Any]]:
    """The answer and judge stages' seconds (the run's stats, or for a harness that records none, the
    answered run less a retrieval-only run on the same warm cache)."""
    common = ["progress=false", f"system={args.system}", f"dataset.limit={args.limit}", f"store.cache_dir={work / 'cache'}",
              f"store.results_dir={work / 'runs'}"]
    _harness_run(common)  # warms the retrieval cache (not timed)
    retrieval_s, _ = _harness_run(common)
    llm = work / "cache" / "llm.sqlite"
    if llm.exists():
        llm.unlink()
    answered = common + _role_overrides("answerer", args.answerer, "bench-answerer", server.base_url) + \
        _role_overrides("judge", args.judge, "bench-judge", server.base_url)
    total_s, stats = _harness_run(answered)
    seconds = stats.get("seconds_answer_and_judge")
    return (float(seconds) if seconds is not None else total_s - retrieval_s), stats


async def _reference(base_url: str, bodies: list[dict[str, Any]], in_flight: int) -> float:
    """Every body sent by one asyncio client, at most ``in_flight`` at a time; the seconds taken."""
    import openai

    client = openai.AsyncOpenAI(base_url=base_url, api_key="EMPTY", max_retries=0, timeout=120)
    gate = asyncio.Semaphore(in_flight)

    async def one(body: dict[str, Any]) -> None:
        async with gate:
            await client.chat.completions.create(**body)

    started = time.perf_counter()
    await asyncio.gather(*(one(body) for body in bodies))
    seconds = time.perf_counter() - started
    await client.close()
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for flag, kind, default in (("--latency", float, 0.5), ("--limit", int, 73), ("--system", str, "bm25"),
                                ("--answerer", str, "openai_compatible"), ("--judge", str, "openai_compatible"),
                                ("--in-flight", int, None)):
        parser.add_argument(flag, type=kind, default=default, help=f"default: {default}")
    args = parser.parse_args(argv)
    if args.latency < 0 or args.limit < 1 or (args.in_flight is not None and args.in_flight < 1):
        print("error: --latency must be >= 0, --limit and --in-flight >= 1", file=sys.stderr)
        return 2
    os.environ.setdefault(KEY_ENV, "sk-bench-not-a-real-key")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import harness

    print(f"harness: {Path(harness.__file__).parent}")
    server = FakeOpenAIServer(answer_fn=fixture_reply, answer_delay_s=lambda body: args.latency).start()
    work = Path(tempfile.mkdtemp(prefix="bench_llm_stages_"))
    try:
        harness_s, stats = run_harness(server, work, args)
        bodies = [request.body for request in server.requests]
        kept = stats.get("in_flight", {}).get("answers", {}).get("ceiling")
        in_flight = args.in_flight or kept
        if in_flight is None:
            print("error: this harness does not record its requests in flight; give --in-flight", file=sys.stderr)
            return 2
        reference_s = asyncio.run(_reference(server.base_url, bodies, in_flight))
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    answers = sum(1 for body in bodies if body.get("model") == "bench-answerer")
    print(f"{answers} answers and {len(bodies) - answers} judge calls at {args.latency} s latency, "
          f"{in_flight} in flight for the reference")
    print(f"harness (answer + judge stages): {harness_s:.2f} s")
    print(f"reference asyncio client:        {reference_s:.2f} s")
    print(f"ratio: {harness_s / reference_s:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
