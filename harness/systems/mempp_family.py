"""Mem++ and its variants as registry entries: the paper's memory (in memory or on Postgres),
Mem++ plus, and the three write-time variants that call a model through the run's cached client."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from harness.systems.registry import (BuiltSystem, RunContext, SystemEntry, SystemSpec, write_time_client,
                                     write_time_endpoint, written_documents)
from harness.validate import as_typed, float_setting, int_setting
from memory_protocol import ConfigError, Episode
from memplusplus.settings import LEGS
from memplusplus.llm import CallFailed, Complete
from memplusplus.memory import MemPlusPlus, MemPPConfig
from model_clients.embedding_cost import EmbedRule
from model_clients.kvstore import stable_hash
from model_clients.llm_client import ChatRequest, LLMClient

WRITE_TIME_KEYS = ("llm", "tau", "graph_as_of", "chunk_turns", "backend")


def _check_mempp(params: Mapping[str, Any], k: int) -> None:
    """Mem++'s settings: a positive RRF constant, known legs, a weight > 0 on a run leg, a reserve <= k."""
    if "gamma" in params:
        float_setting("system.gamma", params["gamma"], above=0, allowed=" (the RRF constant; the paper uses 60)")
    legs = params.get("legs", list(LEGS))
    if not isinstance(legs, (list, tuple)) or any(leg not in LEGS for leg in legs):
        raise ConfigError(f"system.legs={as_typed(legs)}: must be a list of legs from {list(LEGS)}")
    weights = params.get("weights")
    if not isinstance(weights, Mapping):
        raise ConfigError(f"system.weights={as_typed(weights)}: must map legs {list(LEGS)} to numbers >= 0")
    unknown = sorted(set(weights) - set(LEGS))
    if unknown:
        raise ConfigError(f"system.weights: unknown leg(s) {unknown}; legs are {list(LEGS)}")
    values = {leg: float_setting(f"system.weights.{leg}", w, at_least=0) for leg, w in weights.items()}
    if not any(values.get(leg, 0.0) > 0 for leg in legs):
        raise ConfigError(
            f"system.weights={as_typed(dict(weights))} with system.legs={as_typed(list(legs))}: every leg that runs has "
            f"weight 0, so nothing would be ranked; give at least one leg a weight > 0"
        )
    for key, low, high, allowed in (("candidates", 1, None, " (C, the most rows a leg returns)"),
                                    ("recency_reserve", 0, k, f" (at most system.k={k})"),
                                    ("min_term_chars", 1, None, ""), ("max_query_terms", 1, None, " or null (no cap)")):
        if key in params and (params[key] is not None or key in ("candidates", "recency_reserve")):  # two may be null
            int_setting(f"system.{key}", params[key], low, high, allowed=allowed)


def mempp_settings(spec: SystemSpec) -> MemPPConfig:
    """Mem++'s settings from ``spec``, checked; the variants' own keys (``llm``, ``tau``, ...) left out."""
    _check_mempp(spec.params, spec.k)
    params = {key: value for key, value in spec.params.items() if key not in (*WRITE_TIME_KEYS, "plus")}
    legs = list(params.pop("legs", LEGS))
    all_weights = dict(params.pop("weights"))
    weights = {leg: float(all_weights.get(leg, 0.0)) if leg in legs else 0.0 for leg in LEGS}
    try:
        return MemPPConfig(weights=weights, k=spec.k, **params)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"system ({spec.name}): {exc}") from exc


def _vector_leg(params: dict[str, Any]) -> bool:
    legs = params.get("legs", LEGS)
    return "vector" in legs and float(dict(params.get("weights", {})).get("vector", 0)) > 0


def _embeds(params: dict[str, Any]) -> EmbedRule:
    """Every document whatever the legs (paper §3: the row keeps its embedding); a question for the vector leg."""
    return EmbedRule(documents=True, questions=_vector_leg(params))


def _build_mempp(context: RunContext) -> BuiltSystem:
    config = mempp_settings(context.spec)
    backend = context.spec.params.get("backend", "memory")
    if backend == "postgres":  # $POSTGRES_URL, else an embedded server in the run's cache folder
        from memplusplus.pg import PostgresMemPlusPlus

        return BuiltSystem(PostgresMemPlusPlus(config, encoder=context.encoder, data_dir=f"{context.cache_dir}/postgres"))
    if backend != "memory":
        raise ConfigError(f"system.backend={backend!r} is unknown; use memory or postgres")
    return BuiltSystem(MemPlusPlus(config, encoder=context.encoder))


def _plus_options(spec: SystemSpec) -> Any:
    from memplusplus.plus import PlusOptions

    try:
        return PlusOptions(**dict(spec.params.get("plus") or {}))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"system.plus ({spec.name}): {exc}") from exc


def _check_plus(spec: SystemSpec) -> None:
    mempp_settings(spec)
    _plus_options(spec)


def _build_plus(context: RunContext) -> BuiltSystem:
    from memplusplus.plus import PlusMemory

    return BuiltSystem(PlusMemory(mempp_settings(context.spec), _plus_options(context.spec), encoder=context.encoder))


