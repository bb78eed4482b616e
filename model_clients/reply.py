"""One reply of the chat-completions API read as a result, or as an unusable reply worth asking
again (a 200 with no choices or no text, which real endpoints send transiently)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from model_clients.chat_types import ChatResult

__all__ = ["Attempt", "attempt_of"]


@dataclass(frozen=True)
class Attempt:
    """The outcome of one call through the SDK (its own retries included)."""

    result: ChatResult | None = None  # success
    error: str | None = None  # failure description
    reask: bool = False  # an unusable 200 reply: worth asking again


def attempt_of(completion: Any, key: str) -> Attempt:
    """A chat completion (the SDK's ``ChatCompletion``, from a live reply or a batch's output line)
    as a result, or as an unusable reply worth asking again (no choices, no text)."""
    if not completion.choices:
        return Attempt(error="the API returned no choices", reask=True)
    choice = completion.choices[0]
    content = choice.message.content
    calls = tuple(call.model_dump(include={"id", "type", "function"}) for call in choice.message.tool_calls or ())
    if content is None and calls:
        content = ""
    if content is None:
        return Attempt(error=f"the API returned no text content (finish_reason={choice.finish_reason})", reask=True)
    usage = completion.usage
    return Attempt(
        result=ChatResult(
            text=content,
            prompt_tokens=usage.prompt_tokens if usage is not None else 0,
            completion_tokens=usage.completion_tokens if usage is not None else 0,
            cached=False,
            key=key,
            finish_reason=choice.finish_reason,
            tool_calls=calls,
        )
    )
