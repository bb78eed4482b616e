"""What the tables know about datasets, metrics and systems: plain data, one line per system.

Adding a system to the tables is one line in
``SYSTEMS``: its run label, the order it takes, and the paper's row label per table.
"""

from __future__ import annotations

from dataclasses import dataclass, field

DATASET_LABELS = {"orgmem": "OrgMemBench", "locomo": "LoCoMo", "longmemeval_s": "LongMemEval_S"}
HEADLINE = {"orgmem": "score", "locomo": "llm_judge", "longmemeval_s": "accuracy"}
JUDGE_METRICS = {"orgmem": ["score"], "locomo": ["llm_judge", "f1", "bleu1"], "longmemeval_s": ["accuracy"]}
FALLBACK_METRICS = ["recall_any@50", "recall_all@50", "in_budget_recall"]
K_SWEEP_FALLBACK = ["recall_any@all", "in_budget_recall"]
ONE_DECIMAL = {"score", "score_std", "llm_judge", "llm_judge_std", "accuracy", "accuracy_std"}
AUTO_DECIMAL = {"f1", "bleu1", "f1_std", "bleu1_std"}

# (column label, summary category) per dataset, in display order.
CATEGORY_COLUMNS = {
    "orgmem": [(c, c) for c in ("C1", "C2", "C3", "C4", "C5", "C6")] + [("overall", "overall")],
    "locomo": [("single-hop", "single-hop"), ("multi-hop", "multi-hop"), ("temporal", "temporal"),
               ("open-domain", "open-domain"), ("overall", "overall"), ("adversarial (apart)", "adversarial")],
    "longmemeval_s": [(c, c) for c in ("single-session-user", "single-session-assistant", "single-session-preference",
                                      "multi-session", "knowledge-update", "temporal-reasoning")]
    + [("task-averaged", "task_averaged"), ("overall", "overall")],
}
TABLE_DATASET = {1: "orgmem", 2: "locomo", 3: "longmemeval_s"}


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


def system_rank(system: str) -> tuple[int, str]:
    names = [row.system for row in SYSTEMS]
    return (names.index(system), system) if system in names else (len(names), system)


def is_ablation(system: str) -> bool:
    row = BY_SYSTEM.get(system)
    return bool(row and row.ablation)
