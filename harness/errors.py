"""Ctrl-C during a run, turned by the command line into one line (exit code 130)."""

from __future__ import annotations


class RunInterrupted(KeyboardInterrupt):
    """The message says how far the run got; every finished step is cached."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
