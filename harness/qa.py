"""Answer and judge stages: every call through the cached LLM client, every grade re-scorable.

Answers are keyed by the answer request, so a change of judge re-uses every answer; judge calls add
the run index (and a per-run seed), so ``judge.runs`` grades are cached apart. ``<metric>`` averages
the parsed grades only; ``<metric>_paper`` is 100/N x the grades over all N questions of a row
(unparsable grades, failed calls and failed answers count 0), as the paper reports it. Failed calls
are told in a few lines, with a hint at the cause.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

import pandas as pd

from harness.benchmarks import Benchmark
from harness.config import ModelSpec
from harness.misses import attribute
from harness.prompts import ProtocolPrompts
from judges.graders import Judge
from judges.metrics.ranking import lookup
from memory_protocol import Question
from model_clients.chat_types import CallsInterrupted, ChatRequest, ChatResult
from model_clients.cost import actual_spend
from model_clients.call_pool import EndpointLimits
from model_clients.kvstore import KVStore
from model_clients.llm_client import LLMClient, LLMConfig

if TYPE_CHECKING:
    from harness.plan import RunPlan

LOCAL_BACKENDS = ("smollm2",)
ALL_FAILED_KEY = "qa_all_failed"  # stats key: True when every answer or every judge call failed
SHOWN_ERRORS = 3
_CONTEXT_WORDS = ("context length", "context_length", "maximum context", "too long", "too many tokens", "max_tokens")


def first_errors(errors: Sequence[str | None], limit: int = SHOWN_ERRORS) -> list[tuple[str, int]]:
    """The first ``limit`` distinct error messages, in order of first appearance, with counts."""
    return list(Counter(e for e in errors if e).items())[:limit]  # a Counter keeps the order of first appearance


def all_failed(n_answers: int, answer_failures: int, n_judge_calls: int, judge_failures: int) -> bool:
    """True when there were answers to get and none came, or judge calls to make and none came."""
    return (n_answers > 0 and answer_failures == n_answers) or (n_judge_calls > 0 and judge_failures == n_judge_calls)


def _server_exit_notes(role: str) -> list[str]:
    """Exit code and log tail of a local server whose URL ``role`` names, when it died during the run."""
    local_server = sys.modules.get("model_clients.local_server")  # imported only when one was started
    if local_server is None:
        return []
    notes = [local_server.exit_note(url) for url in local_server.served_urls() if url in role]
    return [note for note in notes if note]


def failure_report(role: str, errors: Sequence[str | None], total: int) -> list[str]:
    """Console lines for the failed calls of one role (empty when none failed)."""
    shown = first_errors(errors)
    if not shown:
        return []
    failed = sum(1 for e in errors if e)
    lines = [f"{role}: {failed} of {total} calls failed; first distinct errors:"]
    lines += [f"  [{count}x] {error[:300]}" for error, count in shown]
    exits = _server_exit_notes(role)
    if exits:  # a local server the harness started died: that, not the endpoint, is why
        lines += [f"  {note}" for note in exits]
    elif any(word in error.lower() for error, _ in shown for word in _CONTEXT_WORDS):
        lines.append("  hint: the prompt does not fit the model's window: lower dataset.context_budget "
                     "(characters of evidence shown) or answerer.max_tokens / judge.max_tokens")
    else:
        lines.append("  hint: check the endpoint, key and model name; dataset.context_budget and "
                     "answerer.max_tokens set the prompt and reply sizes (full errors in records.jsonl)")
    return lines


@dataclass
class QAItem:
    question: Question
    context: str
    record: dict[str, Any]
    hits: list[Any] | None = None  # the ranked hits, for an answerer that lays them out itself


@dataclass
class QAOutcome:
    """What the QA stage adds to a run (``stats[ALL_FAILED_KEY]``: every answer or judge call failed)."""

    metric: str
    runs: int
    benchmark: Benchmark | None = None
    prompts: ProtocolPrompts | None = None
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def all_failed(self) -> bool:
        return bool(self.stats.get(ALL_FAILED_KEY))

    @property
    def metric_keys(self) -> list[str]:
        """Summary columns, the main metric first (``n_scored`` counts its parsed grades)."""
        keys = [self.metric, f"{self.metric}_paper"] + [f"{self.metric}_run{run}" for run in range(self.runs)]
        return keys + (list(self.benchmark.extra_metrics) if self.benchmark else [])

    @property
    def exclude_from_overall(self) -> list[str]:
        return self.benchmark.overall_excludes(answered=True) if self.benchmark else []


@contextlib.contextmanager
def local_servers(*specs: ModelSpec | None) -> Iterator[dict[str, str]]:
    """One local OpenAI-compatible server per local backend in ``specs``; their URLs."""
    local = [spec for spec in specs if spec is not None and spec.local]
    unknown = {spec.local for spec in local} - set(LOCAL_BACKENDS)
    if unknown:
        raise ValueError(f"unknown local backend(s) {sorted(unknown)}; known: {list(LOCAL_BACKENDS)}")
    urls: dict[str, str] = {}
    with contextlib.ExitStack() as stack:
        if local:
            from model_clients.local_server import serve, window_of

            window = max(window_of(spec) for spec in local)
            urls["smollm2"] = stack.enter_context(serve(local[0].model, context_tokens=window))
        yield urls


def make_client(spec: ModelSpec, max_tokens: int | None, cache_only: bool, cache: KVStore, base_url: str | None = None,
                role: str = "answerer", limits: EndpointLimits | None = None) -> LLMClient:
    """The role's client over its endpoint fields (``base_url`` overridden for a local server);
    ``limits``: the limit of requests in flight shared with its endpoint's other clients."""
    endpoint = {f.name: getattr(spec, f.name) for f in fields(LLMConfig)}
    config = LLMConfig(**{**endpoint, "max_tokens": max_tokens, "cache_only": cache_only,
                          "base_url": base_url or spec.base_url})
    limit = limits.for_endpoint(config.resolved_base_url, config.api_key_env, config.concurrency) if limits else None
    return LLMClient(config, cache, role=role, limit=limit)


