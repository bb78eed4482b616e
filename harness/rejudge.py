"""Grade a run's cached answers again with another judge; only judge requests are sent (cached).

The run's plan is rebuilt from its own command-line overrides (``metrics.json`` provenance) with the
judge replaced (``judge=<name>``, ``judge.<key>=<value>``; ``wording=strict``: our strict prompt
:file:`harness/rejudge_prompts/strict_locomo.txt`); the graded records, scored by the QA stage's own
rules, go to ``<run>__rejudge-<label>`` beside the old folder.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.run_data import CliError, RunData

if TYPE_CHECKING:
    from harness.plan import RunPlan
    from harness.qa import QAItem
    from model_clients.chat_types import ChatRequest, ChatResult
    from model_clients.cost import CostEstimate
    from model_clients.llm_client import LLMClient

PROMPTS = Path(__file__).resolve().parent / "rejudge_prompts"
WORDINGS = {"run": None, "strict": PROMPTS / "strict_locomo.txt"}
CONFIG_DIR = Path(__file__).resolve().parent.parent / "configs"


def judge_overrides(run: RunData, options: dict[str, str]) -> list[str]:
    """The run's own command-line overrides (its provenance), then the judge ``options`` ask for."""
    if run.provenance.get("overrides") is None:
        raise CliError(f"{run.folder}/metrics.json names no command-line overrides (a run made in-process?): it cannot be recomposed")
    name = options.get("judge")
    if name and not (CONFIG_DIR / "judge" / f"{name}.yaml").is_file():
        known = sorted(p.stem for p in (CONFIG_DIR / "judge").glob("*.yaml"))
        raise CliError(f"judge={name}: no such judge config (known: {', '.join(known)})")
    wording = options.get("wording", "run")
    if wording not in WORDINGS:
        raise CliError(f"wording={wording}: choose one of {', '.join(WORDINGS)}")
    kept, judge = [], {}
    for override in run.provenance["overrides"]:
        key, _, value = override.lstrip("+~").partition("=")
        if key == "judge" or key.startswith("judge."):
            judge[key] = value
        elif key != "progress":
            kept.append(override)
    if name:  # a new judge group: the old run's judge settings do not carry over
        judge = {"judge": name}
    judge.update({key: value for key, value in options.items() if key.startswith("judge.")})
    if WORDINGS[wording] is not None:
        judge["judge.prompt_file"] = str(WORDINGS[wording])
    return [*kept, *(f"{key}={value}" for key, value in judge.items()), "progress=false"]


def _label(config: dict[str, Any], options: dict[str, str]) -> str:
    """``<judge model>-<wording>``, safe as a folder name."""
    from harness.results import safe_part

    judge = config.get("judge") or {}
    return safe_part(f"{judge.get('model') or judge.get('name')}-{options.get('wording', 'run')}")


def judge_plan(run: RunData, options: dict[str, str]) -> tuple[dict[str, Any], RunPlan]:
    """The config and plan of ``run`` with the judge ``options`` name (a one-line CliError if they fail)."""
    from harness.compose import compose_config
    from harness.config import RunConfig
    from harness.plan import build_plan
    from memory_protocol import ConfigError, DatasetError

    try:
        raw = compose_config(judge_overrides(run, options))
        return raw, build_plan(RunConfig.from_dict(raw))
    except (ConfigError, DatasetError) as exc:
        raise CliError(str(exc).splitlines()[0]) from None


def judge_calls(plan: RunPlan, requests: list[ChatRequest], desc: str = "judge") -> list[ChatResult]:
    """The plan's judge replies to ``requests``: cached, at most ``judge.concurrency`` in flight."""
    return judge_client(plan).complete_many(requests, desc=desc, progress=False)


def judge_client(plan: RunPlan, cache_only: bool | None = None) -> LLMClient:
    """The plan's judge client (cached; ``cache_only`` defaults to the plan's)."""
    from harness.qa import make_client

    spec = plan.config.judge
    assert spec is not None
    only = plan.config.cache_only if cache_only is None else cache_only
    return make_client(spec, spec.max_tokens, only, plan.llm_cache, role="judge")


def judge_estimate(plan: RunPlan, requests: list[ChatRequest]) -> CostEstimate:
    """What :func:`judge_calls` would send and spend (a dry run: nothing is sent)."""
    from model_clients.cost import estimate

    return estimate(requests, judge_client(plan, cache_only=True), role="judge")


def _graded(run: RunData, plan: RunPlan) -> tuple[list[QAItem], list[ChatRequest], list[tuple[int, int]]]:
    """One item per record (its old grades dropped), the judge requests, and each one's item and run."""
    from harness.qa import QAItem, judge_requests

    benchmark, spec = plan.benchmark, plan.config.judge
    judge = plan.prompts.judge if plan.prompts is not None else None
    assert judge is not None and spec is not None
    questions = {q.qid: q for episode in plan.episodes for q in episode.questions}
    items: list[QAItem] = []
    requests, owners = [], []
    for record in run.records:
        question = questions.get(record["qid"])
        if question is None:
            raise CliError(f"{record['qid']} of {run.folder} is not in the dataset as loaded now")
        record = copy.deepcopy(record)
        record["category"] = record.pop("question_type", record["category"])
        record["metrics"] = {k: v for k, v in record["metrics"].items() if not k.startswith(benchmark.headline)}
        items.append(QAItem(question, "", record))
        if record.get("answer") is not None and judge.is_graded(question):
            for request in judge_requests(judge, spec, question, record["answer"], benchmark):
                requests.append(request)
                owners.append((len(items) - 1, request.run_index))
    return items, requests, owners


def _answered_plan(run: RunData, options: dict[str, str]) -> tuple[dict[str, Any], RunPlan]:
    if not run.answered or not any("answer" in r for r in run.records):
        raise CliError(f"{run.folder} holds no answers to grade (a retrieval-only run)")
    return judge_plan(run, options)


def rejudge_estimate(run: RunData, options: dict[str, str]) -> CostEstimate:
    """The dry run of :func:`rejudge`: the judge calls it would send and their price."""
    _, plan = _answered_plan(run, options)
    return judge_estimate(plan, _graded(run, plan)[1])


def rejudge(run: RunData, options: dict[str, str]) -> Path:
    """Grade ``run``'s answers with the judge ``options`` name; the new run folder."""
    from harness.qa import QAOutcome, qa_summary, score_records
    from harness.results import RunPaths, write_run
    from judges.aggregate import format_table, summarize

    raw, plan = _answered_plan(run, options)
    benchmark, spec, judge = plan.benchmark, plan.config.judge, plan.prompts.judge if plan.prompts else None
    assert spec is not None and judge is not None
    items, requests, owners = _graded(run, plan)
    replies = judge_calls(plan, requests)
    score_records(items, judge, owners, replies, benchmark, spec.runs)
    records = [item.record for item in items]
    outcome = QAOutcome(metric=benchmark.headline, runs=spec.runs, benchmark=benchmark)
    flat = [{"category": r["category"], **r["metrics"]} for r in records]
    summary = qa_summary(summarize(flat, outcome.metric_keys, exclude_from_overall=outcome.exclude_from_overall), outcome)
    folder = run.folder.parent / f"{run.folder.name}__rejudge-{_label(raw, options)}"
    stats = {**(run.metrics.get("stats") or {}), "rejudged_from": str(run.folder), "judge_requests": len(requests),
             "judge_failures": sum(1 for r in replies if not r.ok)}
    write_run(RunPaths(folder), raw, records, summary, format_table(summary), {
        "stats": stats, "provenance": {**run.provenance, "rejudge": options, "command": " ".join(sys.argv)}})
    return folder
