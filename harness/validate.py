"""Settings that cannot mean anything, refused before any data is read: one line naming the key,
the value as Hydra writes it (``null``, ``true``, at most ~200 characters) and what is allowed.

An ``*_env`` setting names an environment variable: a key given there by mistake
(``answerer.api_key_env=sk-...``) is refused before it is written anywhere (config.json, metrics.json,
Hydra's yaml files), in the composed config and in the command-line overrides alike; the message shows
only the value's first characters."""

from __future__ import annotations

import errno
import math
import os
import re
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Mapping

from memory_protocol import ConfigError

MAX_SHOWN = 200
UNSET = "???"  # what a config group leaves in a value the user must give (e.g. answerer.model)

# Every on/off setting, by its key's last name wherever it sits (tests/test_boolean_settings.py checks
# the list). ``batch`` also takes ``status`` or null: harness.config checks it.
BOOLEAN_KEYS = frozenset({
    "estimate", "cache_only", "progress", "repair_cache", "send_dimensions",
    "conjunctive", "dedup", "respect_as_of", "infer", "graph_as_of",
    "any_term_lexical", "thread_expansion", "date_scope", "clause_views", "sentence_views", "packing",
    "errata_evidence",
})


def as_typed(value: Any) -> str:
    """``value`` as a YAML/Hydra user would type it, cut to about ``MAX_SHOWN`` characters."""
    if value is None or isinstance(value, bool):
        text = "null" if value is None else str(value).lower()
    else:
        text = repr(value) if isinstance(value, str) else str(value)
    if len(text) > MAX_SHOWN:
        text = f"{text[:MAX_SHOWN]}... ({len(text):,} characters)"
    return text


def check_booleans(tree: Any, path: str = "") -> None:
    """Every :data:`BOOLEAN_KEYS` setting in a composed config, by its full key. Hydra reads only
    true/false as booleans: ``no``/``off`` arrive as text (which ``bool()`` took for true) and
    ``0``/``1`` as numbers, so they are refused, not guessed."""
    if isinstance(tree, Mapping):
        for name, value in tree.items():
            key = f"{path}.{name}" if path else str(name)
            if name in BOOLEAN_KEYS and not isinstance(value, bool):
                raise ConfigError(f"{key}={as_typed(value)}: must be true or false (yes/no, on/off and 0/1 are not "
                                  f"booleans here)")
            if name not in BOOLEAN_KEYS:
                check_booleans(value, key)
    elif isinstance(tree, list):
        for i, item in enumerate(tree):
            check_booleans(item, f"{path}[{i}]")


def check_keys(label: str, values: Mapping[str, Any], known: set[str]) -> None:
    """A misspelt key is named, with the known ones, before anything it leaves unset."""
    unknown = sorted(set(values) - known)
    if unknown:
        raise ConfigError(f"{label}: unknown key(s) {unknown}; known keys are {sorted(known)}")


def int_setting(key: str, value: Any, minimum: int, maximum: int | None = None, allowed: str = "") -> int:
    ok = isinstance(value, int) and not isinstance(value, bool)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value, ok = int(value), True
    if not ok or value < minimum or (maximum is not None and value > maximum):
        bounds = f"an integer >= {minimum}" if maximum is None else f"an integer from {minimum} to {maximum}"
        raise ConfigError(f"{key}={as_typed(value)}: must be {bounds}{allowed}")
    return int(value)


def float_setting(key: str, value: Any, *, above: float | None = None, at_least: float | None = None,
                  allowed: str = "") -> float:
    try:
        result = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        result = math.nan
    if not math.isfinite(result) or (above is not None and result <= above) or (at_least is not None and result < at_least):
        bound = f"> {above:g}" if above is not None else f">= {at_least:g}" if at_least is not None else "finite"
        raise ConfigError(f"{key}={as_typed(value)}: must be a number {bound}{allowed}")
    return result


def writable_folder(key: str, value: Any) -> str:
    """A non-empty path where a folder can be made (an empty one is made and removed in its nearest
    existing parent)."""
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{key}={as_typed(value)}: must be a folder path (empty would write into the working folder)")
    path = Path(os.path.expanduser(value)).absolute()
    parent = path
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{key}={as_typed(value)}: is a file, not a folder")
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".mempp-probe-", dir=parent))
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):  # a full disk: said in one line where the run writes
            return value
        raise ConfigError(f"{key}={as_typed(value)}: cannot make a folder in {parent} ({exc.strerror or exc})") from None
    return value


def check_model(section: str, values: Mapping[str, Any], prompt_folder: str | None = None) -> None:
    """An answerer, judge or remote encoder: model and endpoint given, sane limits, an existing prompt
    file (``prompt_folder``: how the folder the prompt must be is described)."""
    for key in ("model", "base_url"):
        value = values.get(key)
        if value == UNSET or (key == "model" and not value):
            what = "the model name the server serves" if key == "model" else "the server's URL, e.g. http://host:8000/v1"
            raise ConfigError(f"{section}.{key} is not set: give {section}.{key}=<{what}>")
    base_url = values.get("base_url")
    if base_url is not None and not str(base_url).startswith(("http://", "https://")):
        raise ConfigError(f"{section}.base_url={as_typed(base_url)}: must be an http:// or https:// URL, or null")
    for key, minimum in (("concurrency", 1), ("max_retries", 0), ("runs", 1)):
        if key in values:
            int_setting(f"{section}.{key}", values[key], minimum)
    if "timeout_s" in values:
        float_setting(f"{section}.timeout_s", values["timeout_s"], above=0, allowed=" (seconds)")
    if values.get("max_tokens") is not None:
        int_setting(f"{section}.max_tokens", values["max_tokens"], 1, allowed=" or null (the dataset's answer_max_tokens)")
    for key in ("price_in_per_mtok", "price_out_per_mtok"):
        if values.get(key) is not None:
            float_setting(f"{section}.{key}", values[key], at_least=0, allowed=" (USD per 1M tokens) or null")
    prompt = values.get("prompt_file")
    if prompt is not None:
        path = Path(str(prompt)).expanduser()
        if not (path.is_dir() if prompt_folder else path.is_file()):
            raise ConfigError(f"{section}.prompt_file={as_typed(prompt)}: not found; must be "
                              f"{prompt_folder or 'a prompt file'} or null")

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
