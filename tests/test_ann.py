"""The opt-in ANN vector leg (memplusplus.ann): close to the exact leg, never outside the scope.

Exact search is the paper's behaviour; the default config must not build an index or change a
single result. With generous parameters on a small store, faiss HNSW and IVF (all lists probed)
must return the exact leg's top-k; with any parameters a row dated after the as-of day or archived
must never come back.
"""

from __future__ import annotations

import zlib
from datetime import date, datetime, timedelta

import numpy as np
import pytest

from memplusplus import Document, MemPlusPlus, MemPPConfig
from memplusplus.memory import vector_leg

faiss = pytest.importorskip("faiss", reason='the ann extra is not installed (pip install -e ".[ann]")')

DIM = 16
ROWS = 600
START = datetime(2024, 1, 1)


class RandomVectors:
    """Seeded unit vectors: rows in ingest order, a query by its text's hash."""

    dimension = DIM

    def __init__(self, rows: int, seed: int = 3) -> None:
        rng = np.random.default_rng(seed)
        self.rows = rng.standard_normal((rows, DIM)).astype(np.float32)
        self.rows /= np.linalg.norm(self.rows, axis=1, keepdims=True)
        self.cursor = 0

    def encode(self, texts, show_progress: bool = False) -> np.ndarray:
        out = self.rows[self.cursor : self.cursor + len(texts)]
        self.cursor += len(texts)
        return out

    def encode_one(self, text: str) -> np.ndarray:
        rng = np.random.default_rng(zlib.crc32(text.encode()))
        vec = rng.standard_normal(DIM).astype(np.float32)
        return vec / np.linalg.norm(vec)


def memory(**ann) -> MemPlusPlus:
    config = MemPPConfig(k=20, candidates=20, dedup=False, **ann)
    mem = MemPlusPlus(config, encoder=RandomVectors(ROWS), clock=lambda: datetime(2030, 1, 1))
    mem.ingest(Document(f"d{i}", f"note {i}", f"Author {i % 7}", START + timedelta(hours=i)) for i in range(ROWS))
    return mem


def exact_top(mem: MemPlusPlus, query: np.ndarray, scope: np.ndarray, k: int) -> list[int]:
    """Brute force by hand: every in-scope row's dot product, best first, later row on ties."""
    sims = mem.store.vectors.astype(np.float64) @ query.astype(np.float64)
    seqs = [int(s) for s in np.flatnonzero(scope)]
    return sorted(seqs, key=lambda s: (-sims[s], -s))[:k]


GENEROUS = {
    "hnsw": {"ann": "hnsw", "ann_min_rows": 0, "ann_m": 32, "ann_ef_construction": 200, "ann_ef_search": 400},
    "ivf": {"ann": "ivf", "ann_min_rows": 0, "ann_nlist": 8, "ann_nprobe": 8},
}


@pytest.mark.parametrize("kind", ["hnsw", "ivf"])
def test_generous_ann_returns_the_exact_top_k(kind):
    mem = memory(**GENEROUS[kind])
    for i, as_of in enumerate([None, date(2024, 1, 20), date(2024, 1, 10)]):
        query = mem.encoder.encode_one(f"question {i}")
        scope = mem.scope_mask(as_of)
        expected = exact_top(mem, query, scope, 20)
        assert vector_leg(mem.store, query, scope, 20, mem._ann) == expected
        assert vector_leg(mem.store, query, scope, 20) == expected
    assert mem._ann is not None and mem._ann.size == ROWS


