"""Reading an API key from the environment, the one place every client of an endpoint does it.

A config names the environment variable (``api_key_env``), never the key. ``None`` means the
server needs no key: the placeholder ``"EMPTY"`` is sent, as OpenAI-compatible local servers expect.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

NO_KEY_PLACEHOLDER = "EMPTY"
DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"


def resolve_base_url(base_url: str | None) -> str:
    """The endpoint a client calls: ``base_url``, else OpenAI's, without a trailing slash."""
    return (base_url or DEFAULT_OPENAI_BASE_URL).rstrip("/")


@dataclass(frozen=True)
class Endpoint:
    """Where a model is served and how long a call may take: the fields every model endpoint shares,
    declared here once. Chat models extend it in ``model_clients.chat_types.LLMConfig`` (the
    answerer, the judge, the write-time model of a system), embedding models in
    ``memplusplus.openai_encoder.OpenAIEncoderConfig`` (memplusplus imports nothing of the model
    layer, so the shared part lives here). ``timeout_s`` and ``max_retries`` are execution-only:
    they never enter a cache key."""

    model: str
    base_url: str | None = None
    api_key_env: str | None = "OPENAI_API_KEY"
    timeout_s: float = 120.0
    max_retries: int = 6

    @property
    def resolved_base_url(self) -> str:
        """The endpoint actually used, without a trailing slash (part of cache keys)."""
        return resolve_base_url(self.base_url)


def _as_written(value: object) -> str:
    """A setting's value as a config spells it (``null``, ``true``, ``'abc'``, ``3``)."""
    if value is None or isinstance(value, bool):
        return "null" if value is None else str(value).lower()
    return repr(value)


def require_at_least(minimum: float, owner: str, **values: float) -> None:
    """Raise ``ValueError`` naming every one of ``values`` below ``minimum``, or not a number at all
    (``null``, a string, ``true``), with the value given (a settings check)."""
    bad = [f"{name}={_as_written(value)}" for name, value in values.items()
           if isinstance(value, bool) or not isinstance(value, (int, float)) or value < minimum]
    if bad:
        raise ValueError(f"{owner}: {', '.join(bad)}: each must be a number >= {minimum}")


def read_api_key(env: str | None, what: str, hint: str = "") -> str:
    """The key held by ``$env`` (``NO_KEY_PLACEHOLDER`` when ``env`` is None).

    Raises ``MissingAPIKey`` naming ``what`` (model and endpoint) and the variable when it is unset
    or blank; the message never contains a key.
    """
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
    """A real request is needed but the environment variable holding the API key is unset or empty."""


def redact(text: str, secrets: set[str]) -> str:
    """``text`` with every non-empty secret (other than the placeholder) replaced by ``***``."""
    for secret in secrets:
        if secret and secret != NO_KEY_PLACEHOLDER:
            text = text.replace(secret, "***")
    return text
