"""One run: plan -> retrieve -> answer and judge -> write (or, with ``estimate=true``, a dry run
of the same plan). Each answer and ranking is cached the moment it exists."""

from __future__ import annotations

from harness.config import RunConfig
from harness.estimate import dry_run
from harness.plan import build_plan
from harness.qa import run_qa
from harness.rescore import mark_erratum, sound_scores
from harness.results import RunResult, write as write_results
from harness.retrieval import retrieve
from harness.stage_log import LOG
from model_clients.call_counts import ModelCallTally


def run(config: RunConfig, overrides: list[str] | None = None) -> RunResult:
    """``overrides``: the command-line overrides (plain strings), recorded and used in the folder name."""
    plan = build_plan(config, overrides)
    if config.estimate:
        return dry_run(plan)
    calls = ModelCallTally()
    items = retrieve(plan, calls)
    for item in items if plan.errata else ():
        mark_erratum(item.record, plan.errata)  # before judging: a miss on a wrong gold is the gold's
    qa = None
    if config.answerer is not None:
        LOG.stage(f"answers and judging: {len(items)} questions")
        qa = run_qa(plan, items)
        for item in items if plan.errata else ():
            sound_scores(item.record, qa.metric)
    return write_results(plan, items, qa, calls)
