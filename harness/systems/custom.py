"""A user's own memory, named by a Hydra-style ``_target_`` in their own system config.

``configs/system/<name>.yaml`` in the user's config folder (``--config-dir``) holds
``_target_: package.module.Name``, ``name``, ``k`` and any keyword settings; ``Name`` is either a
:class:`~harness.systems.registry.SystemEntry` (full control: what it embeds, its version, ...) or
a class / factory called as ``Name(k=k, **settings)`` that returns a
``memory_protocol.MemorySystem``. The module is imported from ``sys.path``; the current folder is
tried too, so a module beside the config folder works when run from there.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

from harness.systems.registry import BuiltSystem, RunContext, SystemEntry
from memory_protocol import ConfigError

TARGET_KEY = "_target_"


def is_target(kind: str) -> bool:
    """A kind that names an importable object (``module.Name``) rather than a registered kind."""
    return "." in kind


def _resolve(target: str) -> Any:
    module_name, _, attribute = target.rpartition(".")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.append(os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"system._target_={target!r}: cannot import {module_name!r} ({exc})") from exc
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise ConfigError(f"system._target_={target!r}: {module_name!r} has no {attribute!r}") from None


def target_entry(target: str) -> SystemEntry:
    """The entry of a ``_target_``: the object itself when it is an entry, else one that builds it
    with the system's settings (it embeds nothing the harness could price, and calls no model the
    harness could count)."""
    found = _resolve(target)
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
