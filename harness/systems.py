"""Build a memory system from its spec: one registry, plain constructors, no Hydra."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from baselines.bm25 import BM25Memory
from baselines.full_context import FullContextMemory
from baselines.rag import RAGMemory
from baselines.thirdparty import mem0 as mem0_adapter, zep as zep_adapter
from baselines.vector import VectorMemory
from memory_protocol import ConfigError
from harness.config import SystemSpec
from model_clients.kvstore import KVStore, stable_hash
from model_clients.llm_client import ChatRequest, LLMClient, LLMConfig
from memplusplus.encoder import CachedEncoder
from memplusplus.legs import LEGS
from memplusplus.llm import CallFailed, Complete
from memplusplus.memory import MemPlusPlus, MemPPConfig
from memory_protocol.protocol import MemorySystem


WRITE_TIME_KEYS = ("llm", "tau", "graph_as_of", "chunk_turns", "backend")


def _mempp_config(spec: SystemSpec) -> MemPPConfig:
    params = {key: value for key, value in spec.params.items() if key not in WRITE_TIME_KEYS}
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
    return config


def _mempp(spec: SystemSpec, encoder: CachedEncoder, cache_dir: str | None = None) -> MemorySystem:
    config = _mempp_config(spec)
    backend = spec.params.get("backend", "memory")
    if backend == "postgres":  # $POSTGRES_URL, else an embedded server in the run's cache folder
        from memplusplus.pg import PostgresMemPlusPlus

        return PostgresMemPlusPlus(config, encoder=encoder, data_dir=f"{cache_dir}/postgres" if cache_dir else None)
    if backend != "memory":
        raise ConfigError(f"system.backend={backend!r} is unknown; use memory or postgres")
    return MemPlusPlus(config, encoder=encoder)


def _mempp_plus(spec: SystemSpec, encoder: CachedEncoder) -> MemorySystem:
    """Mem++ plus (memplusplus.plus): Mem++'s settings, plus ``system.plus`` (the levers)."""
    from memplusplus.plus import PlusMemory, PlusOptions

    params = {key: value for key, value in spec.params.items() if key not in ("plus", "by_dataset")}
    config = _mempp_config(SystemSpec(spec.name, spec.kind, spec.k, params))
    try:
        options = PlusOptions(**dict(spec.params.get("plus") or {}))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"system.plus ({spec.name}): {exc}") from exc
    return PlusMemory(config, options, encoder=encoder)


@dataclass
class WriteTimeLLM:
    """Where the write-time systems' model calls go: the run's LLM cache and ``cache_only`` flag."""

    cache: KVStore | None = None
    cache_only: bool = False


def make_complete(spec: SystemSpec, llm: WriteTimeLLM) -> tuple[Complete, LLMClient]:
    """The ``complete(messages, response_format)`` callable over one cached client built from
    ``system.llm`` (model, base_url, api_key_env, ...). ``response_format`` is not sent (the client
    has no such field); it enters the cache key, and the prompts ask for JSON themselves."""
    raw = dict(spec.params.get("llm") or {})
    if llm.cache is None:
        raise ConfigError(f"system ({spec.name}): a write-time model needs the run's LLM cache")
    raw.pop("name", None)
    try:
        client = LLMClient(LLMConfig(cache_only=llm.cache_only, **raw), llm.cache)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"system.llm ({spec.name}): {exc}") from exc

    def complete(messages: list[dict[str, str]], response_format: dict[str, Any] | None = None) -> str:
        request = ChatRequest(messages=messages, template_hash=stable_hash({"response_format": response_format}))
        result = client.complete(request)
        if not result.ok:
            raise CallFailed(result.error or "failed")
        return result.text

    return complete, client


def _consolidated(spec: SystemSpec, encoder: CachedEncoder, llm: WriteTimeLLM) -> MemorySystem:
    from memplusplus.consolidation import ConsolidatedMemPP

    complete, client = make_complete(spec, llm)
    try:
        system = ConsolidatedMemPP(_mempp_config(spec), complete, tau=float(spec.params.get("tau", 0.85)), encoder=encoder)
    except ValueError as exc:
        raise ConfigError(f"system ({spec.name}): {exc}") from exc
    system.llm_client = client
    return system


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


def _graph(spec: SystemSpec, encoder: CachedEncoder, llm: WriteTimeLLM) -> MemorySystem:
    from memplusplus.graph import GraphMemPP

    complete, client = make_complete(spec, llm)
    options = {"chunk_turns": int(spec.params.get("chunk_turns", 10)), "graph_as_of": bool(spec.params.get("graph_as_of", False))}
    try:
        system = GraphMemPP(_mempp_config(spec), complete, encoder=encoder, **options)
    except ValueError as exc:
        raise ConfigError(f"system ({spec.name}): {exc}") from exc
    system.llm_client = client
    return system


def _fact_index(spec: SystemSpec, encoder: CachedEncoder, llm: WriteTimeLLM) -> MemorySystem:
    from memplusplus.fact_index import FactIndexMemPP

    complete, client = make_complete(spec, llm)
    system = FactIndexMemPP(_mempp_config(spec), complete, encoder=encoder)
    system.llm_client = client
    return system


WRITE_TIME_BUILDERS: dict[str, Callable[[SystemSpec, CachedEncoder, WriteTimeLLM], MemorySystem]] = {
    "mempp_consolidated": _consolidated,
    "mempp_g": _graph,
    "mempp_fact_index": _fact_index,
}

BUILDERS: dict[str, Callable[[SystemSpec, CachedEncoder], MemorySystem]] = {
    "mempp": _mempp,
    "mempp_plus": _mempp_plus,
    "bm25": _with_params(BM25Memory, uses_encoder=False),
    "vector": _with_params(VectorMemory, uses_encoder=True),
    "rag": _with_params(RAGMemory, uses_encoder=True),
    "full_context": _full_context,
    "mem0": mem0_adapter.build,
    "zep": zep_adapter.build,
}


def build_system(
    spec: SystemSpec, encoder: CachedEncoder, llm: WriteTimeLLM | None = None, cache_dir: str | None = None
) -> MemorySystem:
    """``llm``: where write-time model calls go; ``cache_dir``: the run's cache folder (an embedded
    Postgres lives there)."""
    if spec.kind in WRITE_TIME_BUILDERS:
        return WRITE_TIME_BUILDERS[spec.kind](spec, encoder, llm or WriteTimeLLM())
    if spec.kind not in BUILDERS:
        known = sorted([*BUILDERS, *WRITE_TIME_BUILDERS])
        raise ConfigError(f"system.kind={spec.kind!r} is unknown; known kinds are {known}")
    if spec.kind == "mempp":
        return _mempp(spec, encoder, cache_dir)
    return BUILDERS[spec.kind](spec, encoder)
