"""Which of our top-level packages each one imports (any import, in functions too), checked against
the layer arrows of ``ALLOWED``, and every module against import circles; exits 1 on a forbidden
arrow or a circle.

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


def module_graph(root: Path, packages: tuple[str, ...] = PACKAGES) -> dict[str, set[str]]:
    """Each module of ours -> the modules of ours it imports (anywhere in it). ``from pkg import sub``
    of a submodule counts as importing ``pkg.sub`` only: the parent package comes with any submodule."""
    files = {".".join(f.relative_to(root).with_suffix("").parts).removesuffix(".__init__"): f
             for package in packages for f in (root / package).rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        is_package = path.name == "__init__.py"
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                parts = module.split(".")
                base = parts[: len(parts) - node.level + (1 if is_package else 0)] if node.level else []
                source = ".".join([*base, *([node.module] if node.module else [])])
                subs = {f"{source}.{alias.name}" for alias in node.names} & files.keys()
                found |= subs if subs else {source}
        graph[module] = (found & files.keys()) - {module}
    return graph


def module_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        while work:
            node, successors = work[-1]
            nxt = next(successors, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = stack[stack.index(node):]
                del stack[stack.index(node):]
                if len(group) > 1:
                    circles.append(sorted(group))
    return circles


def main() -> int:
    graph = {package: imported_packages(package) for package in PACKAGES}
    problems = []
    for package, imports in graph.items():
        print(f"{package:16s} -> {', '.join(sorted(imports)) or '(nothing of ours)'}")
        for bad in sorted(imports - ALLOWED[package]):
            problems.append(f"{package} imports {bad}")
    problems += [" -> ".join(cycle) for cycle in cycles(graph)]
    problems += [f"import circle: {' <-> '.join(group)}" for group in module_circles(module_graph(ROOT))]
    for problem in problems:
        print(f"layer violation: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
