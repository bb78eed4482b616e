"""What the harness knows of a memory system, one :class:`SystemEntry` per kind: how to build it from
a :class:`RunContext`, what it embeds and which write-time calls it makes (for a dry run), its version
(part of the retrieval-cache identity) and, through :class:`BuiltSystem`, the model client it calls.
Entries are declared per family beside this module; a user's own memory comes from a ``_target_``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from harness.validate import check_keys, check_model
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
    """What a builder may use: settings, the run's encoder, its cache folder (for stores such as an
    embedded Postgres), the LLM request cache, ``cache_only`` (a miss is an error) and progress bars."""

    spec: SystemSpec
    encoder: Any  # memplusplus.encoder.CachedEncoder
    cache_dir: str
    llm_cache: KVStore | None = None
    cache_only: bool = False
    progress: bool = False


@dataclass(frozen=True)
class BuiltSystem:
    """A built memory and the chat client it calls (None: no model); :meth:`close` closes both."""

    memory: MemorySystem
    client: LLMClient | None = None

    def close(self) -> None:
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
    """One kind of memory system. ``build``: the system for a run. ``embeds``: what it embeds given its
    settings (None: nothing). ``write_calls``: the texts of its write-time model calls for one episode
    and the rule giving their number (None: no write-time call). ``version``: bump when its output
    changes for the same settings (0 is left out of the identity). ``check``: validates the settings
    with the config. ``context_chars``: the characters of a retrieved unit that is not a document
    (RAG: a chunk). ``leg_note``: note Mem++ legs that placed no row. ``context``: its own context
    layout (None: ``memplusplus.evidence.render``), returning the context and where each hit sits
    in it (``start``, ``length``, ``sources``). ``not_comparable``: why it cannot stand beside the
    paper's row of that name (a table footnote). ``diagnoses``: its memory has ``diagnose(query,
    as_of, doc_ids, depth)``, per-leg and fused ranks kept to explain a miss."""

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


def write_time_endpoint(spec: SystemSpec, cache_only: bool = False) -> LLMConfig:
    """``system.llm`` (the model a system calls at write time), checked like an answerer or a judge.
    Its calls go one by one, always live: ``batch`` is resolved by the run config, never sent."""
    raw = dict(spec.params.get("llm") or {})
    raw.pop("name", None)
    raw.pop("batch", None)
    section = "system.llm"
    check_model(section, raw)
    check_keys(f"{section} ({spec.name})", raw, {f.name for f in fields(LLMConfig)} - {"cache_only"})
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
