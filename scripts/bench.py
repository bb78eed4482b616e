"""Benchmarks that print figures: whole-process time cold and warm, peak memory, encoder speed.

    python scripts/bench.py                          # all three datasets, Mem++
    python scripts/bench.py --dataset orgmem --system bm25
    python scripts/bench.py --dataset locomo --encoder minilm_onnx
    python scripts/bench.py --dataset longmemeval_s --limit 20
    python scripts/bench.py --encoder-only --encoders minilm,minilm_onnx,minilm_static --sample 2000
                                                     # encoder throughput on LongMemEval_S turns
    python scripts/bench.py --encoder-only --encoders minilm --threads 1,2 --sample 500
                                                     # the same per torch (ONNX) thread count

Cold: a fresh, empty cache folder; warm: the same command again on it. Peak memory: run.py's max RSS.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time

from script_common import ROOT, clocked, run_config


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


# Distinct document texts of all of LongMemEval_S as the loader builds them ("[date] role: content";
# counted 2026-12-01): what a cold run embeds, plus its 499 questions.
FULL_LME_TEXTS = 245_396


def sample_texts(dataset: str, sample: int) -> list[str]:
    """``sample`` distinct texts of ``dataset`` in a fixed shuffle (LongMemEval_S: its first 50 haystacks)."""
    from loaders import load_dataset

    episodes = load_dataset(dataset, limit=50 if dataset == "longmemeval_s" else None)
    texts = list(dict.fromkeys(doc.text for ep in episodes for doc in ep.documents))
    random.Random(0).shuffle(texts)
    return texts[:sample]


def build_named_encoder(name: str, model_dir_root: str | None, threads: int | None = None):
    """The encoder ``python run.py encoder=NAME`` builds, with no vector cache (every text computed)."""
    from harness.plan import build_encoder

    overrides = [f"encoder={name}"] + ([f"store.cache_dir={model_dir_root}"] if model_dir_root else [])
    config = run_config(*overrides, *([f"++encoder.threads={threads}"] if threads is not None else []))
    return build_encoder(config.encoder.backend, config.encoder.params, cache=None)


def bench_encoder(sample: int, names: list[str], datasets: list[str], model_dir_root: str | None,
                  thread_counts: tuple[int | None, ...] | list[int | None] = (None,)) -> None:
    """Texts/s and word pieces/s of each encoder on the same texts (wall and CPU); on LongMemEval_S
    also extrapolated to all its distinct turn texts."""
    from memplusplus.encoder import resolve_device, word_piece_tokenizer

    print(f"torch device for encoder.device=auto: {resolve_device('auto')}", flush=True)
    for dataset in datasets:
        texts = sample_texts(dataset, sample)
        pieces = sum(min(len(ids), 256) for ids in word_piece_tokenizer()(texts)["input_ids"])
        for name, threads in [(name, threads) for name in names for threads in thread_counts]:
            encoder = build_named_encoder(name, model_dir_root, threads)
            label = name if threads is None else f"{name} x{threads}"
            # the warm-up loads the model (and makes a one-off export) outside the timing
            _, (load_wall,), _ = clocked([lambda: encoder.encode(["warm-up"])])
            load_before = os.getloadavg()[0]
            (vectors,), (wall,), (cpu,) = clocked([lambda: encoder.encode(texts)])
            assert vectors.shape == (len(texts), encoder.dimension)
            print(f"{label:14s} on {dataset:14s}: {len(texts)} texts ({pieces / len(texts):.0f} MiniLM pieces/text) "
                  f"in {wall:7.1f} s wall, {cpu:7.1f} s CPU; {len(texts) / wall:8.1f} texts/s wall, "
                  f"{len(texts) / cpu:8.1f} texts/CPU-s, {pieces / wall:9.0f} pieces/s wall; "
                  f"model load {load_wall:.1f} s wall; load average {load_before:.1f} -> {os.getloadavg()[0]:.1f}",
                  flush=True)
            if dataset == "longmemeval_s":
                scale = FULL_LME_TEXTS / len(texts)
                print(f"{'':14s}    extrapolated to all {FULL_LME_TEXTS:,} LongMemEval_S turns (encoding only): "
                      f"{wall * scale / 60:7.1f} min wall, {cpu * scale / 60:7.1f} min CPU", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", action="append", help="orgmem, locomo, longmemeval_s (repeatable)")
    parser.add_argument("--system", default="mempp")
    parser.add_argument("--encoder", default="minilm", help="encoder config for whole runs: minilm, minilm_onnx or minilm_static")
    parser.add_argument("--limit", type=int, default=None, help="questions, LongMemEval_S only (a full cold run takes hours on 2 cores)")
    parser.add_argument("--encoder-only", action="store_true", help="only the encoder's throughput")
    parser.add_argument("--sample", type=int, default=2000, help="distinct texts per dataset for the encoder figure")
    parser.add_argument("--encoders", default="minilm,minilm_onnx,minilm_static",
                        help="encoder configs (configs/encoder) compared by --encoder-only, comma-separated")
    parser.add_argument("--threads", default=None,
                        help="encoder.threads values to compare, comma-separated (torch or ONNX Runtime threads)")
    parser.add_argument("--model-dir-root", default=None,
                        help="store.cache_dir whose onnx/ and static/ hold the one-off export and table (default: the run's)")
    args = parser.parse_args()
    if args.encoder_only:
        counts = [int(n) for n in args.threads.split(",")] if args.threads else [None]
        bench_encoder(args.sample, args.encoders.split(","), args.dataset or ["longmemeval_s"], args.model_dir_root, counts)
        return
    for dataset in args.dataset or ["orgmem", "locomo", "longmemeval_s"]:
        bench_run(dataset, args.system, args.limit if dataset == "longmemeval_s" else None, args.encoder)


if __name__ == "__main__":
    main()
