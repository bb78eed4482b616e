"""A stage's uncached chat requests as provider batches: resume the batches recorded in the cache file
that hold a wanted key (never submit those again), submit the rest (each line the live call's body,
keyed by its cache key, split at the provider's limits, recorded the moment it is accepted), poll and
collect (a success cached at once), and submit the retryable failures once more; what fails for good
is a ``ChatResult(error=...)``, as a live failure is.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from tqdm import tqdm

from model_clients.batch.anthropic_batches import INSTALL_HINT, AnthropicBatches, UnbatchableRequest, message_params
from model_clients.batch.journal import DONE, OPEN, BatchJob, BatchJournal, JournalLine, now_utc
from model_clients.batch.openai_batches import OpenAIBatches
from model_clients.batch.provider import BatchLine, BatchProvider, BatchState
from model_clients.chat_types import ChatClient, ChatRequest, ChatResult, LineOutcome, LLMConfig

ANTHROPIC_HOST = "api.anthropic.com"
LAST_ATTEMPT = 1  # a failed line is submitted again once (attempt 1), then recorded as failed


class BatchError(RuntimeError):
    """A batch could not be submitted or polled (the SDK's own retries exhausted); re-running resumes."""


@dataclass(frozen=True)
class BatchOptions:
    """``poll_s`` between polls; limits below the provider's documented ones (None: those)."""

    poll_s: float = 60.0
    max_lines: int | None = None
    max_bytes: int | None = None


def provider_name(config: LLMConfig) -> str:
    """``batch_api``, with ``auto`` resolved: anthropic for api.anthropic.com, openai otherwise."""
    if config.batch_api != "auto":
        return config.batch_api
    return "anthropic" if urlsplit(config.resolved_base_url).hostname == ANTHROPIC_HOST else "openai"


def _anthropic_importable() -> bool:
    try:
        return importlib.util.find_spec("anthropic") is not None
    except (ImportError, ValueError):  # a module set to None in sys.modules, or a broken parent
        return False


def unavailable(config: LLMConfig, role: str = "model") -> str | None:
    """Why ``config``'s batch provider cannot be used here (None: it can): the ``anthropic`` SDK,
    an optional extra, is not installed. Asks no server."""
    if provider_name(config) == "anthropic" and not _anthropic_importable():
        return (f"{role}: batch=true for {config.model!r} goes by Anthropic's Message Batches, which need the "
                f"anthropic SDK: {INSTALL_HINT} (or run this role live: {role}.batch=false)")
    return None


def refusal(config: LLMConfig, role: str, max_tokens: int | None, extra: Mapping[str, Any]) -> str | None:
    """Why the provider would refuse every request of ``role`` (None: it takes them), judged before
    anything is sent on a request of the role's shape; only Anthropic refuses fields."""
    if provider_name(config) != "anthropic":
        return None
    probe = {"model": config.model, "messages": [{"role": "user", "content": "?"}], "max_tokens": max_tokens, **extra}
    try:
        message_params(probe)
    except UnbatchableRequest as exc:
        return (f"{role}: batch=true for {config.model!r} goes by Anthropic's Message Batches, which refuse this "
                f"role's requests ({exc}); run this role live: {role}.batch=false")
    return None


def make_provider(client: ChatClient) -> BatchProvider:
    """The batch provider ``client.config`` asks for, on its endpoint and key."""
    reason = unavailable(client.config, client.role)
    if reason is not None:
        raise BatchError(reason)
    if provider_name(client.config) == "openai":
        return OpenAIBatches(client.sdk_for_batches())
    return AnthropicBatches(client.config)


@dataclass
class _Round:
    """What one round left: results by key, and the lines worth one more batch."""

    results: dict[str, ChatResult] = field(default_factory=dict)
    retry: dict[str, tuple[JournalLine, str]] = field(default_factory=dict)  # key -> (line, last error)


def split_lines(lines: Sequence[BatchLine], max_lines: int, max_bytes: int,
                size: Callable[[BatchLine], int]) -> list[list[BatchLine]]:
    """``lines`` in order, cut into batches of at most ``max_lines`` lines and ``max_bytes`` bytes."""
    batches: list[list[BatchLine]] = []
    current: list[BatchLine] = []
    current_bytes = 0
    for line in lines:
        line_size = size(line)
        if current and (len(current) >= max_lines or current_bytes + line_size > max_bytes):
            batches.append(current)
            current, current_bytes = [], 0
        current.append(line)
        current_bytes += line_size
    if current:
        batches.append(current)
    return batches


class _BatchRun:
    def __init__(self, client: ChatClient, provider: BatchProvider, options: BatchOptions, desc: str,
                 progress: bool, sleep: Callable[[float], None]) -> None:
        self.client, self.provider, self.options = client, provider, options
        self.desc, self.progress, self.sleep = desc, progress, sleep
        self.journal = BatchJournal(client.cache.path)
        self.endpoint, self.model = client.config.endpoint, client.config.model
        self.max_lines = min(provider.max_lines, options.max_lines or provider.max_lines)
        self.max_bytes = min(provider.max_bytes, options.max_bytes or provider.max_bytes)

    def run(self, wanted: Mapping[str, ChatRequest]) -> dict[str, ChatResult]:
        resumed = self._resume(wanted)
        covered = {line.key for job in resumed for line in self.journal.lines_of(job.batch_id)}
        fresh = [JournalLine(key, request.template_hash, request.run_index)
                 for key, request in wanted.items() if key not in covered]
        fresh, refused = self._within_size(fresh, wanted)
        first = self._wait(resumed + self._submit(fresh, wanted, attempt=0), wanted)
        results = {**refused, **first.results}
        if first.retry:
            lines = [line for line, _ in first.retry.values()]
            print(f"{self.desc}: {len(lines)} line(s) failed or were left unfinished in their batch; "
                  "submitting them once more", file=sys.stderr)
            again = self._wait(self._submit(lines, wanted, attempt=LAST_ATTEMPT), wanted)
            results.update(again.results)
            for key, (_, error) in again.retry.items():  # a retry's retryable failures are final too
                if key not in results:
                    results[key] = self.client.failure(key, error)
        for key in wanted:  # a wanted key no batch answered (cannot happen unless a provider misbehaves)
            if key not in results:
                results[key] = self.client.failure(key, "no batch returned this request")
        return {key: results[key] for key in wanted}

    def _within_size(self, lines: list[JournalLine], wanted: Mapping[str, ChatRequest]
                     ) -> tuple[list[JournalLine], dict[str, ChatResult]]:
        """The lines a batch can hold, and a failure for each larger than a whole batch may be."""
        kept: list[JournalLine] = []
        refused: dict[str, ChatResult] = {}
        for line in lines:
            size = self.provider.line_bytes(BatchLine(line.key, self.client.request_body(wanted[line.key])))
            if size > self.max_bytes:
                refused[line.key] = self.client.failure(
                    line.key, f"the request is {size:,} bytes as a batch line, over the {self.max_bytes:,} a batch holds")
            else:
                kept.append(line)
        return kept, refused

    def _resume(self, wanted: Mapping[str, ChatRequest]) -> list[BatchJob]:
        """Open batches of this provider, endpoint and model holding a wanted key (those whose keys are
        all cached are marked done; others are left to their own stage)."""
        waiting: list[BatchJob] = []
        for job in self.journal.open_jobs(self.provider.name, self.endpoint, self.model):
            keys = [line.key for line in self.journal.lines_of(job.batch_id)]
            if len(self.client.cache.get_many(keys)) == len(set(keys)):
                self.journal.set_status(job.batch_id, DONE, "every key cached")
            elif any(key in wanted for key in keys):
                waiting.append(job)
        if waiting:
            lines = sum(job.lines for job in waiting)
            first = f" ({waiting[0].batch_id}{', ...' if len(waiting) > 1 else ''})"
            print(f"{self.desc}: resuming {len(waiting)} batch(es) of {lines:,} lines submitted earlier{first}"[:120],
                  file=sys.stderr)
        return waiting

    def _submit(self, lines: Sequence[JournalLine], wanted: Mapping[str, ChatRequest], attempt: int) -> list[BatchJob]:
        """Submit ``lines`` as batches within the limits; record each batch id as soon as it exists."""
        if not lines:
            return []
        meta = {line.key: line for line in lines}
        batch_lines = [BatchLine(line.key, self.client.request_body(wanted[line.key])) for line in lines]
        jobs: list[BatchJob] = []
        for chunk in split_lines(batch_lines, self.max_lines, self.max_bytes, self.provider.line_bytes):
            batch_id = self._ask(f"submitting a batch of {len(chunk)} lines", lambda: self.provider.submit(chunk))
            job = BatchJob(batch_id, self.provider.name, self.endpoint, self.model, len(chunk), attempt, now_utc(), OPEN)
            self.journal.record(job, [meta[line.key] for line in chunk])
            jobs.append(job)
        return jobs

    def _wait(self, jobs: list[BatchJob], wanted: Mapping[str, ChatRequest]) -> _Round:
        """Poll ``jobs`` until each has ended; collect each as it ends."""
        outcome = _Round()
        if not jobs:
            return outcome
        active = list(jobs)
        done: dict[str, int] = {job.batch_id: 0 for job in jobs}
        bar = tqdm(total=sum(job.lines for job in jobs), desc=f"{self.desc} (batch)", unit="line",
                   disable=not self.progress)
        try:
            while active:
                running: list[tuple[BatchJob, BatchState]] = []
                for job in list(active):
                    state = self._ask(f"polling batch {job.batch_id}", lambda: self.provider.poll(job.batch_id))
                    done[job.batch_id] = min(state.done, job.lines)
                    if state.status == "pending":
                        running.append((job, state))
                        continue
                    outcomes = self._ask(f"collecting batch {job.batch_id}", lambda: self.provider.collect(job.batch_id))
                    self._absorb(job, state, outcomes, wanted, outcome)
                    self.journal.set_status(job.batch_id, DONE, state.status)
                    done[job.batch_id] = job.lines
                    active.remove(job)
                bar.n = sum(done.values())
                bar.set_postfix_str(self._running_note(running), refresh=False)
                bar.refresh()
                if active:
                    self.sleep(self.options.poll_s)
        finally:
            bar.close()
        return outcome

    def _running_note(self, running: Sequence[tuple[BatchJob, BatchState]]) -> str:
        """The bar's postfix: the provider's status, and for one that reports no line before a batch
        ends, that the count stays at 0 until then (not a stall)."""
        if not running:
            return ""
        statuses = sorted({state.provider_status or "pending" for _, state in running})
        note = f"{self.provider.name}: {'/'.join(statuses)}"
        if not self.provider.reports_lines_while_running:
            lines = sum(job.lines for job, _ in running)
            note += f", 0 of {lines:,} reported until {'it ends' if len(running) == 1 else 'they end'}"
        return note

    def _absorb(self, job: BatchJob, state: BatchState, outcomes: list[LineOutcome],
                wanted: Mapping[str, ChatRequest], into: _Round) -> None:
        """Cache each success at once; sort each failure into final or worth one more batch."""
        by_key = {outcome.key: outcome for outcome in outcomes}
        for line in self.journal.lines_of(job.batch_id):
            outcome = by_key.get(line.key)
            if outcome is not None and outcome.result is not None and outcome.result.ok:
                if line.key not in into.results:
                    into.results[line.key] = self.client.store_success(
                        line.key, line.template_hash, line.run_index, outcome.result, batch=True)
                into.retry.pop(line.key, None)
                continue
            if line.key not in wanted or line.key in into.results:
                continue  # an earlier stage's line that failed: its own run records it
            if outcome is None:
                error, retryable = f"no result for this line (the batch ended {state.status})", True
            else:
                error, retryable = outcome.error or "the provider returned no result", outcome.retryable
            error = f"batch {job.batch_id}: {error}"
            if retryable and job.attempt < LAST_ATTEMPT:
                into.retry[line.key] = (line, error)
            else:
                into.results[line.key] = self.client.failure(line.key, error)

    def _ask(self, what: str, call: Callable[[], Any]) -> Any:
        """``call`` to the provider; a failure (the SDK's retries spent) is one :class:`BatchError`."""
        try:
            return call()
        except Exception as exc:
            raise BatchError(self.client.redact(
                f"{self.provider.name} batch API for model {self.model!r} at {self.client.config.resolved_base_url}: "
                f"{what} failed; submitted batches are kept in {self.journal.path}: re-run to resume them "
                f"({type(exc).__name__}: {exc})")) from exc


def run_batches(client: ChatClient, wanted: Mapping[str, ChatRequest], *, desc: str = "LLM", progress: bool = True,
                options: BatchOptions = BatchOptions(), provider: BatchProvider | None = None,
                sleep: Callable[[float], None] = time.sleep) -> dict[str, ChatResult]:
    """Complete ``wanted`` (distinct uncached requests by key) through provider batches; every key
    gets a result (an error result when it failed for good)."""
    if not wanted:
        return {}
    chosen = provider if provider is not None else make_provider(client)
    try:
        return _BatchRun(client, chosen, options, desc, progress, sleep).run(wanted)
    finally:
        close = getattr(getattr(chosen, "sdk", None), "close", None)
        if provider is None and callable(close):  # the SDK client made for this stage
            close()
