"""The one way our clients hold a provider SDK client: built lazily under a lock on the first call
that needs the network, its key read from the config's variable and scrubbed from every error text."""

from __future__ import annotations

import os
import threading
from typing import Any

from memplusplus.api_keys import read_api_key, redact
from model_clients.chat_types import LLMConfig

ERROR_MAX_CHARS = 500


class HoldsSDK:
    """Base of a client keeping the SDK client ``_build_sdk`` makes in ``_sdk`` (None until built)."""

    config: LLMConfig
    _sdk: Any = None

    def __init__(self) -> None:
        self._sdk_lock = threading.Lock()
        self._sdk = None

    def _build_sdk(self) -> Any:
        raise NotImplementedError

    def _client(self) -> Any:
        with self._sdk_lock:
            if self._sdk is None:
                self._sdk = self._build_sdk()
            return self._sdk

    def api_key(self, where: str) -> str:
        """The key (raises ``MissingAPIKeyError`` naming ``where`` and the variable when unset)."""
        return read_api_key(self.config.api_key_env, where)

    def redact(self, text: str) -> str:
        """``text`` without the API key, cut to the error length kept."""
        env = self.config.api_key_env
        secrets = {os.environ.get(env, "") if env else "", getattr(self._sdk, "api_key", None) or ""}
        return redact(text, secrets)[:ERROR_MAX_CHARS]

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._sdk_lock:
            if self._sdk is not None:
                self._sdk.close()
                self._sdk = None
