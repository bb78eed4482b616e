"""Mem++ and its variants as registry entries: the paper's memory (in memory or on Postgres),
Mem++ plus, and the three write-time variants that call a model through the run's cached client."""

from __future__ import annotations

from typing import Any

from harness.systems.registry import (BuiltSystem, RunContext, SystemEntry, SystemSpec, write_time_client,
                                     write_time_endpoint, written_documents)
from harness.validate import check_mempp
from memory_protocol import ConfigError, Episode
from memplusplus.legs import LEGS
from memplusplus.llm import CallFailed, Complete
from memplusplus.memory import MemPlusPlus, MemPPConfig
from model_clients.embedding_cost import EmbedRule
from model_clients.kvstore import stable_hash
from model_clients.llm_client import ChatRequest, LLMClient

WRITE_TIME_KEYS = ("llm", "tau", "graph_as_of", "chunk_turns", "backend")
PLUS_KEYS = ("plus",)


def mempp_settings(spec: SystemSpec) -> MemPPConfig:
    """Mem++'s settings from ``spec`` (checked by :func:`harness.validate.check_mempp`, the one
    place they are); keys of the variants (``system.llm``, ``tau``, ``plus``, ...) are not Mem++'s."""
    params = {key: value for key, value in spec.params.items() if key not in (*WRITE_TIME_KEYS, *PLUS_KEYS)}
    check_mempp(params, spec.k)
    legs = list(params.pop("legs", LEGS))
    all_weights = dict(params.pop("weights"))
    weights = {leg: float(all_weights.get(leg, 0.0)) if leg in legs else 0.0 for leg in LEGS}
    try:
        return MemPPConfig(weights=weights, k=spec.k, **params)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"system ({spec.name}): {exc}") from exc


def _check(spec: SystemSpec) -> None:
    mempp_settings(spec)


def _vector_leg(params: dict[str, Any]) -> bool:
    legs = params.get("legs", LEGS)
    return "vector" in legs and float(dict(params.get("weights", {})).get("vector", 0)) > 0


def _embeds(params: dict[str, Any]) -> EmbedRule:
    """Mem++ embeds every document at write whatever its legs (paper §3: the row keeps its
    embedding) and a question only for its vector leg."""
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


# ---------------------------------------------------------------- Mem++ plus
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
    """Mem++ plus (memplusplus.plus): Mem++'s settings, plus ``system.plus`` (the levers)."""
    from memplusplus.plus import PlusMemory

    memory = PlusMemory(mempp_settings(context.spec), _plus_options(context.spec), encoder=context.encoder)
    return BuiltSystem(memory)


def _plus_embeds(params: dict[str, Any]) -> EmbedRule:
    """Mem++'s texts, plus each sentence of the rows of ``sentence_authors`` (sentence views) and each
    clause of a question (clause views) when those levers are on."""
    from memplusplus.plus.views import clauses, sentences

    plus = dict(params.get("plus") or {})
    vector = _vector_leg(params)
    authors = plus.get("sentence_authors")
    min_words = int(plus.get("sentence_min_words", 4))

    def sentence_views(doc: Any) -> list[str]:
        if authors is not None and doc.author not in authors:
            return []
        return sentences(doc.text, min_words)

    clause_words = int(plus.get("clause_min_words", 3))
    return EmbedRule(
        documents=True,
        questions=vector,
        document_views=sentence_views if plus.get("sentence_views") else None,
        question_views=(lambda text: clauses(text, clause_words)) if vector and plus.get("clause_views") else None,
    )


# ---------------------------------------------------------------- write-time variants
def make_complete(context: RunContext) -> tuple[Complete, LLMClient]:
    """The ``complete(messages, response_format)`` callable over one cached client built from
    ``system.llm``. ``response_format`` is not sent (the client has no such field); it enters the
    cache key, and the prompts ask for JSON themselves. ``max_tokens`` is sent, and keys the cache."""
    client = write_time_client(context)

    def complete(
        messages: list[dict[str, str]], response_format: dict[str, Any] | None = None, max_tokens: int | None = None
    ) -> str:
        request = ChatRequest(messages=messages, template_hash=stable_hash({"response_format": response_format}),
                              max_tokens=max_tokens)
        result = client.complete(request)
        if not result.ok:
            raise CallFailed(result.error or "failed")
        return result.text

    return complete, client


