"""One run: plan -> retrieve -> answer and judge -> write (or, with ``estimate=true``, a dry run
of the same plan). Each answer and ranking is cached the moment it exists."""

from __future__ import annotations

import time
from typing import Any

from harness.answering import display_name
from harness.config import RunConfig
from harness.console_table import console_table
from harness.estimate import dry_run
from harness.plan import RunPlan, build_plan, settings_identity
from harness.provenance import collect as collect_provenance
from harness.qa import QAOutcome, qa_summary, run_qa
from harness.rescore import errata_keys, errata_note, mark_erratum, sound_scores
from harness.results import RunResult, run_folder, write_run
from harness.retrieval import retrieve
from harness.stage_log import LOG
from judges.aggregate import format_table, summarize
from judges.metrics.registry import retrieval_summary_keys
from model_clients.call_counts import ModelCallTally
from model_clients.chat_types import identity_fields as endpoint_settings
from model_clients.kvstore import stable_hash

# Settings that do not name a run's results (where things are stored, progress, dry runs, ...).
_UNNAMING = ("store", "progress", "estimate", "cache_only", "batch", "write_time_batch", "official_dir", "print_mode")


def run_identity(resolved: dict[str, Any]) -> dict[str, Any]:
    """The resolved config as far as it names the run's results (its folder's hash)."""
    identity = {k: v for k, v in resolved.items() if k not in _UNNAMING}
    if identity.get("answer_recipe") == "harness":  # the default names no run apart (older folders keep their hash)
        identity.pop("answer_recipe")
    if isinstance(identity.get("dataset"), dict):  # so do no errata
        identity["dataset"] = {k: v for k, v in identity["dataset"].items()
                               if not (k in ("errata", "errata_evidence") and not v)}
    for section in ("answerer", "judge"):
        if isinstance(identity.get(section), dict):
            identity[section] = endpoint_settings(identity[section])
    for section, strip in (("encoder", endpoint_settings), ("system", settings_identity)):
        value = identity.get(section)
        if isinstance(value, dict) and isinstance(value.get("params"), dict):
            identity[section] = {**value, "params": strip(value["params"])}
    return identity


def run(config: RunConfig, overrides: list[str] | None = None) -> RunResult:
    """``overrides``: the command-line overrides (plain strings), recorded and used in the folder name."""
    plan = build_plan(config)
    if config.estimate:
        return dry_run(plan)
    stats, calls = plan.stats, ModelCallTally()
    items = retrieve(plan, stats, calls)
    for item in items if plan.errata else ():
        mark_erratum(item.record, plan.errata)  # before judging: a miss on a wrong gold is the gold's
    qa = None
    if config.answerer is not None:
        LOG.stage(f"answers and judging: {len(items)} questions")
        qa = run_qa(plan, items)
        stats.update(qa.stats)
        for item in items if plan.errata else ():
            sound_scores(item.record, qa.metric)
    stats.update({**plan.encoder.stats(), "seconds_load": round(plan.loaded - plan.started, 3),
                  "seconds_total": round(time.perf_counter() - plan.started, 3),
                  "mean_read_chars": sum(i.record["read_chars"] for i in items) / max(len(items), 1),
                  "model_calls": calls.as_dict()})
    return _write(plan, [item.record for item in items], qa, stats, overrides)


def _write(plan: RunPlan, records: list[dict[str, Any]], qa: QAOutcome | None, stats: dict[str, Any],
           overrides: list[str] | None) -> RunResult:
    """Summarise the records under a title and store the run folder."""
    config, benchmark, dataset = plan.config, plan.benchmark, plan.config.dataset
    judged = qa.metric_keys if qa else []
    errata = dataset.errata if qa is not None and plan.errata else None
    if errata:
        judged = errata_keys(judged, qa.metric)
    metric_keys = judged + retrieval_summary_keys(plan.ks, plan.sessions)
    rows = [{"category": r["category"], **r["metrics"]} for r in records]
    summary = summarize(rows, metric_keys, exclude_from_overall=benchmark.overall_excludes(answered=qa is not None))
    if qa is not None:
        summary = qa_summary(summary, qa)
    label = config.run_name or config.system.name + (f"__{config.answerer_name}" if config.answerer else "")
    stage = f"answers by {display_name(config.answerer)}, judged {qa.runs}x by {display_name(config.judge)}" if qa else "retrieval"
    plumbing = " [PLUMBING CHECK: local SmolLM2, not a model score]" if stats.get("plumbing") else ""
    wording = qa.prompts.title_note if qa is not None and qa.prompts is not None else ""
    budget = f", budget={dataset.context_budget}" if dataset.context_budget is not None else ""  # no budget: no cut
    title = f"{label} on {dataset.name}: {stage} (k={config.system.k}{budget}){plumbing}{wording}"
    table = f"{title}\n\n{format_table(summary)}" + (f"\n\n{errata_note(errata, qa.metric)}" if errata else "")
    extras = [*errata_keys([qa.metric], qa.metric)[1:], *benchmark.extra_metrics] if errata else benchmark.extra_metrics
    console = console_table(summary, title, qa.metric if qa is not None else None, extras if qa is not None else (),
                            system_k=max(config.system.k, dataset.metric_depth or 0)).text
    resolved = config.as_dict()
    extra: dict[str, Any] = {"stats": stats, "provenance": collect_provenance(overrides, plan.data_root, plan.data_files)}
    identity = run_identity(resolved)
    if qa is not None and qa.prompts is not None:
        # Official and own wording give different numbers: never the same run folder.
        extra.update(wording=qa.prompts.label, answer_wording=qa.prompts.answer_source,
                     judge_wording=qa.prompts.judge_source, answer_recipe=qa.prompts.recipe, prompts=qa.prompts.record())
        identity["wording"] = qa.prompts.label
    paths = run_folder(config.store.results_dir, dataset.name, label, stable_hash(identity), overrides)
    write_run(paths, resolved, records, summary, table, extra)
    return RunResult(paths, summary, table, records, stats, console=console)

