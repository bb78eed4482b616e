"""Errors the command line turns into one clear line (exit code 2 for bad input, 130 for Ctrl-C)."""

from __future__ import annotations


class ConfigError(ValueError):
    """A configuration value that cannot be used; the message names the key."""


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during a run; the message says how far it got. Every finished step is cached."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
