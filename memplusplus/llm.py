"""How a write-time model call enters memplusplus: a plain callable, nothing of the harness.

``Complete(messages, response_format, max_tokens) -> str`` sends one chat request and returns the
reply text (the harness builds it over its cached client, so calls are cached, counted and
replayable; ``max_tokens`` caps the reply where a caller needs it, None leaves the client's own). A
call that failed for good raises ``CallFailed``, which every caller here treats like an unusable
reply; any other exception (e.g. a cache miss under ``cache_only``) propagates.
"""

from __future__ import annotations

import json
import re
from typing import Any, Protocol


class Complete(Protocol):
    def __call__(
        self, messages: list[dict[str, str]], response_format: dict[str, Any] | None = None, max_tokens: int | None = None
    ) -> str: ...


class CallFailed(RuntimeError):
    """The model call failed for good (the caller changes nothing, by the paper's rule)."""


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def parse_json(reply: str) -> Any:
    """The JSON value in ``reply`` (bare, or inside a ```json fence); None when there is none."""
    text = reply.strip()
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        return json.loads(text)
    except (json.JSONDecodeError, ValueError):
        start, end = text.find("{"), text.rfind("}")
        if 0 <= start < end:
            try:
                return json.loads(text[start : end + 1])
            except (json.JSONDecodeError, ValueError):
                return None
        return None


def ask_json(complete: Complete, system: str, user: str, schema: dict[str, Any]) -> Any:
    """One call asking for JSON matching ``schema``; None when the call fails or the reply is unparsable."""
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    response_format = {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}}
    try:
        reply = complete(messages, response_format)
    except CallFailed:
        return None
    return parse_json(reply)


def ask_text(complete: Complete, system: str, user: str, max_tokens: int | None = None) -> str | None:
    """One call asking for plain text, its reply capped at ``max_tokens``; None when the call fails."""
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    try:
        return complete(messages, None, max_tokens=max_tokens)
    except CallFailed:
        return None


__all__ = ["CallFailed", "Complete", "ask_json", "ask_text", "parse_json"]
