"""Reading an API key from the environment, in one place: a config names the variable
(``api_key_env``), never the key; None sends the placeholder ``"EMPTY"`` local servers expect."""

from __future__ import annotations

import os
from dataclasses import dataclass

NO_KEY_PLACEHOLDER = "EMPTY"
DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"


@dataclass(frozen=True)
class Endpoint:
    """What every model endpoint has (chat: ``model_clients.chat_types.LLMConfig``, embeddings:
    ``OpenAIEncoderConfig``); ``timeout_s`` and ``max_retries`` never enter a cache key."""

    model: str
    base_url: str | None = None
    api_key_env: str | None = "OPENAI_API_KEY"
    timeout_s: float = 120.0
    max_retries: int = 6

    @property
    def resolved_base_url(self) -> str:
        return (self.base_url or DEFAULT_OPENAI_BASE_URL).rstrip("/")


def _as_written(value: object) -> str:
    """A setting's value as a config spells it (``null``, ``true``, ``'abc'``, ``3``)."""
    if value is None or isinstance(value, bool):
        return "null" if value is None else str(value).lower()
    return repr(value)


def require_at_least(minimum: float, owner: str, **values: float) -> None:
    """``ValueError`` naming each of ``values`` below ``minimum`` or not a number, as written."""
    bad = [f"{name}={_as_written(value)}" for name, value in values.items()
           if isinstance(value, bool) or not isinstance(value, (int, float)) or value < minimum]
    if bad:
        raise ValueError(f"{owner}: {', '.join(bad)}: each must be a number >= {minimum}")


def read_api_key(env: str | None, what: str, hint: str = "") -> str:
    """The key in ``$env`` (the placeholder for None); ``MissingAPIKey`` naming ``what`` when unset."""
    if env is None:
        return NO_KEY_PLACEHOLDER
    value = os.environ.get(env, "").strip()
    if not value:
        raise MissingAPIKey(
            f"{what} needs an API key, but the environment variable {env} is not set (or empty). "
            f"Set {env}{hint or ', or set api_key_env to null for a local server that needs no key'}."
        )
    return value


class MissingAPIKey(RuntimeError):
    """A real request needs an API key whose environment variable is unset or empty."""


def redact(text: str, secrets: set[str]) -> str:
    for secret in secrets:
        if secret and secret != NO_KEY_PLACEHOLDER:
            text = text.replace(secret, "***")
    return text
