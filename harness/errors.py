"""Errors the command line turns into one clear line and exit code 2."""

from __future__ import annotations


class ConfigError(ValueError):
    """A configuration value that cannot be used; the message names the key."""
