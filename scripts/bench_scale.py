"""Mem++ search and write cost against store size, beside brute-force references, in one process.

    python scripts/bench_scale.py --rows 1000,10000,100000,1000000 --out scale.json
    python scripts/bench_scale.py --rows 1000,10000 --backends memory,postgres --out scale.json
    python scripts/bench_scale.py --rows 100000 --ann hnsw,ivf --vectors clustered --out scale.json
    python scripts/bench_scale.py --rows 20000 --traced --out scale.json   # tracemalloc bytes per row

Rows: LoCoMo turns with varied authors and dates and random unit vectors (the encoder does not
dominate); questions: LoCoMo's, half with an as-of date. Per size and backend: search wall and CPU
(Postgres: client plus server), ingest and add time, bytes per row; then numpy, faiss, bm25s and
rank-bm25 on the same questions (CPU is the steadier figure on a shared machine). ``--ann``: the
ANN leg's build and search time and recall against the exact runs. ``--vectors clustered``: around
2,000 centres (cosine ~0.7), unlike uniform vectors, ANN's worst case. ``--threads``: a threaded
product can wait on a descheduled thread. One size a run gives RSS per row in a fresh process;
``PYTHONPATH=<another checkout>`` times that copy.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from script_common import clocked

from harness.safe_write import atomic_write
from memplusplus import Document, MemPPConfig
from memplusplus.encoder import CachedEncoder
from memplusplus.text import content_terms, stems


class InjectedEncoder(CachedEncoder):
    """Precomputed unit vectors: rows in ingest order, questions by their text."""

    def __init__(self, rows: np.ndarray, questions: dict[str, np.ndarray]):
        super().__init__(None)
        self.rows, self.questions, self.cursor = rows, questions, 0

    @property
    def identity(self) -> str:
        return "bench-injected"

    def encode(self, texts, show_progress: bool = False) -> np.ndarray:
        if len(texts) == 1 and texts[0] in self.questions:
            return self.questions[texts[0]][None, :]
        out = self.rows[self.cursor : self.cursor + len(texts)]
        self.cursor += len(texts)
        return out


def unit_vectors(rng: np.random.Generator, n: int, dim: int = 384, centres: np.ndarray | None = None) -> np.ndarray:
    """Uniform random unit vectors, or (``centres`` given) unit vectors around random centres."""
    out = np.empty((n, dim), dtype=np.float32)
    for at in range(0, n, 100_000):  # in slices: a million 384-d float64 draws would take 3 GB
        size = min(100_000, n - at)
        part = rng.standard_normal((size, dim), dtype=np.float32)
        if centres is not None:  # noise of norm ~1 around a unit centre: cosine ~0.7 to it
            part = centres[rng.integers(len(centres), size=size)] + part / np.sqrt(dim, dtype=np.float32)
        out[at : at + size] = part / np.linalg.norm(part, axis=1, keepdims=True)
    return out


def source(n_questions: int, seed: int):
    from loaders import load_dataset

    episodes = load_dataset("locomo")
    turns = [(d.text, d.author) for ep in episodes for d in ep.documents if d.text.strip()]
    questions = [q.text for ep in episodes for q in ep.questions]
    random.Random(seed).shuffle(questions)
    return turns, questions[:n_questions]


def make_rows(turns, n: int, seed: int) -> list[Document]:
    rng = random.Random(seed)
    speakers = sorted({a for _, a in turns if a}) + [f"Person {i}" for i in range(200)]
    start = datetime(2021, 1, 1)
    docs = []
    for i in range(n):
        text, author = turns[i % len(turns)]
        if i >= len(turns):
            author = rng.choice(speakers)
        when = None if rng.random() < 0.02 else start + timedelta(minutes=rng.randrange(3 * 365 * 24 * 60))
        docs.append(Document(f"r{i}", text, author, when))
    return docs


def pct(samples: list[float], q: float) -> float:
    return round(float(np.percentile(samples, q)) * 1000, 3)


def rss() -> int:
    import psutil

    return psutil.Process().memory_info().rss


def timed(calls, prefix: str) -> dict[str, float]:
    _, walls, cpus = clocked(calls)
    return {f"{prefix}_p50_ms": pct(walls, 50), f"{prefix}_cpu_p50_ms": pct(cpus, 50)}


def time_search(memory, questions, as_of, cpu_of=time.process_time) -> tuple[dict[str, float], list[list[str]]]:
    found, walls, cpus = clocked([lambda q=q, w=w: memory.search(q, as_of=w) for q, w in zip(questions, as_of)], cpu_of)
    # CPU as a mean over the questions too (a server process' CPU clock ticks every 10 ms).
    return {"search_p50_ms": pct(walls, 50), "search_p95_ms": pct(walls, 95), "search_cpu_p50_ms": pct(cpus, 50),
            "search_cpu_mean_ms": round(sum(cpus) * 1000 / len(cpus), 3)}, [[h.doc_id for h in hits] for hits in found]


def _recall(found: list, exact: list) -> float:
    return len(set(found) & set(exact)) / len(exact) if exact else 1.0


def bench_ann(memory, kind: str, params: dict[str, Any], questions, as_of, exact_hits, k: int) -> dict[str, Any]:
    """An ANN index of ``kind`` (defaults overridden by ``params``) attached to ``memory``: its build,
    vector-leg and search times and recall against the exact runs; detached after."""
    from memplusplus.ann import ANN_FIELDS, make_index
    from memplusplus.memory import vector_leg

    exact_config, store = memory.config, memory.store
    config = dataclasses.replace(exact_config, ann=kind, **params)
    limit = config.candidates
    queries = [memory.encoder.encode_one(question) for question in questions]
    scopes = [memory.scope_mask(when) for when in as_of]
    exact_legs, _, exact_cpus = clocked([lambda q=q, s=s: vector_leg(store, q, s, limit) for q, s in zip(queries, scopes)])
    out: dict[str, Any] = {"settings": {name: getattr(config, name) for name in ANN_FIELDS},
                           "exact_vector_leg_cpu_p50_ms": pct(exact_cpus, 50)}
    index = make_index(config, store.vectors.shape[1])
    _, (build_wall,), (build_cpu,) = clocked([lambda: index.sync(store.vectors)])
    out["build_s"], out["build_cpu_s"] = round(build_wall, 2), round(build_cpu, 2)
    memory.config, memory._ann = config, index
    try:
        in_scope = [int(scope.sum()) for scope in scopes]
        through = [i for i, n in enumerate(in_scope) if n >= config.ann_min_rows]
        fell_back = sum(index.search(store.vectors, queries[i], scopes[i], in_scope[i], limit) is None for i in through)
        legs, leg_walls, leg_cpus = clocked([lambda q=q, s=s: vector_leg(store, q, s, limit, index)
                                             for q, s in zip(queries, scopes)])
        times, hits = time_search(memory, questions, as_of)
    finally:
        memory.config, memory._ann = exact_config, None
    return {**out, "questions_through_ann": len(through), "questions_fallen_back_to_exact": fell_back,
            "vector_leg_recall_at_c": round(float(np.mean([_recall(f, e) for f, e in zip(legs, exact_legs)])), 4),
            "vector_leg_p50_ms": pct(leg_walls, 50), "vector_leg_cpu_p50_ms": pct(leg_cpus, 50),
            f"fused_recall_at_{k}": round(float(np.mean([_recall(f, e) for f, e in zip(hits, exact_hits)])), 4),
            "search_p50_ms": times["search_p50_ms"], "search_p95_ms": times["search_p95_ms"],
            "search_cpu_p50_ms": times["search_cpu_p50_ms"]}


def traced_bytes_per_row(docs, vectors, qvectors, k: int) -> dict[str, int]:
    """Bytes the in-process memory allocates per row (tracemalloc; the documents exist beforehand),
    with and without the float32 vector matrix's capacity."""
    import tracemalloc

    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    memory = build("memory", docs, vectors, qvectors, k, None)
    memory.ingest(docs)
    used = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    matrix = getattr(getattr(memory.store, "_vectors", None), "_data", getattr(memory.store, "_vectors", None))
    matrix_bytes = int(matrix.nbytes) if isinstance(matrix, np.ndarray) else 0
    return {"all": round(used / len(docs)), "beyond_vectors": round((used - matrix_bytes) / len(docs))}


