"""Benchmarks that print figures: whole-process time cold and warm, peak memory, encoder speed.

    python scripts/bench.py                          # all three datasets, Mem++
    python scripts/bench.py --dataset orgmem --system bm25
    python scripts/bench.py --dataset longmemeval_s --limit 20
    python scripts/bench.py --encoder-only --sample 1000

Cold = a fresh, empty cache directory; warm = the same command again on that cache. Peak memory
is the maximum resident set size of the run.py process.
"""

from __future__ import annotations

import argparse
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def timed_run(args: list[str]) -> tuple[float, float]:
    """Seconds and peak RSS (MiB) of one ``python run.py ...`` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "run.py", *args], cwd=ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"run.py {' '.join(args)} failed:\n{proc.stderr[-2000:]}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return elapsed, max(peak, before) / 1024.0


def bench_run(dataset: str, system: str, limit: int | None) -> None:
    with tempfile.TemporaryDirectory(prefix="mempp-bench-") as cache:
        args = [f"dataset={dataset}", f"system={system}", "progress=false", f"store.cache_dir={cache}",
                f"store.results_dir={cache}/runs"]
        if limit:
            args.append(f"dataset.limit={limit}")
        cold, cold_mem = timed_run(args)
        warm, warm_mem = timed_run(args)
    scope = f"limit={limit}" if limit else "full"
    print(f"{dataset:14s} {system:14s} {scope:9s} cold {cold:8.1f} s  warm {warm:6.1f} s  peak RSS {max(cold_mem, warm_mem):7.0f} MiB", flush=True)


def bench_encoder(sample: int) -> None:
    from loaders import load_dataset
    from memplusplus.encoder import Encoder

    for dataset in ("locomo", "longmemeval_s", "orgmem"):
        episodes = load_dataset(dataset, limit=50 if dataset == "longmemeval_s" else None)
        texts = list(dict.fromkeys(doc.text for ep in episodes for doc in ep.documents))
        random.Random(0).shuffle(texts)
        texts = texts[:sample]
        encoder = Encoder()
        encoder.encode(["warm-up"])
        tokens = sum(min(len(ids), 256) for ids in encoder.tokenizer(texts)["input_ids"])
        started = time.perf_counter()
        encoder.encode(texts)
        elapsed = time.perf_counter() - started
        print(f"encoder on {dataset:14s}: {len(texts) / elapsed:6.1f} texts/s, {tokens / elapsed:7.0f} word pieces/s "
              f"(mean {tokens / len(texts):.0f} pieces/text, {len(texts)} texts)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", action="append", help="orgmem, locomo, longmemeval_s (repeatable)")
    parser.add_argument("--system", default="mempp")
    parser.add_argument("--limit", type=int, default=None, help="questions (for a quick LongMemEval_S figure)")
    parser.add_argument("--encoder-only", action="store_true")
    parser.add_argument("--sample", type=int, default=500, help="texts per dataset for the encoder figure")
    args = parser.parse_args()
    bench_encoder(args.sample)
    if args.encoder_only:
        return
    for dataset in args.dataset or ["orgmem", "locomo", "longmemeval_s"]:
        bench_run(dataset, args.system, args.limit)


if __name__ == "__main__":
    main()
