"""Answer and judge stages: every call through the cached LLM client, every grade re-scorable.

Answers are keyed by the answer request (model, prompt template hash, evidence, question), so a
change of judge re-uses every answer; judge calls add the run index (and a per-run seed) to the
key, so ``judge.runs`` independent grades are cached apart. A failed call is recorded on its
question and the run goes on; an unparsable grade is counted and left unscored, never zero.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from harness.answering import Answerer, make_client
from harness.config import ModelSpec, RunConfig
from harness.models.cost import CostEstimate, actual_spend, estimate
from harness.kvstore import KVStore
from harness.models.llm_client import ChatRequest
from judges.metrics.lexical import bleu1, f1_score
from judges.llm_judges import make_judge
from loaders.schema import Question

# The headline metric of each benchmark (0-100), as the paper's tables report it.
MAIN_METRIC = {"orgmem": "score", "locomo": "llm_judge", "longmemeval_s": "accuracy"}
LOCAL_BACKENDS = ("smollm2",)


@dataclass
class QAItem:
    question: Question
    context: str
    record: dict[str, Any]


@dataclass
class QAOutcome:
    metric: str
    runs: int
    stats: dict[str, Any] = field(default_factory=dict)
    estimates: list[CostEstimate] = field(default_factory=list)


@contextlib.contextmanager
def local_servers(*specs: ModelSpec | None) -> Iterator[dict[str, str]]:
    """Start one local OpenAI-compatible server per local backend named in ``specs``; yield their URLs."""
    local = [spec for spec in specs if spec is not None and spec.local]
    unknown = {spec.local for spec in local} - set(LOCAL_BACKENDS)
    if unknown:
        raise ValueError(f"unknown local backend(s) {sorted(unknown)}; known: {list(LOCAL_BACKENDS)}")
    urls: dict[str, str] = {}
    with contextlib.ExitStack() as stack:
        if local:
            from harness.models.local_server import serve, window_of

            window = max(window_of(spec) for spec in local)
            urls["smollm2"] = stack.enter_context(serve(local[0].model, context_tokens=window))
        yield urls


def _judge_seed(spec: ModelSpec, run: int) -> int | None:
    return None if spec.seed is None else spec.seed + run


def run_qa(config: RunConfig, items: list[QAItem], cache: KVStore) -> QAOutcome:
    """Answer every question, judge each answer ``judge.runs`` times, write results into records."""
    assert config.answerer is not None and config.judge is not None
    dataset = config.dataset.name
    if dataset not in MAIN_METRIC:
        raise ValueError(f"no judge for dataset {dataset!r}")
    metric = MAIN_METRIC[dataset]
    answerer, judge_spec = config.answerer, config.judge
    outcome = QAOutcome(metric=metric, runs=judge_spec.runs)
    prompt = Answerer.load(answerer.prompt_file)
    judge = make_judge(dataset, judge_spec.prompt_file)
    with local_servers(answerer, judge_spec) as urls:
        answer_tokens = answerer.max_tokens or config.dataset.answer_max_tokens
        answer_client = make_client(answerer, answer_tokens, config.cache_only, cache, urls.get(answerer.local or ""))
        judge_client = make_client(judge_spec, judge_spec.max_tokens, config.cache_only, cache, urls.get(judge_spec.local or ""))
        answer_requests = [prompt.request(item.question, item.context) for item in items]
        if answerer.local:
            from harness.models.local_server import fit_requests, window_of

            answer_requests = fit_requests(answer_requests, urls[answerer.local], window_of(answerer), answer_tokens)
        if config.estimate:
            outcome.estimates = _estimate(items, answer_requests, answer_client, judge_client, judge, judge_spec)
            return outcome
        answers = answer_client.complete_many(answer_requests, desc="answers", progress=config.progress)
        graded: list[tuple[int, int]] = []
        judge_requests: list[ChatRequest] = []
        for index, (item, result) in enumerate(zip(items, answers)):
            item.record["answer"] = result.text if result.ok else None
            item.record["answer_error"] = result.error
            if not result.ok or not judge.is_graded(item.question):
                continue
            messages = judge.request(item.question, result.text)
            template_hash = judge.template_for(item.question).sha256
            for run in range(judge_spec.runs):
                judge_requests.append(ChatRequest(messages, template_hash, run, seed=_judge_seed(judge_spec, run)))
                graded.append((index, run))
        grades = judge_client.complete_many(judge_requests, desc="judge", progress=config.progress)
        verdicts: dict[int, list[dict[str, Any]]] = {}
        unparsed = failed = 0
        for (index, run), result in zip(graded, grades):
            item = items[index]
            if not result.ok:
                failed += 1
                verdicts.setdefault(index, []).append({"run": run, "score": None, "error": result.error})
                continue
            verdict = judge.parse(result.text, item.question)
            unparsed += not verdict.parsed
            verdicts.setdefault(index, []).append(
                {"run": run, "score": verdict.score, "label": verdict.label, "parsed": verdict.parsed, "raw": result.text}
            )
        for index, item in enumerate(items):
            _score_record(item, verdicts.get(index, []), metric, judge_spec.runs, dataset)
        outcome.stats = {
            "answer_spend": actual_spend(answer_client).format(),
            "judge_spend": actual_spend(judge_client).format(),
            "answer_failures": sum(1 for r in answers if not r.ok),
            "judge_failures": failed,
            "judge_unparsed": unparsed,
            "judge_runs": judge_spec.runs,
            "plumbing": bool(answerer.local or judge_spec.local),
        }
    return outcome


def _score_record(item: QAItem, grades: list[dict[str, Any]], metric: str, runs: int, dataset: str) -> None:
    record, metrics = item.record, item.record["metrics"]
    record["judge"] = grades
    by_run = {g["run"]: g["score"] for g in grades if g.get("score") is not None}
    for run in range(runs):
        value = by_run.get(run)
        metrics[f"{metric}_run{run}"] = None if value is None else 100.0 * value
    metrics[metric] = 100.0 * sum(by_run.values()) / len(by_run) if by_run else None
    if dataset == "locomo":
        answer = record.get("answer")
        graded = item.question.category != "adversarial" and answer is not None
        metrics["f1"] = 100.0 * f1_score(answer, item.question.answer) if graded else None
        metrics["bleu1"] = 100.0 * bleu1(answer, item.question.answer) if graded else None


def _estimate(items, answer_requests, answer_client, judge_client, judge, judge_spec) -> list[CostEstimate]:
    """Exact answer calls; judge calls for cached answers exactly, for the rest with the gold
    answer standing in for the answer text (so the count is exact and the tokens close)."""
    plan = answer_client.plan(answer_requests)
    judge_requests: list[ChatRequest] = []
    for item, key in zip(items, plan.keys):
        if not judge.is_graded(item.question):
            continue
        cached = plan.hits.get(key)
        text = cached.get("text") if cached else None
        messages = judge.request(item.question, text if text is not None else str(item.question.answer))
        for run in range(judge_spec.runs):
            judge_requests.append(
                ChatRequest(messages, judge.template_for(item.question).sha256, run, seed=_judge_seed(judge_spec, run))
            )
    return [
        estimate(answer_requests, answer_client, expected_completion_tokens=None),
        estimate(judge_requests, judge_client, expected_completion_tokens=None),
    ]


def add_judge_columns(summary: pd.DataFrame, metric: str, runs: int) -> pd.DataFrame:
    """Replace the per-run columns by ``<metric>_std``: the population standard deviation over
    judge runs of each row's mean score."""
    columns = [f"{metric}_run{run}" for run in range(runs) if f"{metric}_run{run}" in summary.columns]
    if not columns:
        return summary
    with_std = summary.drop(columns=columns)
    with_std.insert(with_std.columns.get_loc(metric) + 1, f"{metric}_std", summary[columns].std(axis=1, ddof=0))
    return with_std