def build(backend: str, docs, vectors, qvectors, k: int, pg_dsn: str | None):
    config = MemPPConfig(k=k, dedup=False)
    encoder = InjectedEncoder(vectors, qvectors)
    if backend == "memory":
        from memplusplus import MemPlusPlus

        return MemPlusPlus(config, encoder=encoder)
    from memplusplus.pg import PostgresMemPlusPlus

    from memplusplus.pg.server import connect

    table = f"bench_{len(docs)}"
    with connect(pg_dsn) as conn:
        conn.execute(f"DROP TABLE IF EXISTS {table}, {table}_aliases")
    return PostgresMemPlusPlus(config, encoder=encoder, dsn=pg_dsn, table=table)


def bench_backend(backend, docs, vectors, qvectors, questions, as_of, k, pg_dsn, ann_kinds=(), ann_params=None) -> dict:
    before = rss()
    memory = build(backend, docs, vectors, qvectors, k, pg_dsn)
    started = time.perf_counter()
    for at in range(0, len(docs) - 50, 20000):
        memory.ingest(docs[at : min(at + 20000, len(docs) - 50)])
    bulk = time.perf_counter() - started
    _, adds, _ = clocked([lambda d=d: memory.add(d.text, author=d.author, date=d.date, doc_id=d.doc_id)
                          for d in docs[len(docs) - 50 :]])
    out = {"ingest_ms_per_row": round(bulk * 1000 / (len(docs) - 50), 4), "add_p50_ms": pct(adds, 50)}
    cpu_of = time.process_time
    if backend == "postgres":
        import psutil

        server = psutil.Process(memory.conn.execute("SELECT pg_backend_pid()").fetchone()[0])
        cpu_of = lambda: time.process_time() + sum(server.cpu_times()[:2])  # noqa: E731
        memory.conn.execute(f"VACUUM ANALYZE {memory.table}")
        size = memory.conn.execute(f"SELECT pg_total_relation_size('{memory.table}')").fetchone()[0]
        out["db_bytes_per_row"] = round(size / len(docs))
    else:
        out["rss_bytes_per_row"] = round((rss() - before) / len(docs))
        out["rss_bytes_per_row_beyond_vectors"] = out["rss_bytes_per_row"] - vectors.shape[1] * 4
    memory.search(questions[0], as_of=as_of[0])  # warm caches and plans
    times, exact_hits = time_search(memory, questions, as_of, cpu_of)
    out.update(times)
    for kind in ann_kinds:
        out[f"ann_{kind}"] = bench_ann(memory, kind, ann_params or {}, questions, as_of, exact_hits, k)
    if backend == "postgres":
        memory.conn.execute(f"DROP TABLE {memory.table}, {memory.table}_aliases")
        memory.close()
    return out


