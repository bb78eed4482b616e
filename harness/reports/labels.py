"""What the tables know about datasets, metrics and systems (from the benchmark descriptions and
the metric registry). Adding a system to the tables is one line in ``SYSTEMS``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.benchmarks import Benchmark, benchmark_path, load_benchmark
from memory_protocol import ConfigError

# The benchmarks of the paper's tables, in the column order of Table 4.
PAPER_BENCHMARKS: tuple[Benchmark, ...] = tuple(
    load_benchmark(f"harness.benchmarks.{name}") for name in ("orgmem", "locomo", "longmemeval_s")
)
CATEGORY_TABLES = (1, 2, 3)  # the paper's per-category tables, one benchmark each

DATASET_LABELS = {b.name: b.label for b in PAPER_BENCHMARKS}
HEADLINE = {b.name: b.headline for b in PAPER_BENCHMARKS}
JUDGE_METRICS = {b.name: list(b.shown_metrics) for b in PAPER_BENCHMARKS}
FALLBACK_METRICS = ["recall_any@50", "recall_all@50", "in_budget_recall"]
K_SWEEP_FALLBACK = ["recall_any@all", "in_budget_recall"]

# (column label, summary category) per dataset, in display order.
CATEGORY_COLUMNS = {b.name: list(b.categories) for b in PAPER_BENCHMARKS}
TABLE_BENCHMARK = {table: b for b in PAPER_BENCHMARKS for table in b.tables if table in CATEGORY_TABLES}
TABLE_DATASET = {table: b.name for table, b in TABLE_BENCHMARK.items()}


def headline_of(dataset: Mapping[str, Any]) -> str:
    """The headline metric of a run's dataset config (its benchmark module, else a paper
    benchmark of that name, else ``score``)."""
    try:
        return load_benchmark(benchmark_path(dataset)).headline
    except ConfigError:
        return HEADLINE.get(str(dataset.get("name", "")), "score")


@dataclass(frozen=True)
class SystemRow:
    """One of our systems: its run label and the paper's row label in each table it appears in."""

    system: str
    paper_rows: dict[int, str] = field(default_factory=dict)
    ablation: bool = False


# Table 1 prints a single "RAG" row on OrgMemBench; the paper's text available here does not give its
# chunk size, so it is mapped to rag_4096, the RAG baseline of the line of work its other tables copy
# (Tables 2 and 3 print RAG-2048 and RAG-4096 separately). Change the one entry below to remap it.
SYSTEMS: list[SystemRow] = [
    SystemRow("full_context", {1: "Full Context", 2: "Full Context", 3: "Full Context", 7: "Full Context"}),
    SystemRow("rag_2048", {2: "RAG-2048"}),
    SystemRow("rag_4096", {1: "RAG", 2: "RAG-4096"}),
    SystemRow("bm25"),
    SystemRow("vector"),
    SystemRow("mempp", {1: "Mem++", 2: "Mem++", 3: "Mem++", 4: "Mem++"}),
    SystemRow("mempp_no_vector", {4: "w/o vector leg"}, ablation=True),
    SystemRow("mempp_no_lexical", {4: "w/o lexical leg"}, ablation=True),
    SystemRow("mempp_no_tag", {4: "w/o tag leg"}, ablation=True),
    SystemRow("mempp_consolidated", {4: "w/ consolidation"}, ablation=True),
    SystemRow("mempp_fact_index", {4: "w/ fact index"}, ablation=True),
    SystemRow("mempp_g", {1: "Mem^g++", 2: "Mem^g++", 3: "Mem^g++", 4: "Mem^g++"}),
    SystemRow("mem0", {1: "Mem0", 2: "Mem0"}),
    SystemRow("zep", {1: "Zep", 2: "Zep", 3: "Zep"}),
]
BY_SYSTEM = {row.system: row for row in SYSTEMS}


def paper_row(system: str, table: int) -> str | None:
    """The paper's row label for ``system`` in ``table`` (None: the paper has no such row)."""
    row = BY_SYSTEM.get(system)
    return None if row is None else row.paper_rows.get(table)


def any_paper_row(system: str) -> str | None:
    """The system's row label in the first table that prints it (None: no table does)."""
    row = BY_SYSTEM.get(system)
    return next(iter(row.paper_rows.values()), None) if row is not None else None


def system_rank(system: str) -> tuple[int, str]:
    names = [row.system for row in SYSTEMS]
    return (names.index(system), system) if system in names else (len(names), system)


def is_ablation(system: str) -> bool:
    row = BY_SYSTEM.get(system)
    return bool(row and row.ablation)
