"""What checking every cache read costs on a warm cache: the best of ``--repeat`` ``get_many`` of N
stored vectors through the checked stores against the plain SELECT of the store before digests.

    python scripts/bench_cache_reads.py            # 20,000 vectors of 384 float32
    python scripts/bench_cache_reads.py --n 100000 --repeat 7
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import timeit
from collections.abc import Callable
from pathlib import Path

import numpy as np
import script_common  # noqa: F401 - this checkout on sys.path

from model_clients.kvstore import KVStore, embedding_store


def best_of(repeat: int, read: Callable[[], object]) -> float:
    read()  # warm the page cache and the connection
    return min(timeit.repeat(read, number=1, repeat=repeat))


def unchecked_reader(path: Path, keys: list[str]) -> Callable[[], dict[str, bytes]]:
    """The read before digests: SELECT key, value in chunks of 500, nothing verified."""
    conn = sqlite3.connect(path)

    def read() -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            found.update((k, bytes(v)) for k, v in conn.execute(f"SELECT key, value FROM kv WHERE key IN ({marks})", chunk))
        return found

    return read


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--dimension", type=int, default=384)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    items = [(f"{i:064x}", rng.standard_normal(args.dimension).astype(np.float32).tobytes()) for i in range(args.n)]
    keys = [key for key, _ in items]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "embeddings.sqlite"
        embedding_store(path).put_many(items)
        plain, vectors = KVStore(path), embedding_store(path)
        ways = {
            "unchecked SELECT (the store before digests)": unchecked_reader(path, keys),
            "KVStore.get_many (digest)": lambda: plain.get_many(keys),
            "embedding_store.get_many (digest + finite)": lambda: vectors.get_many(keys),
        }
        base = None
        for name, read in ways.items():
            seconds = best_of(args.repeat, read)
            base = base or seconds
            print(f"{name:46s} {args.n} entries: {seconds * 1000:8.1f} ms  {seconds / args.n * 1e6:6.2f} us/entry  x{seconds / base:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
