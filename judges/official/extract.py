"""Take one constant or one function out of an upstream module with ``ast``, without importing it.

The upstream modules import openai, backoff or their own packages at top level; only the named
definition is compiled and run here (its file was checked against its pin first). A function is
compiled with postponed annotations, so names used only in annotations need not exist.
"""

from __future__ import annotations

import __future__
import ast
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from judges.official.locate import OfficialText

__all__ = ["OfficialDefinitionError", "constant", "function", "source_of"]


class OfficialDefinitionError(LookupError):
    """The upstream file has no such top-level definition (another version of the file)."""


@lru_cache(maxsize=32)
def _module(official: OfficialText) -> ast.Module:
    """The file parsed once (several constants and functions are taken from one file, per run)."""
    return ast.parse(official.text, filename=str(official.path))


def _find(official: OfficialText, name: str, kinds: tuple[type, ...]) -> ast.stmt:
    for node in _module(official).body:
        if isinstance(node, ast.Assign) and ast.Assign in kinds:
            if any(isinstance(target, ast.Name) and target.id == name for target in node.targets):
                return node
        elif isinstance(node, ast.FunctionDef) and ast.FunctionDef in kinds and node.name == name:
            return node
    raise OfficialDefinitionError(f"{official.pin.cite} defines no top-level {name}")


def constant(official: OfficialText, name: str) -> Any:
    """The literal value assigned to ``name`` at the top level (a string, a number, ...)."""
    node = _find(official, name, (ast.Assign,))
    assert isinstance(node, ast.Assign)
    return ast.literal_eval(node.value)


def source_of(official: OfficialText, name: str) -> str:
    """The exact source text of a top-level definition."""
    node = _find(official, name, (ast.Assign, ast.FunctionDef))
    segment = ast.get_source_segment(official.text, node)
    assert segment is not None
    return segment


def function(official: OfficialText, name: str, namespace: Mapping[str, Any] | None = None) -> Callable[..., Any]:
    """The top-level function ``name``, defined in a fresh namespace holding only ``namespace``
    (the modules or names its body uses) and the builtins."""
    node = _find(official, name, (ast.FunctionDef,))
    code = compile(ast.Module(body=[node], type_ignores=[]), str(official.path), "exec",
                   flags=__future__.annotations.compiler_flag, dont_inherit=True)
    scope: dict[str, Any] = dict(namespace or {})
    exec(code, scope)  # noqa: S102 - one definition from a file verified against its pinned sha256
    return scope[name]