def _judge_seed(spec: ModelSpec, run: int) -> int | None:
    return None if spec.seed is None else spec.seed + run


def judge_requests(judge: Judge, spec: ModelSpec, question: Question, answer: str,
                   benchmark: Benchmark) -> list[ChatRequest]:
    """One request per judge run on ``answer`` as ``benchmark`` grades it (its stand-in for an empty
    answer), with the settings the judge's wording prescribes."""
    messages = judge.request(question, benchmark.graded_text(answer))
    template_hash = judge.template_hash(question)
    params = judge.params
    return [ChatRequest(messages, template_hash, run, temperature=params.temperature, seed=_judge_seed(spec, run),
                        max_tokens=params.max_tokens, extra=params.extra(), omit=params.omit)
            for run in range(spec.runs)]


def _answer_and_judge(items: list[QAItem], session: QASession, benchmark: Benchmark,
                      progress: bool) -> tuple[list[ChatResult], list[tuple[int, int]], list[ChatResult]]:
    """Every answer, and ``(question index, run)`` with each grade, in question order. An answer's
    judge calls are submitted the moment it arrives, so judging runs alongside answering."""
    answers: list[ChatResult | None] = [None] * len(items)
    judged: dict[int, tuple[list[ChatRequest], tuple[str, ...]]] = {}
    judge = session.prompts.judge
    assert judge is not None
    with session.answer_client.pool("answers", progress=progress) as answering, \
            session.judge_client.pool("judge", progress=progress) as judging:
        stage = answering
        try:
            for index, result in answering.arrivals(session.requests):
                answers[index] = result
                if result.ok and judge.is_graded(items[index].question):
                    requests = session.judge_requests(items[index].question, result.text, benchmark)
                    judged[index] = (requests, judging.submit(requests))
            stage = judging
            graded = [(index, request.run_index) for index in sorted(judged) for request in judged[index][0]]
            grades = judging.results([key for index in sorted(judged) for key in judged[index][1]])
        except CallsInterrupted:
            raise
        except KeyboardInterrupt:  # Ctrl-C outside a wait (e.g. while submitting grades): the same one line
            raise stage.interrupted() from None
    assert all(result is not None for result in answers)
    return [result for result in answers if result is not None], graded, grades


@dataclass
class QASession:
    """The QA stage's clients (local servers started) and its answer requests, one per item."""

    answer_client: LLMClient
    judge_client: LLMClient
    requests: list[ChatRequest]
    prompts: ProtocolPrompts
    judge_spec: ModelSpec

    def judge_requests(self, question: Question, answer: str, benchmark: Benchmark) -> list[ChatRequest]:
        assert self.prompts.judge is not None
        return judge_requests(self.prompts.judge, self.judge_spec, question, answer, benchmark)


