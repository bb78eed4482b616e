"""Build a memory system from its spec: one registry, plain constructors, no Hydra."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from baselines.bm25 import BM25Memory
from baselines.full_context import FullContextMemory
from baselines.rag import RAGMemory
from baselines.thirdparty import mem0 as mem0_adapter, zep as zep_adapter
from baselines.vector import VectorMemory
from harness.config import ConfigError, SystemSpec
from memplusplus.encoder import CachedEncoder
from memplusplus.legs import LEGS
from memplusplus.memory import MemPlusPlus, MemPPConfig
from memplusplus.protocol import MemorySystem


def _mempp(spec: SystemSpec, encoder: CachedEncoder, cache_dir: str | None = None) -> MemorySystem:
    params = dict(spec.params)
    backend = params.pop("backend", "memory")
    legs = list(params.pop("legs", LEGS))
    unknown = sorted(set(legs) - set(LEGS))
    if unknown:
        raise ConfigError(f"system.legs: unknown leg(s) {unknown}; legs are {list(LEGS)}")
    all_weights = dict(params.pop("weights"))
    weights = {leg: float(all_weights.get(leg, 0.0)) if leg in legs else 0.0 for leg in LEGS}
    try:
        config = MemPPConfig(weights=weights, k=spec.k, **params)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"system ({spec.name}): {exc}") from exc
    if backend == "postgres":  # $POSTGRES_URL, else an embedded server in the run's cache folder
        from memplusplus.pg import PostgresMemPlusPlus

        return PostgresMemPlusPlus(config, encoder=encoder, data_dir=f"{cache_dir}/postgres" if cache_dir else None)
    if backend != "memory":
        raise ConfigError(f"system.backend={backend!r} is unknown; use memory or postgres")
    return MemPlusPlus(config, encoder=encoder)


def _with_params(factory: Callable[..., MemorySystem], uses_encoder: bool):
    def build(spec: SystemSpec, encoder: CachedEncoder) -> MemorySystem:
        extra: dict[str, Any] = {"encoder": encoder} if uses_encoder else {}
        try:
            return factory(k=spec.k, **spec.params, **extra)
        except TypeError as exc:
            raise ConfigError(f"system ({spec.name}): {exc}") from exc

    return build


def _full_context(spec: SystemSpec, encoder: CachedEncoder) -> MemorySystem:
    try:
        return FullContextMemory(**spec.params)
    except TypeError as exc:
        raise ConfigError(f"system ({spec.name}): {exc}") from exc


BUILDERS: dict[str, Callable[[SystemSpec, CachedEncoder], MemorySystem]] = {
    "mempp": _mempp,
    "bm25": _with_params(BM25Memory, uses_encoder=False),
    "vector": _with_params(VectorMemory, uses_encoder=True),
    "rag": _with_params(RAGMemory, uses_encoder=True),
    "full_context": _full_context,
    "mem0": mem0_adapter.build,
    "zep": zep_adapter.build,
}


def build_system(spec: SystemSpec, encoder: CachedEncoder, cache_dir: str | None = None) -> MemorySystem:
    if spec.kind not in BUILDERS:
        raise ConfigError(f"system.kind={spec.kind!r} is unknown; known kinds are {sorted(BUILDERS)}")
    if spec.kind == "mempp":
        return _mempp(spec, encoder, cache_dir)
    return BUILDERS[spec.kind](spec, encoder)