def _plus_embeds(params: dict[str, Any]) -> EmbedRule:
    """Mem++'s texts, and with those levers each sentence of a row (by ``sentence_authors``) and clause of a question."""
    from memplusplus.plus.views import clauses, sentences

    plus = dict(params.get("plus") or {})
    vector, authors = _vector_leg(params), plus.get("sentence_authors")
    min_words, clause_words = int(plus.get("sentence_min_words", 4)), int(plus.get("clause_min_words", 3))

    def sentence_views(doc: Any) -> list[str]:
        return sentences(doc.text, min_words) if authors is None or doc.author in authors else []

    return EmbedRule(documents=True, questions=vector,
                     document_views=sentence_views if plus.get("sentence_views") else None,
                     question_views=(lambda q: clauses(q, clause_words)) if vector and plus.get("clause_views") else None)


def make_complete(context: RunContext) -> tuple[Complete, LLMClient]:
    """``complete(messages, response_format, max_tokens)`` over the cached ``system.llm`` client;
    ``response_format`` is not sent (the prompts ask for JSON) but keys the cache."""
    client = write_time_client(context)

    def complete(messages: list[dict[str, str]], response_format: dict[str, Any] | None = None,
                 max_tokens: int | None = None) -> str:
        result = client.complete(ChatRequest(messages=messages, max_tokens=max_tokens,
                                             template_hash=stable_hash({"response_format": response_format})))
        if not result.ok:
            raise CallFailed(result.error or "failed")
        return result.text

    return complete, client


def _write_time(context: RunContext, make: Callable[[MemPPConfig, Complete], Any]) -> BuiltSystem:
    complete, client = make_complete(context)
    try:
        return BuiltSystem(make(mempp_settings(context.spec), complete), client)
    except ValueError as exc:
        raise ConfigError(f"system ({context.spec.name}): {exc}") from exc


def _build_consolidated(context: RunContext) -> BuiltSystem:
    from memplusplus.consolidation import ConsolidatedMemPP

    tau = float(context.spec.params.get("tau", 0.85))
    return _write_time(context, lambda cfg, complete: ConsolidatedMemPP(cfg, complete, tau=tau, encoder=context.encoder))


def _build_graph(context: RunContext) -> BuiltSystem:
    from memplusplus.graph import GraphMemPP

    params = context.spec.params
    options = {"chunk_turns": int(params.get("chunk_turns", 10)), "graph_as_of": bool(params.get("graph_as_of", False))}
    return _write_time(context, lambda cfg, complete: GraphMemPP(cfg, complete, encoder=context.encoder, **options))


def _build_fact_index(context: RunContext) -> BuiltSystem:
    from memplusplus.fact_index import FactIndexMemPP

    return _write_time(context, lambda cfg, complete: FactIndexMemPP(cfg, complete, encoder=context.encoder))


def _graph_calls(params: dict[str, Any], episode: Episode) -> tuple[list[str], str]:
    from memplusplus.graph import units  # networkx (~0.07 s) only when Mem^g++ is estimated

    chunk = int(params.get("chunk_turns", 10))
    unit_texts = ["\n".join(d.text for d in unit) for unit in units(written_documents(episode), chunk)]
    rule = f"2 per write unit of 1 document or {chunk} turns, 1 per question"
    return unit_texts * 2 + [q.text for q in episode.questions], rule


def _fact_calls(params: dict[str, Any], episode: Episode) -> tuple[list[str], str]:
    return [d.text for d in written_documents(episode)], "1 per document"


def _consolidation_calls(params: dict[str, Any], episode: Episode) -> tuple[list[str], str]:
    """An upper bound: at most n/2 groups of 2+ rows, each a classify and maybe a merge call."""
    docs = written_documents(episode)
    pairs = [docs[i].text + "\n" + docs[i + 1].text for i in range(0, len(docs) - 1, 2)]
    return pairs * 2, ("at most 2 per group of 2+ similar rows (classify, then merge on a restatement); "
                       "counted as 2 per 2 documents (an upper bound)")


def _check_write_time(spec: SystemSpec) -> None:
    mempp_settings(spec)
    write_time_endpoint(spec)


ENTRIES = (  # bump a version when the output changes for the same settings (the retrieval cache key)
    SystemEntry("mempp", _build_mempp, embeds=_embeds, check=mempp_settings, leg_note=True, version=2, diagnoses=True),
    SystemEntry("mempp_plus", _build_plus, embeds=_plus_embeds, check=_check_plus, version=6, diagnoses=True),
    SystemEntry("mempp_g", _build_graph, embeds=_embeds, write_calls=_graph_calls, check=_check_write_time, version=3),
    SystemEntry("mempp_fact_index", _build_fact_index, embeds=_embeds, write_calls=_fact_calls, check=_check_write_time,
                version=3),
    SystemEntry("mempp_consolidated", _build_consolidated, embeds=_embeds, write_calls=_consolidation_calls,
                check=_check_write_time, version=3),
)