@contextlib.contextmanager
def qa_session(plan: RunPlan, items: list[QAItem]) -> Iterator[QASession]:
    config, prompts = plan.config, plan.prompts
    answerer, judge_spec = config.answerer, config.judge
    assert answerer is not None and judge_spec is not None and prompts is not None and prompts.judge is not None
    for note in prompts.notes:
        print(note, file=sys.stderr)
    cache = plan.llm_cache
    with local_servers(answerer, judge_spec) as urls:
        answer_tokens = answerer.max_tokens or config.dataset.answer_max_tokens
        limits = EndpointLimits()  # the answerer and the judge on one endpoint share its limit of requests in flight
        answer_client = make_client(answerer, answer_tokens, config.cache_only, cache, urls.get(answerer.local or ""),
                                    limits=limits)
        judge_client = make_client(judge_spec, judge_spec.max_tokens, config.cache_only, cache,
                                   urls.get(judge_spec.local or ""), role="judge", limits=limits)
        requests = [prompts.answerer.request(item.question, item.context, item.hits) for item in items]
        if answerer.local:
            from model_clients.local_server import fit_requests, window_of

            requests = fit_requests(requests, urls[answerer.local], window_of(answerer), answer_tokens)
        yield QASession(answer_client, judge_client, requests, prompts, judge_spec)


def run_qa(plan: RunPlan, items: list[QAItem]) -> QAOutcome:
    """Answer every question, judge each answer ``judge.runs`` times, write results into records."""
    benchmark, progress = plan.benchmark, plan.config.progress
    metric = benchmark.headline
    with qa_session(plan, items) as session:
        judge, judge_spec = session.prompts.judge, session.judge_spec
        assert judge is not None
        outcome = QAOutcome(metric=metric, runs=judge_spec.runs, benchmark=benchmark, prompts=session.prompts)
        started = time.perf_counter()
        answers, graded, grades = _answer_and_judge(items, session, benchmark, progress)
        seconds = time.perf_counter() - started
        for item, result in zip(items, answers):
            item.record["answer"] = result.text if result.ok else None
            item.record["answer_error"] = result.error
        unparsed = score_records(items, judge, graded, grades, benchmark, judge_spec.runs)
        answerer = plan.config.answerer
        assert answerer is not None
        outcome.stats = _stats(answers, grades, unparsed, session.answer_client, session.judge_client, judge_spec.runs,
                               bool(answerer.local or judge_spec.local))
        outcome.stats["in_flight"] = _in_flight(session.answer_client, session.judge_client)
        outcome.stats["seconds_answer_and_judge"] = round(seconds, 3)
    return outcome


def _in_flight(answer_client: LLMClient, judge_client: LLMClient) -> dict[str, Any]:
    """What the endpoints' limits of requests in flight did (settings and 429s)."""
    shared = answer_client.limit is judge_client.limit
    return {"answers": answer_client.limit.stats().as_dict(), "judge": judge_client.limit.stats().as_dict(),
            "shared": shared}


def _role(role: str, client) -> str:
    return f"{role} ({client.config.model} at {client.config.resolved_base_url})"


def _stats(answers, grades, unparsed, answer_client, judge_client, runs: int, plumbing: bool) -> dict[str, Any]:
    answer_errors = [r.error for r in answers]
    judge_errors = [r.error for r in grades]
    answer_failures = sum(1 for e in answer_errors if e)
    judge_failures = sum(1 for e in judge_errors if e)
    lines = (failure_report(_role("answers", answer_client), answer_errors, len(answers))
             + failure_report(_role("judge", judge_client), judge_errors, len(grades)))
    failed_all = all_failed(len(answers), answer_failures, len(grades), judge_failures)
    if failed_all:
        lines.append("every answer or every judge call failed: no score was computed")
    for line in lines:
        print(line, file=sys.stderr)
    return {
        "answer_spend": actual_spend(answer_client, role="answerer").as_dict(),
        "judge_spend": actual_spend(judge_client, role="judge").as_dict(),
        "answer_failures": answer_failures,
        "judge_failures": judge_failures,
        "judge_unparsed": unparsed,
        "judge_runs": runs,
        "plumbing": plumbing,
        "qa_errors": lines,
        ALL_FAILED_KEY: failed_all,
    }


