"""``*_env`` settings name an environment variable; a key given there by mistake is refused unwritten.

``answerer.api_key_env=sk-...`` (the key instead of the variable's name) used to be copied into
config.json, metrics.json, history.jsonl and Hydra's yaml files. Every ``*_env`` setting, in the composed
config and in the command-line overrides (a sweep's values too), must be null or a variable name that
does not look like a credential; the message shows only the value's first characters.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from memory_protocol import ConfigError

ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
KEY_PREFIXES = ("sk-", "sk_", "AIza", "gsk_", "hf_", "ghp_", "gho_", "github_pat_", "xai-", "xoxb-", "xoxp-")
# AWS access key ids: a four-letter kind, then 16 upper-case letters and digits (AWS's documented shape)
AWS_KEY_ID = re.compile(r"(AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}")
LONG_RANDOM = 24  # this long with upper case, lower case and digits: a token, not a variable's name
# A stretch without an underscore this long, of digits and letters, at this many bits a character
# (64 hex digits: ~3.9; 'MY_LONG_PROJECT_OPENAI_API_KEY': words between underscores, never flagged)
RANDOM_STRETCH = 16
RANDOM_BITS = 3.0
SHOWN_CHARS = 3


def _looks_like_a_key(value: str) -> bool:
    if value.startswith(KEY_PREFIXES) or AWS_KEY_ID.fullmatch(value):
        return True
    return (len(value) >= LONG_RANDOM and any(c.islower() for c in value) and any(c.isupper() for c in value)
            and any(c.isdigit() for c in value))


def _looks_random(value: str) -> bool:
    """Long, high-entropy (Shannon, bits a character) and unlike a variable's name: e.g. 64 hex digits."""
    stretch = max(value.split("_"), key=len)
    bits = -sum(n / len(value) * math.log2(n / len(value)) for n in Counter(value).values())
    return (len(stretch) >= RANDOM_STRETCH and any(c.isdigit() for c in stretch) and any(c.isalpha() for c in stretch)
            and bits >= RANDOM_BITS)


def problem(value: Any, environ: Mapping[str, str] | None = None) -> str | None:
    """Why ``value`` cannot be an ``*_env`` setting (None: null or a variable's name). A random-looking
    value is refused only when no variable of that name is set in ``environ`` (default: os.environ)."""
    if value is None:
        return None
    text = str(value)
    if _looks_like_a_key(text):
        return "looks like a key itself"
    if not ENV_NAME.fullmatch(text):
        return "is not a valid environment variable name"
    if _looks_random(text) and text not in (os.environ if environ is None else environ):
        return "names no set variable and looks like a key itself (long and random)"
    return None


def _refuse(key: str, value: Any) -> None:
    why = problem(value)
    if why:
        raise ConfigError(
            f"{key}='{str(value)[:SHOWN_CHARS]}…' ({len(str(value))} characters) {why}; an *_env setting takes the "
            f"NAME of the variable that holds the key: export OPENAI_API_KEY=<key> and give {key}=OPENAI_API_KEY "
            f"(nothing was written)"
        )


def _env_settings(config: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Every (dotted key, value) in ``config`` whose key ends in ``_env``."""
    if isinstance(config, Mapping):
        for key, value in config.items():
            dotted = f"{prefix}{key}"
            if str(key).endswith("_env") and not isinstance(value, (Mapping, list, tuple)):
                yield dotted, value
            else:
                yield from _env_settings(value, dotted + ".")
    elif isinstance(config, (list, tuple)):
        for index, value in enumerate(config):
            yield from _env_settings(value, f"{prefix}{index}.")


def check_env_settings(config: Mapping[str, Any]) -> None:
    """A one-line ConfigError for the first ``*_env`` setting that is not a variable's name (``hydra``'s
    own section is skipped)."""
    for key, value in _env_settings({k: v for k, v in config.items() if k != "hydra"}):
        _refuse(key, value)


def check_env_overrides(overrides: Iterable[str]) -> None:
    """The same check on command-line overrides, each value of a sweep (``a,b``, ``choice(a,b)``) included."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    for override in OverridesParser.create().parse_overrides(list(overrides)):
        key = override.key_or_group
        if key.endswith("_env") and not override.is_delete():
            values = (list(override.sweep_string_iterator()) if override.is_sweep_override()
                      else [override.get_value_element_as_str()])
            for value in values:
                if value not in ("null", "None"):
                    _refuse(key, value)
