"""Small Mem++ read-path benchmark: search CPU time and memory per row at a few store sizes.

    python scripts/bench_store.py --rows 1000,10000,100000

Rows are LoCoMo turns (text and speaker, the speaker indexed as an author tag) with random dates
over three years (3% undated) and random unit vectors injected through a stub encoder, so the
encoder never runs. Queries are LoCoMo questions with random as-of dates. Each size runs in its
own process; it prints one line per size: process CPU time (all threads, BLAS included) p50/p95 of ``search`` (k = 50, one query at a
time), numpy brute-force cosine over the same rows for scale, and resident bytes per row
(RSS growth from before the documents are built to after ingest, texts and vectors included).

Set PYTHONPATH to a directory holding another ``memplusplus`` to time that copy instead.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(ROOT))

LOCOMO = Path("/work/shared/data/locomo/locomo10.json")
DIM = 384


class StubEncoder:
    """Random unit vectors; the query vector is fixed per query text."""

    dimension = DIM

    def __init__(self, seed: int = 0) -> None:
        self._rng = np.random.default_rng(seed)
        self._queries: dict[str, np.ndarray] = {}

    def _unit(self, n: int) -> np.ndarray:
        v = self._rng.standard_normal((n, DIM)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    def encode(self, texts, show_progress: bool = False) -> np.ndarray:
        return self._unit(len(texts))

    def encode_one(self, text: str) -> np.ndarray:
        if text not in self._queries:
            self._queries[text] = self._unit(1)[0]
        return self._queries[text]


def rss_bytes() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def load_locomo() -> tuple[list[tuple[str, str]], list[str]]:
    data = json.loads(LOCOMO.read_text())
    turns, questions = [], []
    for conv in data:
        for key, value in conv["conversation"].items():
            if key.startswith("session_") and isinstance(value, list):
                turns += [(t["speaker"], t["text"]) for t in value if t.get("text")]
        questions += [qa["question"] for qa in conv["qa"]]
    return turns, questions


def traced_bytes_per_row(rows: int, turns: list[tuple[str, str]]) -> dict[str, int]:
    """Bytes the memory allocates per row (tracemalloc, texts excluded: they exist beforehand),
    and the same without the float32 vector matrix's capacity."""
    import tracemalloc

    from memplusplus import Document, MemPlusPlus, MemPPConfig

    docs = [
        Document(f"r{i}", f"{turns[i % len(turns)][1]} ({i // len(turns)})", turns[i % len(turns)][0],
                 datetime(2021, 1, 1) + timedelta(hours=i), author_role="speaker")
        for i in range(rows)
    ]
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    mem = MemPlusPlus(MemPPConfig(k=50, tags="speaker"), encoder=StubEncoder(), clock=lambda: datetime(2030, 1, 1))
    mem.ingest(docs)
    used = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    store = mem.store
    matrix = getattr(getattr(store, "_vectors", None), "_data", getattr(store, "_vectors", None))
    matrix_bytes = int(matrix.nbytes) if isinstance(matrix, np.ndarray) else 0
    return {"all": round(used / rows), "beyond_vectors": round((used - matrix_bytes) / rows)}


def one_size(rows: int, queries: int) -> dict:
    from memplusplus import Document, MemPlusPlus, MemPPConfig

    rng = random.Random(rows)
    turns, questions = load_locomo()
    start = datetime(2021, 1, 1)
    before = rss_bytes()
    docs = []
    for i in range(rows):
        speaker, text = turns[i % len(turns)]
        date = None if rng.random() < 0.03 else start + timedelta(minutes=rng.randrange(3 * 365 * 24 * 60))
        docs.append(Document(f"r{i}", f"{text} ({i // len(turns)})", speaker, date, author_role="speaker"))
    mem = MemPlusPlus(MemPPConfig(k=50, tags="speaker"), encoder=StubEncoder(), clock=lambda: datetime(2030, 1, 1))
    t0 = time.perf_counter()
    mem.ingest(docs)
    ingest_s = time.perf_counter() - t0
    del docs
    per_row = (rss_bytes() - before) / rows
    asks = [(rng.choice(questions), start + timedelta(days=rng.randrange(3 * 365))) for _ in range(queries)]
    for q, as_of in asks[:3]:
        mem.search(q, as_of=as_of)
    cpu = []
    for q, as_of in asks:
        c0 = time.process_time()
        mem.search(q, as_of=as_of)
        cpu.append((time.process_time() - c0) * 1000)
    matrix = np.ascontiguousarray(mem.store.vectors)
    brute = []
    for q, _ in asks:
        vec = mem.encoder.encode_one(q)
        c0 = time.process_time()
        sims = matrix @ vec
        np.argpartition(-sims, 49)[:50]
        brute.append((time.process_time() - c0) * 1000)
    traced = traced_bytes_per_row(min(rows, 20000), turns)
    return {
        "rows": rows,
        "search_p50_ms": round(float(np.percentile(cpu, 50)), 3),
        "search_p95_ms": round(float(np.percentile(cpu, 95)), 3),
        "numpy_bruteforce_p50_ms": round(float(np.percentile(brute, 50)), 3),
        "rss_bytes_per_row": round(per_row),
        "traced_bytes_per_row": traced,
        "ingest_s": round(ingest_s, 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", default="1000,10000,100000", help="comma-separated store sizes")
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one_size(args.one, args.queries)), flush=True)
        return 0
    for size in (int(s) for s in args.rows.split(",")):
        cmd = [sys.executable, __file__, "--one", str(size), "--queries", str(args.queries)]
        subprocess.run(cmd, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
