"""After the QA stage: failed answer and judge calls told in a few lines, with a hint at the cause."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence

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
