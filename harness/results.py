"""A run's results: its summary and tables, the identity that names its folder, and the folder written
as one unit (:func:`harness.safe_write.write_run_folder`). Every label in a path is reduced to a safe
part first; later runs of the same configuration keep the first run's cost and timing and append theirs
to ``history.jsonl``."""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from harness.prompts import display_name
from harness.qa import qa_summary
from harness.rescore import errata_keys, errata_note
from harness.safe_write import append_line, folder_lock, read_lines, write_run_folder
from judges.aggregate import console_table, format_table, summarize
from judges.metrics.ranking import retrieval_summary_keys
from model_clients.kvstore import stable_hash

if TYPE_CHECKING:
    from harness.plan import RunPlan
    from harness.qa import QAItem, QAOutcome
    from model_clients.call_counts import ModelCallTally

HASH_CHARS = 10
MAX_NAME_CHARS = 120
_UNSAFE = re.compile(r"[^A-Za-z0-9._=,+@-]+")
# Overrides that say nothing about what was computed (by top-level key), and those the label carries.
_QUIET_ROOTS = ("progress", "estimate", "cache_only", "run_name", "store", "hydra", "print", "batch")
_IN_LABEL = ("system", "answerer")
_record_line = partial(json.dumps, ensure_ascii=False, sort_keys=True)


@dataclass
class RunResult:
    paths: RunPaths | None
    summary: pd.DataFrame | None
    table: str
    records: list[dict[str, Any]]
    stats: dict[str, Any] = field(default_factory=dict)
    estimates: list[Any] = field(default_factory=list)  # estimate=true: CostEstimate and WriteTimeEstimate
    embedding_estimate: Any = None  # estimate=true: texts still to embed, priced (an EmbeddingEstimate)
    console: str = ""  # the table as the console prints it by default (headline columns, <= 120 characters a line)


class _InRoot:
    def __init__(self, filename: str) -> None:
        self.filename = filename

    def __get__(self, paths: RunPaths, owner: type | None = None) -> Path:
        return paths.root / self.filename


@dataclass(frozen=True)
class RunPaths:
    root: Path

    records = _InRoot("records.jsonl")
    summary_md = _InRoot("summary.md")
    metrics = _InRoot("metrics.json")
    history = _InRoot("history.jsonl")


def write(plan: RunPlan, items: list[QAItem], qa: QAOutcome | None, calls: ModelCallTally) -> RunResult:
    """Finish the run's counts, summarise its records under a title, name the run by its identity and
    store its folder."""
    config, benchmark, dataset = plan.config, plan.benchmark, plan.config.dataset
    records, stats = [item.record for item in items], plan.stats
    rows = [{"category": r["category"], **r["metrics"]} for r in records]
    stats.update({**(qa.stats if qa is not None else {}),
                  "mean_read_chars": sum(r["read_chars"] for r in records) / max(len(records), 1),
                  **plan.encoder.stats(), "seconds_load": round(plan.loaded - plan.started, 3),
                  "seconds_total": round(time.perf_counter() - plan.started, 3), "model_calls": calls.as_dict()})
    label = config.run_name or config.system.name + (f"__{config.answerer_name}" if config.answerer else "")
    extra: dict[str, Any] = {"stats": stats}
    judged, stage, wording = [], "retrieval", ""
    if qa is not None:
        judged = qa.metric_keys
        stage = f"answers by {display_name(config.answerer)}, judged {qa.runs}x by {display_name(config.judge)}"
    if qa is not None and qa.prompts is not None:
        # Official and own wording give different numbers: never the same run folder.
        wording = qa.prompts.title_note
        extra.update(wording=qa.prompts.label, answer_wording=qa.prompts.answer_source,
                     judge_wording=qa.prompts.judge_source, answer_recipe=qa.prompts.recipe, prompts=qa.prompts.record())
    errata = dataset.errata if qa is not None and plan.errata else None
    if errata:
        judged = errata_keys(judged, qa.metric)
    metric_keys = judged + retrieval_summary_keys(plan.ks, plan.sessions)
    summary = summarize(rows, metric_keys, exclude_from_overall=benchmark.overall_excludes(answered=qa is not None))
    if qa is not None:
        summary = qa_summary(summary, qa)
    plumbing = " [PLUMBING CHECK: local SmolLM2, not a model score]" if stats.get("plumbing") else ""
    budget = f", budget={dataset.context_budget}" if dataset.context_budget is not None else ""  # no budget: no cut
    title = f"{label} on {dataset.name}: {stage} (k={config.system.k}{budget}){plumbing}{wording}"
    table = f"{title}\n\n{format_table(summary)}" + (f"\n\n{errata_note(errata, qa.metric)}" if errata else "")
    extras = [*errata_keys([qa.metric], qa.metric)[1:], *benchmark.extra_metrics] if errata else benchmark.extra_metrics
    console = console_table(summary, title, qa.metric if qa is not None else None, extras if qa is not None else (),
                            system_k=max(config.system.k, dataset.metric_depth or 0)).text
    extra["provenance"] = plan.provenance
    paths = run_folder(config.store.results_dir, dataset.name, label, stable_hash(plan.run_identity), plan.overrides)
    write_run(paths, plan.resolved, records, summary, table, extra)
    return RunResult(paths, summary, table, records, stats, console=console)


