"""The one way our clients hold a provider SDK client: built lazily under a lock on the first call
that needs the network, closed once (also as a context manager)."""

from __future__ import annotations

import threading
from typing import Any


class HoldsSDK:
    """Base of a class keeping a lazily built SDK client in ``_sdk`` (None until built)."""

    _sdk: Any = None

    def __init__(self) -> None:
        self._sdk_lock = threading.Lock()
        self._sdk = None

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._sdk_lock:
            if self._sdk is not None:
                self._sdk.close()
                self._sdk = None


__all__ = ["HoldsSDK"]
