"""``*_env`` settings name an environment variable; a key given there by mistake is refused unwritten.

``answerer.api_key_env=sk-...`` (the key itself instead of the name of the variable that holds it)
used to be copied into config.json, metrics.json, history.jsonl and Hydra's yaml files. Every
setting whose key ends in ``_env`` must now be null or a valid variable name
(``[A-Za-z_][A-Za-z0-9_]*``) that does not look like a credential (``sk-``/``sk_``-style prefixes, or
a long mix of upper case, lower case and digits). The check runs on the composed config and on the
command-line overrides (a sweep's values too) before Hydra or the harness writes anything, and the
message shows only the value's first characters.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from memory_protocol import ConfigError

ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
KEY_PREFIXES = ("sk-", "sk_", "AIza", "gsk_", "hf_", "ghp_", "gho_", "github_pat_", "xai-", "xoxb-", "xoxp-")
LONG_RANDOM = 24  # this long with upper case, lower case and digits: a token, not a variable's name
SHOWN_CHARS = 3


def looks_like_a_key(value: str) -> bool:
    if value.startswith(KEY_PREFIXES):
        return True
    return (len(value) >= LONG_RANDOM and any(c.islower() for c in value) and any(c.isupper() for c in value)
            and any(c.isdigit() for c in value))


def problem(value: Any) -> str | None:
    """Why ``value`` cannot be an ``*_env`` setting (None when it can: null or a variable's name)."""
    if value is None:
        return None
    text = str(value)
    if looks_like_a_key(text):
        return "looks like a key itself"
    if not ENV_NAME.fullmatch(text):
        return "is not a valid environment variable name"
    return None


def _shown(value: Any) -> str:
    text = str(value)
    return f"'{text[:SHOWN_CHARS]}…' ({len(text)} characters)"


def refusal(key: str, value: Any, why: str) -> ConfigError:
    return ConfigError(
        f"{key}={_shown(value)} {why}; an *_env setting takes the NAME of the variable that holds the key: "
        f"export OPENAI_API_KEY=<key> and give {key}=OPENAI_API_KEY (nothing was written)"
    )


def env_settings(config: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Every (dotted key, value) in ``config`` whose key ends in ``_env``."""
    if isinstance(config, Mapping):
        for key, value in config.items():
            dotted = f"{prefix}{key}"
            if str(key).endswith("_env") and not isinstance(value, (Mapping, list, tuple)):
                yield dotted, value
            else:
                yield from env_settings(value, dotted + ".")
    elif isinstance(config, (list, tuple)):
        for index, value in enumerate(config):
            yield from env_settings(value, f"{prefix}{index}.")


def check_env_settings(config: Mapping[str, Any]) -> None:
    """Raise a one-line ConfigError for the first ``*_env`` setting holding something other than a
    variable's name (``hydra``'s own section is skipped)."""
    for key, value in env_settings({k: v for k, v in config.items() if k != "hydra"}):
        why = problem(value)
        if why:
            raise refusal(key, value, why)


def check_env_overrides(overrides: Iterable[str]) -> None:
    """The same check on command-line overrides, each value of a sweep (``a,b``, ``choice(a,b)``) included."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    for override in OverridesParser.create().parse_overrides(list(overrides)):
        key = override.key_or_group
        if not key.endswith("_env") or override.is_delete():
            continue
        if override.is_sweep_override():
            values = list(override.sweep_string_iterator())
        else:
            values = [override.get_value_element_as_str()]
        for value in values:
            if value in ("null", "None"):
                continue
            why = problem(value)
            if why:
                raise refusal(key, value, why)
