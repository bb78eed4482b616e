"""The opt-in ANN vector leg measured on a memory bench_scale.py has built and timed exactly.

Recall@k is the share of the exact list's rows that the ANN run returns (set overlap, order
ignored), averaged over the questions: once for the vector leg alone (its C candidates) and once
for the whole fused top-k that ``search`` returns.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np

from memplusplus.ann import ANN_FIELDS, make_index
from memplusplus.legs import vector_leg


def _recall(found: list, exact: list) -> float:
    return len(set(found) & set(exact)) / len(exact) if exact else 1.0


def _ms(samples: list[float], q: float) -> float:
    return round(float(np.percentile(samples, q)) * 1000, 3)


def bench_ann(memory, kind: str, params: dict[str, Any], questions, as_of, exact_hits, k: int) -> dict[str, Any]:
    """Attach an ANN index of ``kind`` to ``memory`` (settings: the defaults overridden by
    ``params``), time its build and searches, measure recall against the exact runs, detach it."""
    exact_config = memory.config
    store = memory.store
    config = dataclasses.replace(exact_config, ann=kind, **params)
    limit = config.candidates
    queries = [memory.encoder.encode_one(question) for question in questions]
    scopes = [memory.scope_mask(when) for when in as_of]
    exact_legs, exact_cpus = [], []
    for q, scope in zip(queries, scopes):
        c0 = time.process_time()
        exact_legs.append(vector_leg(store, q, scope, limit))
        exact_cpus.append(time.process_time() - c0)
    out: dict[str, Any] = {"settings": {name: getattr(config, name) for name in ANN_FIELDS}, "exact_vector_leg_cpu_p50_ms": _ms(exact_cpus, 50)}
    index = make_index(config, store.vectors.shape[1])
    c0, w0 = time.process_time(), time.perf_counter()
    index.sync(store.vectors)
    out["build_s"], out["build_cpu_s"] = round(time.perf_counter() - w0, 2), round(time.process_time() - c0, 2)
    memory.config, memory._ann = config, index
    try:
        leg_walls, leg_cpus, leg_recall, took_ann, fell_back = [], [], [], 0, 0
        for q, scope, exact in zip(queries, scopes, exact_legs):
            in_scope = int(scope.sum())
            if in_scope >= config.ann_min_rows:
                took_ann += 1
                fell_back += index.search(store.vectors, q, scope, in_scope, limit) is None
            c0, w0 = time.process_time(), time.perf_counter()
            found = vector_leg(store, q, scope, limit, index)
            leg_walls.append(time.perf_counter() - w0)
            leg_cpus.append(time.process_time() - c0)
            leg_recall.append(_recall(found, exact))
        walls, cpus, fused_recall = [], [], []
        for question, when, exact in zip(questions, as_of, exact_hits):
            c0, w0 = time.process_time(), time.perf_counter()
            hits = memory.search(question, as_of=when)
            walls.append(time.perf_counter() - w0)
            cpus.append(time.process_time() - c0)
            fused_recall.append(_recall([hit.doc_id for hit in hits], exact))
    finally:
        memory.config, memory._ann = exact_config, None
    out.update({
        "questions_through_ann": took_ann,
        "questions_fallen_back_to_exact": fell_back,
        "vector_leg_recall_at_c": round(float(np.mean(leg_recall)), 4),
        "vector_leg_p50_ms": _ms(leg_walls, 50),
        "vector_leg_cpu_p50_ms": _ms(leg_cpus, 50),
        f"fused_recall_at_{k}": round(float(np.mean(fused_recall)), 4),
        "search_p50_ms": _ms(walls, 50),
        "search_p95_ms": _ms(walls, 95),
        "search_cpu_p50_ms": _ms(cpus, 50),
    })
    return out
