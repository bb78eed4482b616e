"""Mem0 and Zep as registry entries: each gets the cached client over ``system.llm`` and keeps its
store under the run's cache folder (neither is a setting, so neither enters the system's identity)."""

from __future__ import annotations

from typing import Any

from harness.systems.registry import (BuiltSystem, RunContext, SystemEntry, write_time_client, write_time_endpoint,
                                     written_documents)
from memory_protocol import ConfigError, Episode


def _thirdparty(module: str, class_name: str):
    def build(context: RunContext) -> BuiltSystem:
        from importlib import import_module

        memory_class = getattr(import_module(f"baselines.thirdparty.{module}"), class_name)
        client = write_time_client(context)
        spec = context.spec
        params = {key: value for key, value in spec.params.items() if key != "llm"}
        try:
            memory = memory_class(k=spec.k, client=client, store_dir=context.cache_dir, encoder=context.encoder, **params)
        except TypeError as exc:
            client.close()
            raise ConfigError(f"system ({spec.name}): {exc}") from exc
        return BuiltSystem(memory, client)

    return build


def _mem0_calls(params: dict[str, Any], episode: Episode) -> tuple[list[str], str]:
    """One extraction call per add() of ``turns_per_add`` turns of a session, for each speaker's user
    (mem0's add.py), or once for the shared user of authored documents."""
    from baselines.thirdparty.mem0 import session_batches, speakers_of

    docs = written_documents(episode)
    per_add = max(int(params.get("turns_per_add", 2)), 1)
    users = max(len(speakers_of(docs)), 1)
    adds = ["\n".join(d.text for d in batch) for batch in session_batches(docs, per_add)]
    return adds * users, f"1 per add() of up to {per_add} turn(s) of a session, for each of {users} user(s)"


def _zep_calls(params: dict[str, Any], episode: Episode) -> tuple[list[str], str]:
    return [d.text for d in written_documents(episode)] * 4, "about 4 per document (measured against fixture replies)"


def _context(name: str):
    """The library's own context layout, imported when first used."""
    def layout(hits, budget):
        from baselines.thirdparty import context

        return getattr(context, name)(hits, budget)

    return layout


ENTRIES = (
    SystemEntry("mem0", _thirdparty("mem0", "Mem0Memory"), write_calls=_mem0_calls, check=write_time_endpoint, version=1,
                context=_context("render_mem0"),
                not_comparable="the paper's Mem0 row is the hosted Mem0 platform driven by mem0's own LoCoMo "
                               "scripts (evaluation/src/memzero/ calls MemoryClient); ours is the open-source "
                               "mem0ai library run locally"),
    SystemEntry("zep", _thirdparty("zep", "ZepMemory"), write_calls=_zep_calls, check=write_time_endpoint, version=1,
                context=_context("render_zep"),
                not_comparable="the paper's Zep row is the hosted Zep cloud driven by mem0's LoCoMo scripts "
                               "(evaluation/src/zep/ calls zep_cloud); ours is the open-source graphiti-core "
                               "library on an embedded Kuzu database"),
)