def _numpy_top(vectors: np.ndarray, q: np.ndarray, k: int) -> np.ndarray:
    sims = vectors @ q
    top = np.argpartition(-sims, k)[:k]
    return top[np.argsort(-sims[top])]


def references(docs, vectors, qvectors, questions, k: int, rank_bm25_queries: int) -> dict:
    out: dict[str, float | None] = {}
    qs = [qvectors[q] for q in questions]
    out.update(timed([lambda q=q: _numpy_top(vectors, q, k) for q in qs], "numpy_bruteforce"))
    try:
        import faiss

        index = faiss.IndexFlatIP(vectors.shape[1])
        index.add(vectors)
        out.update(timed([lambda q=q: index.search(q[None, :], k) for q in qs], "faiss_flat"))
        del index
    except ImportError:
        out["faiss_flat_p50_ms"] = None
    tokens = [stems(doc.text) for doc in docs]
    queries = [content_terms(q) for q in questions]
    import bm25s

    index = bm25s.BM25()
    index.index([t or [""] for t in tokens], show_progress=False)
    knowns = [[t for t in terms if t in index.vocab_dict] or [next(iter(index.vocab_dict))] for terms in queries]
    out.update(timed([lambda known=known: np.argpartition(-index.get_scores(known), k)[:k] for known in knowns], "bm25s"))
    del index
    if rank_bm25_queries <= 0:
        out["rank_bm25_p50_ms"] = None
        return out
    try:
        from rank_bm25 import BM25Okapi

        okapi = BM25Okapi([t or [""] for t in tokens])
        rows = range(len(tokens))
        calls = [lambda terms=terms: okapi.get_top_n(terms, rows, n=k) for terms in queries[:rank_bm25_queries]]
        out.update(timed(calls, "rank_bm25"))
    except ImportError:
        out["rank_bm25_p50_ms"] = None
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1000,10000,100000")
    parser.add_argument("--backends", default="memory")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--k", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--memory-row-limit", type=int, default=2_000_000)
    parser.add_argument("--postgres-row-limit", type=int, default=100_000, help="larger sizes: memory backend only")
    parser.add_argument("--rank-bm25-queries", type=int, default=10, help="rank-bm25 is O(rows) in Python")
    parser.add_argument("--rank-bm25-row-limit", type=int, default=100_000, help="its index is Python dicts per row")
    parser.add_argument("--postgres-url", default=None, help="default: $POSTGRES_URL, else an embedded server")
    parser.add_argument("--vectors", choices=["random", "clustered"], default="random")
    parser.add_argument("--ann", default="", help="comma list of hnsw,ivf: also time the opt-in ANN vector leg")
    parser.add_argument("--ann-row-minimum", type=int, default=100_000, help="sizes below this skip --ann")
    parser.add_argument("--ann-params", default="{}", help='JSON of MemPPConfig ann_* values, e.g. {"ann_ef_search": 64}')
    parser.add_argument("--threads", type=int, default=0, help="cap BLAS and faiss threads (0: library default)")
    parser.add_argument("--traced", action="store_true", help="memory backend: also tracemalloc's bytes per row")
    args = parser.parse_args()
    if args.threads:
        import faiss
        from threadpoolctl import threadpool_limits

        threadpool_limits(args.threads)
        faiss.omp_set_num_threads(args.threads)
    backends = args.backends.split(",")
    ann_kinds = [kind for kind in args.ann.split(",") if kind]
    turns, questions = source(args.queries, args.seed)
    rng = np.random.default_rng(args.seed)
    centres = unit_vectors(rng, 2000) if args.vectors == "clustered" else None
    qvectors = dict(zip(questions, unit_vectors(rng, len(questions), centres=centres)))
    as_of = [None if i % 2 else datetime(2021, 7, 1) + timedelta(days=40 * i) for i in range(len(questions))]
    pg_dsn = None
    if "postgres" in backends:
        from memplusplus.pg.server import resolve_dsn

        pg_dsn = resolve_dsn(args.postgres_url, Path(tempfile.gettempdir()) / "mempp-bench-pg" / "data")
    results = []
    for n in [int(x) for x in args.rows.split(",")]:
        docs = make_rows(turns, n, args.seed)
        vectors = unit_vectors(rng, n, centres=centres)
        load_before = os.getloadavg()
        entries = []
        for backend in backends:  # before the references, so their freed objects cannot hide RSS growth
            entry = {"rows": n, "backend": backend, "k": args.k, "queries": len(questions), "vectors": args.vectors,
                     "threads": args.threads or None}
            if backend == "memory" and n > args.memory_row_limit:
                entry["skipped"] = f"over --memory-row-limit ({args.memory_row_limit})"
            elif backend == "postgres" and n > args.postgres_row_limit:
                entry["skipped"] = f"over --postgres-row-limit ({args.postgres_row_limit})"
            else:
                kinds = ann_kinds if backend == "memory" and n >= args.ann_row_minimum else []
                entry.update(bench_backend(backend, docs, vectors, qvectors, questions, as_of, args.k, pg_dsn,
                                           kinds, json.loads(args.ann_params)))
                if args.traced and backend == "memory":
                    entry["traced_bytes_per_row"] = traced_bytes_per_row(docs, vectors, qvectors, args.k)
            print(json.dumps(entry), flush=True)
            entries.append(entry)
        bm25_queries = args.rank_bm25_queries if n <= args.rank_bm25_row_limit else 0
        refs = references(docs, vectors, qvectors, questions, args.k, bm25_queries)
        load_after = [round(x, 2) for x in os.getloadavg()]
        for entry in entries:
            if "search_p50_ms" in entry:
                entry["ratio_to_numpy"] = round(entry["search_p50_ms"] / max(refs["numpy_bruteforce_p50_ms"], 1e-9), 2)
                entry["cpu_ratio_to_numpy"] = round(
                    entry["search_cpu_p50_ms"] / max(refs["numpy_bruteforce_cpu_p50_ms"], 1e-9), 2)
            entry.update(refs)
            entry["loadavg_before"], entry["loadavg_after"] = [round(x, 2) for x in load_before], load_after
            results.append(entry)
        print(json.dumps(refs), flush=True)
        atomic_write(args.out, json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
