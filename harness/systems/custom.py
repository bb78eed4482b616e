"""A user's own memory, named by ``_target_: package.module.Name`` in their system config: a
:class:`SystemEntry`, or a class / factory called as ``Name(k=k, **settings)``. The current folder is
tried on ``sys.path`` too, so a module beside the config folder works when run from there.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

from harness.systems.registry import BuiltSystem, RunContext, SystemEntry
from memory_protocol import ConfigError


def is_target(kind: str) -> bool:
    """A kind naming an importable object (``module.Name``), not a registered kind."""
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
    """The entry of a ``_target_``: the object when it is one, else an entry building it (nothing to price)."""
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