def _build_consolidated(context: RunContext) -> BuiltSystem:
    from memplusplus.consolidation import ConsolidatedMemPP

    complete, client = make_complete(context)
    tau = float(context.spec.params.get("tau", 0.85))
    try:
        memory = ConsolidatedMemPP(mempp_settings(context.spec), complete, tau=tau, encoder=context.encoder)
    except ValueError as exc:
        raise ConfigError(f"system ({context.spec.name}): {exc}") from exc
    return BuiltSystem(memory, client)


def _build_graph(context: RunContext) -> BuiltSystem:
    from memplusplus.graph import GraphMemPP

    params = context.spec.params
    complete, client = make_complete(context)
    options = {"chunk_turns": int(params.get("chunk_turns", 10)), "graph_as_of": bool(params.get("graph_as_of", False))}
    try:
        memory = GraphMemPP(mempp_settings(context.spec), complete, encoder=context.encoder, **options)
    except ValueError as exc:
        raise ConfigError(f"system ({context.spec.name}): {exc}") from exc
    return BuiltSystem(memory, client)


def _build_fact_index(context: RunContext) -> BuiltSystem:
    from memplusplus.fact_index import FactIndexMemPP

    complete, client = make_complete(context)
    return BuiltSystem(FactIndexMemPP(mempp_settings(context.spec), complete, encoder=context.encoder), client)


def _graph_calls(params: dict[str, Any], episode: Episode) -> tuple[list[str], str]:
    from memplusplus.graph import units  # networkx (~0.07 s) only when Mem^g++ is estimated

    chunk = int(params.get("chunk_turns", 10))
    unit_texts = ["\n".join(d.text for d in unit) for unit in units(written_documents(episode), chunk)]
    questions = [q.text for q in episode.questions]
    return unit_texts * 2 + questions, f"2 per write unit of 1 document or {chunk} turns, 1 per question"


def _fact_calls(params: dict[str, Any], episode: Episode) -> tuple[list[str], str]:
    return [d.text for d in written_documents(episode)], "1 per document"


def _consolidation_calls(params: dict[str, Any], episode: Episode) -> tuple[list[str], str]:
    """At most floor(n/2) groups of 2+ rows, each a classify call and, on a restatement, a merge
    call carrying the same texts: the upper bound is 2 calls per 2 documents."""
    docs = written_documents(episode)
    pairs = [docs[i].text + "\n" + docs[i + 1].text for i in range(0, len(docs) - 1, 2)]
    return pairs * 2, (
        "at most 2 per group of 2+ similar rows (classify, then merge on a restatement); "
        "counted as 2 per 2 documents (an upper bound)"
    )


def _check_write_time(spec: SystemSpec) -> None:
    mempp_settings(spec)
    write_time_endpoint(spec)


# Versions: every entry's rankings changed when recency-reserve ties began to keep fused order
# (mempp 1, mempp_plus 5, mempp_g 2, mempp_fact_index 2, mempp_consolidated 2); mempp's and
# mempp_plus's disjunctive lexical leg follows the authors' rules from the same versions on.
# Next: every entry's conjunctive lexical leg is the authors' websearch_to_tsquery path, and the
# disjunctive one falls back to it when no question word is left (mempp 2, mempp_plus 6 (its
# paper leg, any_term_lexical=false), mempp_g 3, mempp_fact_index 3, mempp_consolidated 3).
ENTRIES = (
    SystemEntry("mempp", _build_mempp, embeds=_embeds, check=_check, leg_note=True, version=2, diagnoses=True),
    SystemEntry("mempp_plus", _build_plus, embeds=_plus_embeds, check=_check_plus, version=6, diagnoses=True),
    # version 2: the graph read as Mem0^g (entities by embedding >= 0.7, one hop, BM25 top 5), and the reserve ties
    SystemEntry("mempp_g", _build_graph, embeds=_embeds, write_calls=_graph_calls, check=_check_write_time, version=3),
    # version 1: Mem++'s top-k rule (the recency reserve) runs over the documents, not the cards; 2: reserve ties
    SystemEntry("mempp_fact_index", _build_fact_index, embeds=_embeds, write_calls=_fact_calls, check=_check_write_time,
                version=3),
    # version 2: Algorithm 2's two calls (classify, then merge), 220 cl100k tokens, current rows only; reserve ties
    SystemEntry("mempp_consolidated", _build_consolidated, embeds=_embeds, write_calls=_consolidation_calls,
                check=_check_write_time, version=3),
)
