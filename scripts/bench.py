"""Benchmarks that print figures: whole-process time cold and warm, peak memory, encoder speed.

    python scripts/bench.py                          # all three datasets, Mem++
    python scripts/bench.py --dataset orgmem --system bm25
    python scripts/bench.py --dataset locomo --encoder minilm_onnx
    python scripts/bench.py --dataset longmemeval_s --limit 20
    python scripts/bench.py --encoder-only --sample 1000   # encoder throughput, PyTorch and ONNX

Cold = a fresh, empty cache directory; warm = the same command again on that cache. Peak memory
is the maximum resident set size of the run.py process.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def timed_run(args: list[str]) -> tuple[float, float]:
    """Seconds and peak RSS (MiB) of one ``python run.py ...`` process (its own rusage)."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, "run.py", *args], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"run.py {' '.join(args)} failed:\n{err.read().decode()[-2000:]}")
    return elapsed, usage.ru_maxrss / 1024.0


def bench_run(dataset: str, system: str, limit: int | None, encoder: str) -> None:
    with tempfile.TemporaryDirectory(prefix="mempp-bench-") as cache:
        args = [f"dataset={dataset}", f"system={system}", f"encoder={encoder}", "progress=false",
                f"store.cache_dir={cache}", f"store.results_dir={cache}/runs"]
        if limit:
            args.append(f"dataset.limit={limit}")
        cold, cold_mem = timed_run(args)
        warm, warm_mem = timed_run(args)
    scope = f"limit={limit}" if limit else "full"
    print(f"{dataset:14s} {system:14s} {encoder:12s} {scope:9s} cold {cold:8.1f} s  warm {warm:6.1f} s  peak RSS {max(cold_mem, warm_mem):7.0f} MiB", flush=True)


def bench_encoder(sample: int, backends: list[str], datasets: list[str]) -> None:
    """Texts/s and word pieces/s of each encoder backend on the same shuffled distinct texts."""
    from loaders import load_dataset
    from memplusplus.encoder import Encoder
    from memplusplus.onnx_encoder import OnnxEncoder, OnnxEncoderConfig

    for dataset in datasets:
        episodes = load_dataset(dataset, limit=50 if dataset == "longmemeval_s" else None)
        texts = list(dict.fromkeys(doc.text for ep in episodes for doc in ep.documents))
        random.Random(0).shuffle(texts)
        texts = texts[:sample]
        with tempfile.TemporaryDirectory(prefix="mempp-onnx-") as onnx_dir:
            for backend in backends:
                encoder = Encoder() if backend == "torch" else OnnxEncoder(OnnxEncoderConfig(model_dir=onnx_dir))
                encoder.encode(["warm-up"])  # loads the model (and makes the ONNX export) outside the timing
                tokens = sum(min(len(ids), 256) for ids in encoder.tokenizer(texts)["input_ids"])
                started = time.perf_counter()
                encoder.encode(texts)
                elapsed = time.perf_counter() - started
                print(f"{backend:5s} encoder on {dataset:14s}: {len(texts) / elapsed:6.1f} texts/s, "
                      f"{tokens / elapsed:7.0f} word pieces/s (mean {tokens / len(texts):.0f} pieces/text, "
                      f"{len(texts)} texts)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", action="append", help="orgmem, locomo, longmemeval_s (repeatable)")
    parser.add_argument("--system", default="mempp")
    parser.add_argument("--encoder", default="minilm", help="encoder config for whole runs: minilm or minilm_onnx")
    parser.add_argument("--limit", type=int, default=None, help="questions, LongMemEval_S only (a full cold run takes hours on 2 cores)")
    parser.add_argument("--encoder-only", action="store_true", help="only the encoder's throughput")
    parser.add_argument("--sample", type=int, default=500, help="texts per dataset for the encoder figure")
    parser.add_argument("--backend", action="append", choices=["torch", "onnx"], help="encoder backends (default both)")
    args = parser.parse_args()
    if args.encoder_only:
        bench_encoder(args.sample, args.backend or ["torch", "onnx"], args.dataset or ["locomo", "longmemeval_s", "orgmem"])
        return
    for dataset in args.dataset or ["orgmem", "locomo", "longmemeval_s"]:
        bench_run(dataset, args.system, args.limit if dataset == "longmemeval_s" else None, args.encoder)


if __name__ == "__main__":
    main()
