"""Memory systems as entries (:class:`SystemEntry`), by family, or a user's own ``_target_``."""

from __future__ import annotations

from harness.systems import baselines, mempp_family, thirdparty
from harness.systems.custom import is_target, target_entry
from harness.systems.registry import BuiltSystem, RunContext, SystemEntry, SystemSpec, registry_of
from memory_protocol import ConfigError

__all__ = ["REGISTRY", "BuiltSystem", "RunContext", "SystemEntry", "build_system", "entry_for", "write_time_kinds"]

REGISTRY: dict[str, SystemEntry] = registry_of(mempp_family.ENTRIES, baselines.ENTRIES, thirdparty.ENTRIES)


def entry_for(spec: SystemSpec) -> SystemEntry:
    """The entry of ``spec.kind``: a registered kind, or a ``_target_`` naming an importable object."""
    if spec.kind in REGISTRY:
        return REGISTRY[spec.kind]
    if is_target(spec.kind):
        return target_entry(spec.kind)
    raise ConfigError(f"system.kind={spec.kind!r} is unknown; known kinds are {sorted(REGISTRY)} "
                      f"(or give system._target_: module.Name for your own memory)")


def write_time_kinds() -> list[str]:
    """The registered kinds that call a model at write time."""
    return sorted(kind for kind, entry in REGISTRY.items() if entry.write_calls is not None)


def build_system(context: RunContext) -> BuiltSystem:
    """Build the system ``context.spec`` names, with the run's encoder, cache folder and LLM cache."""
    return entry_for(context.spec).build(context)
