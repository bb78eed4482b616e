"""Before and after the QA stage: settings checked before retrieval (a missing key or broken
prompt file stops the run in one line, not after an hour of embedding), failures told in a few lines.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from harness.prompts import display_name
from harness.config import ModelSpec, RunConfig
from memory_protocol import ConfigError
from model_clients.model_listing import check_model_offered

if TYPE_CHECKING:
    from harness.benchmarks import Benchmark
    from harness.prompts import ProtocolPrompts

ALL_FAILED_KEY = "qa_all_failed"  # stats key: True when every answer or every judge call failed
SHOWN_ERRORS = 3
_CONTEXT_WORDS = ("context length", "context_length", "maximum context", "too long", "too many tokens", "max_tokens")


def _is_local(url: str | None) -> bool:
    host = (urlparse(url).hostname or "") if url else ""
    return host == "localhost" or host.startswith("127.") or host in ("::1", "0.0.0.0")


def _local_judge_options(answerer: ModelSpec) -> str:
    """Judge settings that keep a run with a local answerer offline (the default judge is hosted)."""
    model = answerer.model if answerer.local is None else "<model>"
    url = answerer.base_url if answerer.local is None and answerer.base_url else "http://host:port/v1"
    return (f"the answerer is local, so the judge can be too: judge=openai_compatible judge.model={model} "
            f"judge.base_url={url} (any OpenAI-compatible server), or judge=smollm2-local (a plumbing check, "
            f"not a grade)")


def _check_key(role: str, spec: ModelSpec, answerer: ModelSpec, offline: bool) -> None:
    if not spec.api_key_env or spec.local or offline or _is_local(spec.base_url):
        return
    if os.environ.get(spec.api_key_env):
        return
    options = ["export it", "use estimate=true (dry run) or cache_only=true (replay)"]
    if spec.base_url:  # only a server of one's own may need no key; the provider's default endpoint always does
        options.append(f"{role}.api_key_env=null for a server that needs no key")
    hint = ", or ".join(options)
    if role == "judge" and (answerer.local is not None or _is_local(answerer.base_url)):
        hint = f"{_local_judge_options(answerer)}; else {hint}"
    raise ConfigError(f"{role} {display_name(spec)} needs an API key in ${spec.api_key_env}, which is not set; {hint}")


def _check_batchable(answerer: ModelSpec, judge: ModelSpec | None, answer_tokens: int,
                     prompts: ProtocolPrompts) -> None:
    """A ``batch=true`` role its provider cannot serve stops here: SDK (an extra) not installed, or
    requests the provider refuses (Anthropic: a judge's JSON mode, no ``max_tokens``)."""
    from model_clients.batch.runner import refusal, unavailable

    shapes: list[tuple[str, ModelSpec, int | None, dict[str, Any]]] = [("answerer", answerer, answer_tokens, {})]
    if judge is not None and prompts.judge is not None:
        params = prompts.judge.params
        judge_tokens = params.max_tokens if params.max_tokens is not None else judge.max_tokens
        shapes.append(("judge", judge, judge_tokens, params.extra()))
    for role, spec, max_tokens, extra in shapes:
        if not spec.batch:
            continue
        reason = unavailable(spec, role) or refusal(spec, role, max_tokens, extra)
        if reason is not None:
            raise ConfigError(reason)


def check_qa_ready(config: RunConfig, benchmark: Benchmark | None = None) -> ProtocolPrompts | None:
    """The prompts the QA stage will send (None without an answerer); a one-line ConfigError when
    it cannot run: a missing API key (not needed locally, with ``cache_only`` or ``estimate``), a
    model its endpoint does not list, a broken prompt file, a batch provider that cannot serve a
    role, or the benchmark's own check (e.g. data an answer metric needs)."""
    answerer, judge, offline = config.answerer, config.judge, config.cache_only or config.estimate
    if answerer is None:
        return None
    benchmark = benchmark or config.dataset.describe()
    roles = [("answerer", answerer)] + ([("judge", judge)] if judge is not None else [])
    for role, spec in roles:
        _check_key(role, spec, answerer, offline)
    from harness.prompts import choose_prompts

    # a broken prompt file or a changed official file stops the run here
    prompts = choose_prompts(benchmark, answerer, judge, recipe=config.answer_recipe, system_kind=config.system.kind,
                             context_budget=config.dataset.context_budget, official_dir=config.official_dir)
    if not offline:
        _check_batchable(answerer, judge, answerer.max_tokens or config.dataset.answer_max_tokens, prompts)
        for role, spec in roles:
            if spec.local is None:  # a server the harness starts serves the configured name
                check_model_offered(spec, role)  # one GET /models per endpoint: a wrong name stops here
    if benchmark.check_ready is not None:
        benchmark.check_ready()
    return prompts


def first_errors(errors: Sequence[str | None], limit: int = SHOWN_ERRORS) -> list[tuple[str, int]]:
    """The first ``limit`` distinct error messages, in order of first appearance, with counts."""
    counts = Counter(e for e in errors if e)
    seen: list[str] = []
    for error in errors:
        if error and error not in seen:
            seen.append(error)
    return [(error, counts[error]) for error in seen[:limit]]


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
