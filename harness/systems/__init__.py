"""Memory systems as entries (:class:`SystemEntry`), by family, or a user's own ``_target_:
package.module.Name`` (a :class:`SystemEntry`, or a class / factory called as ``Name(k=k, **settings)``;
the current folder is tried on ``sys.path`` too, so a module beside the config folder works from there)."""

from __future__ import annotations

import importlib
import os
import sys

from harness.systems import baselines, mempp_family, thirdparty
from harness.systems.registry import BuiltSystem, RunContext, SystemEntry, SystemSpec
from memory_protocol import ConfigError

__all__ = ["REGISTRY", "BuiltSystem", "RunContext", "SystemEntry", "build_system", "entry_for", "write_time_kinds"]

REGISTRY: dict[str, SystemEntry] = {}
for _entry in (*mempp_family.ENTRIES, *baselines.ENTRIES, *thirdparty.ENTRIES):
    if _entry.kind in REGISTRY:
        raise ValueError(f"system kind {_entry.kind!r} is declared twice")
    REGISTRY[_entry.kind] = _entry


def _target_entry(target: str) -> SystemEntry:
    """The entry of a ``_target_``: the object when it is one, else an entry building it (nothing to price)."""
    module_name, _, attribute = target.rpartition(".")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.append(os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"system._target_={target!r}: cannot import {module_name!r} ({exc})") from exc
    if not hasattr(module, attribute):
        raise ConfigError(f"system._target_={target!r}: {module_name!r} has no {attribute!r}")
    found = getattr(module, attribute)
    if isinstance(found, SystemEntry):
        return found
    if not callable(found):
        raise ConfigError(f"system._target_={target!r} is neither a SystemEntry nor a class or function")

    def build(context: RunContext) -> BuiltSystem:
        try:
            return BuiltSystem(found(k=context.spec.k, **context.spec.params))
        except TypeError as exc:
            raise ConfigError(f"system ({context.spec.name}): {target}: {exc}") from exc

    return SystemEntry(target, build)


def entry_for(spec: SystemSpec) -> SystemEntry:
    """The entry of ``spec.kind``: a registered kind, or a ``_target_`` naming an importable object."""
    if spec.kind in REGISTRY:
        return REGISTRY[spec.kind]
    if "." in spec.kind:
        return _target_entry(spec.kind)
    raise ConfigError(f"system.kind={spec.kind!r} is unknown; known kinds are {sorted(REGISTRY)} "
                      f"(or give system._target_: module.Name for your own memory)")


def write_time_kinds() -> list[str]:
    """The registered kinds that call a model at write time."""
    return sorted(kind for kind, entry in REGISTRY.items() if entry.write_calls is not None)


def build_system(context: RunContext) -> BuiltSystem:
    """Build the system ``context.spec`` names, with the run's encoder, cache folder and LLM cache."""
    return entry_for(context.spec).build(context)
