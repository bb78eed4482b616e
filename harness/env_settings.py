"""``*_env`` settings name an environment variable; a key given there by mistake is refused unwritten.

``answerer.api_key_env=sk-...`` (the key itself instead of the name of the variable that holds it)
used to be copied into config.json, metrics.json, history.jsonl and Hydra's yaml files. Every
setting whose key ends in ``_env`` must now be null or a valid variable name
(``[A-Za-z_][A-Za-z0-9_]*``) that does not look like a credential (``sk-``/``sk_``-style prefixes, an
AWS ``AKIA...`` key id, a long mix of upper case, lower case and digits, or -- when no variable of that
name is set -- a long high-entropy stretch such as 64 hex digits). The check runs on the composed config and on the
command-line overrides (a sweep's values too) before Hydra or the harness writes anything, and the
message shows only the value's first characters.
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
# A name that no variable holds and that reads as random: a stretch of this many letters and digits
# without an underscore, with digits and letters both, at this many bits of entropy a character or more
# (64 hex digits: ~3.9; 'MY_LONG_PROJECT_OPENAI_API_KEY': words between underscores, never flagged)
RANDOM_STRETCH = 16
RANDOM_BITS = 3.0
SHOWN_CHARS = 3


def looks_like_a_key(value: str) -> bool:
    if value.startswith(KEY_PREFIXES) or AWS_KEY_ID.fullmatch(value):
        return True
    return (len(value) >= LONG_RANDOM and any(c.islower() for c in value) and any(c.isupper() for c in value)
            and any(c.isdigit() for c in value))


def bits_per_character(text: str) -> float:
    """Shannon entropy of ``text``'s characters, in bits."""
    if not text:
        return 0.0
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def looks_random(value: str) -> bool:
    """Long, high-entropy and unlike a variable's name: a secret such as 64 hex digits."""
    stretch = max(value.split("_"), key=len)
    return (len(stretch) >= RANDOM_STRETCH and any(c.isdigit() for c in stretch) and any(c.isalpha() for c in stretch)
            and bits_per_character(value) >= RANDOM_BITS)


def problem(value: Any, environ: Mapping[str, str] | None = None) -> str | None:
    """Why ``value`` cannot be an ``*_env`` setting (None when it can: null or a variable's name).

    A random-looking value is refused only when no variable of that name is set (``environ``, by
    default the process's environment): a variable that exists is a name, whatever it looks like."""
    if value is None:
        return None
    text = str(value)
    if looks_like_a_key(text):
        return "looks like a key itself"
    if not ENV_NAME.fullmatch(text):
        return "is not a valid environment variable name"
    if looks_random(text) and text not in (os.environ if environ is None else environ):
        return "names no set variable and looks like a key itself (long and random)"
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
