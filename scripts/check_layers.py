"""Which of our top-level packages each one imports (any import, in functions too), checked against
the layer arrows of ``ALLOWED``; exits 1 on a forbidden arrow or a cycle.

    python scripts/check_layers.py
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("memory_protocol", "memplusplus", "model_clients", "baselines", "loaders", "judges", "harness")
ALLOWED = {
    "memory_protocol": set(),
    "memplusplus": {"memory_protocol"},
    "model_clients": {"memory_protocol", "memplusplus"},
    "baselines": {"memory_protocol", "memplusplus", "model_clients"},
    "loaders": {"memory_protocol"},
    "judges": {"memory_protocol", "memplusplus", "model_clients"},
    "harness": set(PACKAGES) - {"harness"},
}


def imported_packages(package: str) -> set[str]:
    found: set[str] = set()
    for path in (ROOT / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            found.update(name.split(".")[0] for name in names)
    return (found & set(PACKAGES)) - {package}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle a depth-first walk finds, from where it closes."""
    found: list[list[str]] = []

    def walk(node: str, path: list[str]) -> None:
        for nxt in sorted(graph.get(node, ())):
            if nxt in path:
                found.append(path[path.index(nxt):] + [nxt])
            elif nxt in graph:
                walk(nxt, [*path, nxt])

    for start in graph:
        walk(start, [start])
    return found


def main() -> int:
    graph = {package: imported_packages(package) for package in PACKAGES}
    problems = []
    for package, imports in graph.items():
        print(f"{package:16s} -> {', '.join(sorted(imports)) or '(nothing of ours)'}")
        for bad in sorted(imports - ALLOWED[package]):
            problems.append(f"{package} imports {bad}")
    problems += [" -> ".join(cycle) for cycle in cycles(graph)]
    for problem in problems:
        print(f"layer violation: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
