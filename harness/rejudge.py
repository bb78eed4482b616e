"""Grade a run's cached answers again with another judge, without re-answering or re-retrieving.

The run is recomposed from its own command-line overrides (``metrics.json`` provenance), its judge
replaced (a judge config group ``judge=<name>`` and ``judge.<key>=<value>`` settings); ``wording=strict`` grades with our strict
prompt (:file:`harness/rejudge_prompts/strict_locomo.txt`, through the benchmark's own judge and its
``prompt_file``). Only judge requests are sent, through the one cached LLM client (a repeated
rejudge costs nothing), and the graded records go to a new run folder beside the old one
(``<run>__rejudge-<label>``), scored by the QA stage's own rules.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

from harness.cli_options import CliError
from harness.run_data import RunData

PROMPTS = Path(__file__).resolve().parent / "rejudge_prompts"
WORDINGS = {"run": None, "strict": PROMPTS / "strict_locomo.txt"}
CONFIG_DIR = Path(__file__).resolve().parent.parent / "configs"


def judge_overrides(run: RunData, options: dict[str, str]) -> list[str]:
    """The run's own command-line overrides (its provenance), then the judge ``options`` ask for."""
    provenance = run.metrics.get("provenance") or {}
    if provenance.get("overrides") is None:
        raise CliError(f"{run.folder}/metrics.json names no command-line overrides (a run made in-process?): it cannot be recomposed")
    name = options.get("judge")
    if name and not (CONFIG_DIR / "judge" / f"{name}.yaml").is_file():
        known = sorted(p.stem for p in (CONFIG_DIR / "judge").glob("*.yaml"))
        raise CliError(f"judge={name}: no such judge config (known: {', '.join(known)})")
    wording = options.get("wording", "run")
    if wording not in WORDINGS:
        raise CliError(f"wording={wording}: choose one of {', '.join(WORDINGS)}")
    kept, judge = [], {}
    for override in provenance["overrides"]:
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


def rejudge(run: RunData, options: dict[str, str]) -> Path:
    """Grade ``run``'s answers with the judge ``options`` name; the new run folder."""
    from harness.compose import compose_config
    from harness.config import RunConfig
    from harness.qa import QAItem, _judge_requests, _score_record, qa_summary, check_qa_ready
    from harness.answering import make_client
    from harness.caches import LLM_REPLIES, run_cache
    from judges.aggregate import format_table, summarize
    from loaders import load_dataset, prepare_data_dir
    from memory_protocol import ConfigError, DatasetError

    if not run.answered or not any("answer" in r for r in run.records):
        raise CliError(f"{run.folder} holds no answers to grade (a retrieval-only run)")
    try:
        raw = compose_config(judge_overrides(run, options))
        config = RunConfig.from_dict(raw)
        prompts = check_qa_ready(config)
        dataset = config.dataset
        benchmark = dataset.describe()
        root = prepare_data_dir(benchmark.loader, dataset.data_dir, dataset.options, progress=False)
        episodes = load_dataset(benchmark.loader, data_dir=root, limit=dataset.limit, categories=dataset.categories,
                                **dataset.options)
    except (ConfigError, DatasetError) as exc:
        raise CliError(str(exc).splitlines()[0]) from None
    assert prompts is not None and prompts.judge is not None and config.judge is not None
    judge, spec = prompts.judge, config.judge
    questions = {q.qid: q for episode in episodes for q in episode.questions}
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
            for request in _judge_requests(judge, spec, question, benchmark.graded_text(record["answer"])):
                requests.append(request)
                owners.append((len(items) - 1, request.run_index))
    client = make_client(spec, spec.max_tokens, config.cache_only, run_cache(config, LLM_REPLIES), role="judge")
    replies = client.complete_many(requests, desc="judge", progress=False)
    grades: dict[int, list[dict[str, Any]]] = {}
    for (index, run_index), reply in zip(owners, replies):
        if not reply.ok:
            grades.setdefault(index, []).append({"run": run_index, "score": None, "error": reply.error})
            continue
        verdict = judge.parse(reply.text, items[index].question)
        grades.setdefault(index, []).append({"run": run_index, "score": verdict.score, "label": verdict.label,
                                             "parsed": verdict.parsed, "raw": reply.text})
    for index, item in enumerate(items):
        _score_record(item, judge, grades.get(index, []), benchmark.headline, spec.runs, benchmark)
    return _write(run, raw, [item.record for item in items], benchmark, spec.runs, options, len(requests),
                  sum(1 for r in replies if not r.ok), summarize, format_table, qa_summary)


def _write(run, raw, records, benchmark, runs, options, sent, failed, summarize, format_table, qa_summary) -> Path:
    from harness.qa import QAOutcome
    from harness.results import RunPaths, write_run

    outcome = QAOutcome(metric=benchmark.headline, runs=runs, benchmark=benchmark)
    flat = [{"category": r["category"], **r["metrics"]} for r in records]
    summary = qa_summary(summarize(flat, outcome.metric_keys, exclude_from_overall=outcome.exclude_from_overall), outcome)
    folder = run.folder.parent / f"{run.folder.name}__rejudge-{_label(raw, options)}"
    stats = {**(run.metrics.get("stats") or {}), "rejudged_from": str(run.folder), "judge_requests": sent,
             "judge_failures": failed}
    write_run(RunPaths(folder), raw, records, summary, format_table(summary), {
        "stats": stats, "provenance": {**(run.metrics.get("provenance") or {}), "rejudge": options,
                                       "command": " ".join(sys.argv)}})
    return folder