def score_records(items: list[QAItem], judge: Judge, graded: list[tuple[int, int]], grades: list[ChatResult],
                  benchmark: Benchmark, runs: int) -> int:
    """Parse each grade (``graded``: its question index and run) and score every item; the number
    of unparsable grades."""
    verdicts: dict[int, list[dict[str, Any]]] = {}
    unparsed = 0
    for (index, run), result in zip(graded, grades):
        if not result.ok:
            verdicts.setdefault(index, []).append({"run": run, "score": None, "error": result.error})
            continue
        verdict = judge.parse(result.text, items[index].question)
        unparsed += not verdict.parsed
        verdicts.setdefault(index, []).append({"run": run, "score": verdict.score, "label": verdict.label,
                                               "parsed": verdict.parsed, "raw": result.text, "detail": verdict.detail})
    for index, item in enumerate(items):
        score_record(item, judge, verdicts.get(index, []), benchmark.headline, runs, benchmark)
    return unparsed


def score_record(item: QAItem, judge: Judge, grades: list[dict[str, Any]], metric: str, runs: int,
                  benchmark: Benchmark) -> None:
    record, metrics, question = item.record, item.record["metrics"], item.question
    record["judge"] = grades
    if benchmark.abstention_row and question.meta.get("abstention"):
        record["question_type"] = record["category"]
        record["category"] = benchmark.abstention_row
    if not judge.is_graded(question):
        for key in (metric, f"{metric}_paper", *(f"{metric}_run{run}" for run in range(runs))):
            metrics[key] = None
    else:
        by_run = {g["run"]: g["score"] for g in grades if g.get("score") is not None}
        for run in range(runs):
            value = by_run.get(run)
            metrics[f"{metric}_run{run}"] = None if value is None else 100.0 * value
        metrics[metric] = 100.0 * sum(by_run.values()) / len(by_run) if by_run else None
        metrics[f"{metric}_paper"] = 100.0 * sum(by_run.values()) / runs
    answer = record.get("answer")
    scored = judge.is_graded(question) and answer is not None
    for name in benchmark.extra_metrics:
        compute = _answer_metric(name)
        metrics[name] = compute(answer, question.answer) if scored else None
    record["miss"] = attribute(record, metric)  # where the question was lost (harness.misses)


def _answer_metric(name: str) -> Callable[[Any, Any], float]:
    """The per-question compute of a registered answer metric."""
    metric = lookup(name)
    if metric is None or metric.stage != "answer" or metric.compute is None:
        raise ValueError(f"{name!r} is not a registered answer metric with a compute")
    return metric.compute


def add_judge_columns(summary: pd.DataFrame, metric: str, runs: int) -> pd.DataFrame:
    """The per-run columns replaced by ``<metric>_std`` (population std over runs of each row's mean)."""
    columns = [f"{metric}_run{run}" for run in range(runs) if f"{metric}_run{run}" in summary.columns]
    if not columns:
        return summary
    with_std = summary.drop(columns=columns)
    with_std.insert(with_std.columns.get_loc(metric) + 1, f"{metric}_std", summary[columns].std(axis=1, ddof=0))
    return with_std


def with_task_average(summary: pd.DataFrame, metrics: list[str], row_name: str, abstention_row: str | None) -> pd.DataFrame:
    """A row ``row_name``: the unweighted mean over the question-type rows (not abstention, not overall)."""
    types = [name for name in summary.index if not str(name).startswith("overall") and name != abstention_row]
    row = {column: float("nan") for column in summary.columns}
    row["n"] = int(summary.loc[types, "n"].sum())
    row.update({metric: float(summary.loc[types, metric].mean()) for metric in metrics if metric in summary.columns})
    return pd.concat([summary, pd.DataFrame([row], index=[row_name])])


def qa_summary(summary: pd.DataFrame, outcome: QAOutcome) -> pd.DataFrame:
    """The summary with the judge's std column (and the benchmark's task average)."""
    summary = add_judge_columns(summary, outcome.metric, outcome.runs)
    benchmark = outcome.benchmark
    if benchmark is not None and benchmark.task_averaged_row:
        summary = with_task_average(summary, [outcome.metric, f"{outcome.metric}_paper"], benchmark.task_averaged_row,
                                    benchmark.abstention_row)
    return summary
