"""How a write-time model call enters memplusplus: ``Complete(messages, response_format, max_tokens)
-> str``, a plain callable (the harness builds it over its cached client). ``CallFailed`` is a call
that failed for good, treated like an unusable reply; any other exception propagates."""

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
    """The JSON value in ``reply`` (bare, or inside a ```json fence, or its outermost braces); None when
    there is none."""
    text = reply.strip()
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1).strip()
    for candidate in (text, text[text.find("{") : text.rfind("}") + 1]):
        try:
            return json.loads(candidate)
        except ValueError:
            continue
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


def ask_strings(complete: Complete, system: str, user: str, field: str) -> list[str]:
    """The non-empty strings of the reply's JSON list ``field`` ([] when the call fails or gives none)."""
    schema = {"type": "object", "properties": {field: {"type": "array", "items": {"type": "string"}}}, "required": [field]}
    reply = ask_json(complete, system, user, schema)
    items = reply.get(field) if isinstance(reply, dict) else None
    return [s.strip() for s in items if isinstance(s, str) and s.strip()] if isinstance(items, list) else []


__all__ = ["CallFailed", "Complete", "ask_json", "ask_strings", "ask_text", "parse_json"]
