"""Settings that cannot mean anything, refused before any data is read: one line naming the key,
the value as Hydra writes it (``null``, ``true``, at most ~200 characters) and what is allowed."""

from __future__ import annotations

import errno
import math
import os
import tempfile
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