@pytest.mark.parametrize("kind", ["hnsw", "ivf"])
def test_rows_outside_the_scope_never_come_back(kind):
    # Stingy parameters: the index misses rows, but what it returns must still be in scope.
    mem = memory(ann=kind, ann_min_rows=0, ann_m=4, ann_ef_construction=8, ann_ef_search=1, ann_nlist=16, ann_nprobe=1)
    archived = {f"d{i}" for i in range(0, 240, 5)}
    for doc_id in archived:
        mem.archive(doc_id)
    as_of = date(2024, 1, 10)  # rows 0..239 are dated up to 2024-01-10 23:00
    cutoff = datetime(2024, 1, 10, 23, 59, 59, 999999)
    for i in range(20):
        hits = mem.search(f"question {i}", as_of=as_of)
        assert hits and all(hit.date <= cutoff and hit.doc_id not in archived for hit in hits)
        ranking = vector_leg(mem.store, mem.encoder.encode_one(f"question {i}"), mem.scope_mask(as_of), 20, mem._ann)
        assert len(ranking) == 20 and all(seq < 240 and f"d{seq}" not in archived for seq in ranking)


def test_rows_added_after_a_search_are_indexed_at_the_next_search():
    mem = memory(**GENEROUS["hnsw"])
    mem.search("first question")
    assert mem._ann.size == ROWS
    target = mem.encoder.encode_one("late question")
    mem.encoder.rows = np.vstack([mem.encoder.rows, target[None, :]])
    mem.add("a late row", author="Author 1", date=START + timedelta(days=90), doc_id="late")
    hits = mem.search("late question")
    assert mem._ann.size == ROWS + 1
    assert hits[0].doc_id == "late" and hits[0].leg_ranks.get("vector") == 0


def test_small_scopes_stay_exact_below_min_rows():
    mem = memory(ann="hnsw", ann_min_rows=ROWS + 1, ann_m=4, ann_ef_construction=8, ann_ef_search=1)
    query = mem.encoder.encode_one("q")
    scope = mem.scope_mask(None)
    assert vector_leg(mem.store, query, scope, 20, mem._ann) == exact_top(mem, query, scope, 20)
    assert mem._ann.size == 0  # never consulted, never filled


def test_default_config_is_exact_and_builds_no_index():
    assert MemPPConfig().ann == "none"
    default = memory()
    ann_off = memory(ann="hnsw", ann_min_rows=10**9)
    assert default._ann is None
    for i, as_of in enumerate([None, date(2024, 1, 15)]):
        plain = default.search(f"question {i}", as_of=as_of)
        assert plain == ann_off.search(f"question {i}", as_of=as_of)
        query = default.encoder.encode_one(f"question {i}")
        vector_ranks = {hit.leg_ranks["vector"]: hit.doc_id for hit in plain if "vector" in hit.leg_ranks}
        expected = exact_top(default, query, default.scope_mask(as_of), 20)
        assert vector_ranks and all(doc_id == f"d{expected[rank]}" for rank, doc_id in vector_ranks.items())


@pytest.mark.parametrize(
    "bad", [{"ann": "lsh"}, {"ann": "hnsw", "ann_ef_search": 0}, {"ann": "ivf", "ann_nprobe": 0}, {"ann_min_rows": -1}]
)
def test_bad_ann_settings_are_refused(bad):
    with pytest.raises(ValueError, match="ann"):
        MemPPConfig(**bad)


def test_system_ann_from_the_config_reaches_the_memory():
    from harness.compose import compose_config
    from memory_protocol import ConfigError
    from harness.config import RunConfig
    from harness.systems import RunContext, build_system

    default = RunConfig.from_dict(compose_config(["dataset=orgmem"]))
    assert default.system.params["ann"] == "none"
    assert build_system(RunContext(default.system, RandomVectors(1), "unused")).memory._ann is None
    hnsw = RunConfig.from_dict(compose_config(["dataset=orgmem", "system.ann=hnsw"]))
    memory = build_system(RunContext(hnsw.system, RandomVectors(1), "unused")).memory
    assert memory._ann is not None and memory._ann.settings.ann == "hnsw"
    with pytest.raises(ConfigError, match="ann"):  # refused when the config is read, before any data
        RunConfig.from_dict(compose_config(["dataset=orgmem", "system.ann=lsh"]))