def safe_part(text: Any, fallback: str = "run") -> str:
    """``text`` as one harmless path component (``../../x`` -> ``x``; ``/abs/path`` -> ``abs_path``)."""
    cleaned = _UNSAFE.sub("_", str(text))
    cleaned = re.sub(r"\.{2,}", "_", cleaned)  # no '..' anywhere
    cleaned = cleaned.strip("._-")
    return cleaned[:MAX_NAME_CHARS] or fallback


def readable_suffix(overrides: list[str] | None) -> str:
    """The overrides that changed the run, as a folder-name part (``progress=false`` etc. left out)."""
    kept = []
    for item in overrides or []:
        item = item.lstrip("+~")
        key = item.split("=", 1)[0]
        if key.split(".", 1)[0] not in _QUIET_ROOTS and key not in _IN_LABEL:
            kept.append(item)
    return safe_part(",".join(kept), fallback="") if kept else ""


def run_folder(results_dir: str | Path, dataset: str, label: str, config_hash: str,
               overrides: list[str] | None = None) -> RunPaths:
    """``<results_dir>/<dataset>/<label>[__<overrides>]-<hash>``; an existing folder with the same
    dataset and hash is reused whatever its name (the same configuration reached another way)."""
    parent = Path(results_dir) / safe_part(dataset, "dataset")
    short = config_hash[:HASH_CHARS]
    existing = sorted(p for p in parent.glob(f"*-{short}") if p.is_dir()) if parent.is_dir() else []
    if existing:
        return RunPaths(existing[0])
    name = safe_part(label)
    suffix = readable_suffix(overrides)
    if suffix:
        name = f"{name}__{suffix}"[:MAX_NAME_CHARS]
    return RunPaths(parent / f"{name}-{short}")


def write_run(paths: RunPaths, config: dict[str, Any], records: list[dict[str, Any]], summary: pd.DataFrame,
              summary_text: str, extra: dict[str, Any]) -> None:
    """Write the run as one unit, the history line included. ``extra``: ``stats`` and ``provenance``;
    a folder already holding the same summary keeps its first run's, this run goes to history only."""
    files = {"config.json": json.dumps(config, indent=2, sort_keys=True, default=str),
             "records.jsonl": "\n".join(map(_record_line, records)) + ("\n" if records else ""),
             "summary.csv": summary.to_csv(index_label="category"), "summary.md": summary_text + "\n"}
    write_run_folder(paths.root, files, {"summary": json.loads(summary.to_json(orient="index")), **extra}, extra)


def append_history(paths: RunPaths, entry: dict[str, Any]) -> None:
    """One line per run of this folder, appended whole (a torn line is set aside first)."""
    with folder_lock(paths.root):
        append_line(paths.history, json.dumps(entry, sort_keys=True, default=str))


def read_history(paths: RunPaths) -> list[dict[str, Any]]:
    """The runs recorded in ``history.jsonl``, oldest first."""
    return [json.loads(line) for line in read_lines(paths.history) if line.strip()]
