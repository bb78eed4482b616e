"""What the harness knows of a memory system, in one record per kind: :class:`SystemEntry`.

An entry holds how to build the system from one :class:`RunContext`, what it embeds (for a dry
run's embedding price), the rule its write-time model calls follow (for a dry run's call count),
its version (part of the retrieval-cache identity) and, through :class:`BuiltSystem`, the model
client it calls and how it is closed. Entries are declared per family beside this module
(``mempp_family``, ``baselines``, ``thirdparty``) or, for a user's own memory, made from a Hydra
``_target_`` (``custom``); the runner, the dry-run estimates and the CLI read only entries.

Only the harness imports this package (baselines and memplusplus never import harness).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from harness.validate import check_model
from memory_protocol import ConfigError, Episode, MemorySystem
from model_clients.embedding_cost import EmbedRule
from model_clients.kvstore import KVStore
from model_clients.llm_client import LLMClient, LLMConfig
from model_clients.model_listing import check_model_offered


@dataclass(frozen=True)
class SystemSpec:
    """``kind`` picks the implementation; ``params`` are its constructor settings."""

    name: str
    kind: str
    k: int
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RunContext:
    """Everything a builder may use: the system's settings, the run's encoder, its cache folder
    (stores such as an embedded Postgres or Qdrant live under it), the LLM request cache and
    whether a miss is an error (``cache_only``), and whether progress bars are shown."""

    spec: SystemSpec
    encoder: Any  # memplusplus.encoder.CachedEncoder
    cache_dir: str
    llm_cache: KVStore | None = None
    cache_only: bool = False
    progress: bool = False


@dataclass(frozen=True)
class BuiltSystem:
    """A built memory and the chat client it calls (None: it calls no model); the runner reads the
    client's counters and closes both through :meth:`close`."""

    memory: MemorySystem
    client: LLMClient | None = None

    def close(self) -> None:
        """Close the memory (its stores, proxy) and then its client; both are optional and idempotent."""
        for owner in (self.memory, self.client):
            close = getattr(owner, "close", None)
            if callable(close):
                close()


WriteCalls = Callable[[dict[str, Any], Episode], tuple[list[str], str]]
# A system's own context layout: hits and the reading budget -> the rendered context and, per hit in
# rank order, (start, length, sources) of its text in the full context (for the in-budget metrics).
ContextLayout = Callable[[Sequence[Any], "int | None"], tuple[Any, Sequence[Any]]]


@dataclass(frozen=True)
class SystemEntry:
    """One kind of memory system.

    ``build``: the system for a run. ``embeds``: what it embeds given its settings (``None``:
    nothing). ``write_calls``: for a system that calls a model at write time, the text each call
    would carry for one episode and the rule that gives their number (``None``: no write-time call).
    ``version``: bump when the system's output changes for the same settings, so the retrieval cache
    stops serving older rankings (0 leaves it out of the identity). ``check``: validates the settings
    when the config is read, before any data. ``context_chars``: before retrieval, the characters
    of one retrieved unit when it is not a document (RAG: a chunk). ``leg_note``: the run ends with
    a note on Mem++ legs that placed no row. ``context``: the system's own context layout (None:
    the harness's ranked blocks, ``memplusplus.evidence.render``); it returns the rendered context
    and where each hit's text sits in it (objects with ``start``, ``length``, ``sources``).
    ``not_comparable``: why its numbers cannot stand beside the paper's row of the same name (None:
    they can); the tables then print ours alone, with this reason as a footnote. ``diagnoses``: the built memory
    reports where given documents ranked in each leg and in the fused list (``diagnose``), which
    the records keep to explain a miss.
    """

    kind: str
    build: Callable[[RunContext], BuiltSystem]
    embeds: Callable[[dict[str, Any]], EmbedRule] | None = None
    write_calls: WriteCalls | None = None
    version: int = 0
    check: Callable[[SystemSpec], None] | None = None
    context_chars: Callable[[dict[str, Any]], int] | None = None
    leg_note: bool = False
    context: ContextLayout | None = None
    not_comparable: str | None = None
    diagnoses: bool = False  # its memory has diagnose(query, as_of, doc_ids, depth): per-leg and fused ranks

    def embed_rule(self, params: dict[str, Any]) -> EmbedRule:
        return self.embeds(params) if self.embeds is not None else EmbedRule()


def registry_of(*families: Sequence[SystemEntry]) -> dict[str, SystemEntry]:
    """The entries of ``families`` by kind; a kind declared twice is a programming error."""
    entries: dict[str, SystemEntry] = {}
    for family in families:
        for entry in family:
            if entry.kind in entries:
                raise ValueError(f"system kind {entry.kind!r} is declared twice")
            entries[entry.kind] = entry
    return entries


def write_time_endpoint(spec: SystemSpec, cache_only: bool = False) -> LLMConfig:
    """``system.llm`` (the model a system calls at write time) as the one endpoint type, checked by
    :func:`harness.validate.check_model` like an answerer or a judge."""
    raw = dict(spec.params.get("llm") or {})
    raw.pop("name", None)
    # Write-time calls go one by one through LLMClient.complete, always live (harness.batch_switch):
    # a batch setting here is resolved by the run config and never reaches the client.
    raw.pop("batch", None)
    section = "system.llm"
    check_model(section, raw)
    known = {f.name for f in fields(LLMConfig)} - {"cache_only"}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ConfigError(f"{section} ({spec.name}): unknown key(s) {unknown}; known keys are {sorted(known)}")
    return LLMConfig(**raw, cache_only=cache_only)


def write_time_client(context: RunContext) -> LLMClient:
    """The cached client over ``system.llm``, on the run's LLM cache."""
    if context.llm_cache is None:
        raise ConfigError(f"system ({context.spec.name}): a write-time model needs the run's LLM cache")
    endpoint = write_time_endpoint(context.spec, context.cache_only)
    if not context.cache_only:  # before ingesting: a model the server does not list stops the run here
        check_model_offered(endpoint, "system.llm")
    return LLMClient(endpoint, context.llm_cache, role="system.llm")


def written_documents(episode: Episode) -> list[Any]:
    """The documents a write-time system writes (empty ones are skipped)."""
    return [d for d in episode.documents if d.text.strip()]
