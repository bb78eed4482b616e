"""Settings that cannot mean anything are refused before any data is read, in one line each.

Every message names the key (as typed on the command line), shows the value as Hydra writes it
(``null``, ``true``, at most ~200 characters) and says what is allowed.
"""

from __future__ import annotations

import errno
import math
import os
import tempfile
from pathlib import Path
from typing import Any, Mapping

from memory_protocol import ConfigError
from memplusplus.legs import LEGS

MAX_SHOWN = 200
UNSET = "???"  # what a config group leaves in a value the user must give (e.g. answerer.model)

# Every on/off setting, by its key's last name wherever it sits (``system.conjunctive``,
# ``dataset.mempp.conjunctive``, ``answerer.cache_only`` ...). tests/test_boolean_settings.py checks
# that it lists every boolean of configs/ and of the settings dataclasses and constructors. ``batch``
# is not here: it also takes ``status`` (top level) or null (a role), checked by harness.batch_switch.
BOOLEAN_KEYS = frozenset({
    "estimate", "cache_only", "progress", "repair_cache", "send_dimensions",
    "conjunctive", "dedup", "respect_as_of", "infer", "graph_as_of",
    "any_term_lexical", "thread_expansion", "date_scope", "clause_views", "sentence_views", "packing",
})


def show(value: Any) -> str:
    """``value`` as a YAML/Hydra user would type it, cut to about ``MAX_SHOWN`` characters."""
    if value is None:
        text = "null"
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, str):
        text = repr(value)
    else:
        text = str(value)
    if len(text) > MAX_SHOWN:
        text = f"{text[:MAX_SHOWN]}... ({len(text):,} characters)"
    return text


def boolean(key: str, value: Any) -> bool:
    """``value`` if it is true or false, else a ConfigError naming ``key`` and the value. Hydra's
    command line reads only true/false (any case) as booleans: ``no`` and ``off`` arrive as text,
    which ``bool()`` took for true, and ``0``/``1`` as numbers, so they are refused, not guessed."""
    if isinstance(value, bool):
        return value
    raise ConfigError(f"{key}={show(value)}: must be true or false (yes/no, on/off and 0/1 are not booleans here)")


def check_booleans(tree: Any, path: str = "") -> None:
    """Every setting of :data:`BOOLEAN_KEYS` in ``tree`` (a composed config) checked by
    :func:`boolean`; the first bad one is a ConfigError naming its full key."""
    if isinstance(tree, Mapping):
        for name, value in tree.items():
            key = f"{path}.{name}" if path else str(name)
            if name in BOOLEAN_KEYS:
                boolean(key, value)
            else:
                check_booleans(value, key)
    elif isinstance(tree, list):
        for i, item in enumerate(tree):
            check_booleans(item, f"{path}[{i}]")


def integer(key: str, value: Any, minimum: int, maximum: int | None = None, allowed: str = "") -> int:
    """``value`` as an int within [minimum, maximum], else a ConfigError naming ``key``."""
    ok = isinstance(value, int) and not isinstance(value, bool)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value, ok = int(value), True
    if not ok or value < minimum or (maximum is not None and value > maximum):
        bounds = f"an integer >= {minimum}" if maximum is None else f"an integer from {minimum} to {maximum}"
        raise ConfigError(f"{key}={show(value)}: must be {bounds}{allowed}")
    return int(value)


def number(key: str, value: Any, *, above: float | None = None, at_least: float | None = None, allowed: str = "") -> float:
    """``value`` as a finite float (> ``above`` / >= ``at_least``), else a ConfigError naming ``key``."""
    try:
        result = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        result = math.nan
    bad = not math.isfinite(result)
    bad = bad or (above is not None and result <= above) or (at_least is not None and result < at_least)
    if bad:
        bound = f"> {above:g}" if above is not None else f">= {at_least:g}" if at_least is not None else "finite"
        raise ConfigError(f"{key}={show(value)}: must be a number {bound}{allowed}")
    return result


def writable_folder(key: str, value: Any) -> str:
    """A folder setting the run writes into: a non-empty path where a folder can be made (checked by
    making and removing an empty one in its nearest existing parent; nothing is left behind)."""
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{key}={show(value)}: must be a folder path (empty would write into the working folder)")
    path = Path(os.path.expanduser(value)).absolute()
    parent = path
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{key}={show(value)}: is a file, not a folder")
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".mempp-probe-", dir=parent))
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):  # a full disk: said in one line where the run writes
            return value
        raise ConfigError(f"{key}={show(value)}: cannot make a folder in {parent} ({exc.strerror or exc})") from None
    return value


def check_mempp(params: Mapping[str, Any], k: int) -> None:
    """Mem++'s settings: a positive RRF constant, known legs, a weight > 0 on a run leg, a reserve <= k."""
    if "gamma" in params:
        number("system.gamma", params["gamma"], above=0, allowed=" (the RRF constant; the paper uses 60)")
    legs = params.get("legs", list(LEGS))
    if not isinstance(legs, (list, tuple)) or any(leg not in LEGS for leg in legs):
        raise ConfigError(f"system.legs={show(legs)}: must be a list of legs from {list(LEGS)}")
    weights = params.get("weights")
    if not isinstance(weights, Mapping):
        raise ConfigError(f"system.weights={show(weights)}: must map legs {list(LEGS)} to numbers >= 0")
    unknown = sorted(set(weights) - set(LEGS))
    if unknown:
        raise ConfigError(f"system.weights: unknown leg(s) {unknown}; legs are {list(LEGS)}")
    values = {leg: number(f"system.weights.{leg}", w, at_least=0) for leg, w in weights.items()}
    if not any(values.get(leg, 0.0) > 0 for leg in legs):
        raise ConfigError(
            f"system.weights={show(dict(weights))} with system.legs={show(list(legs))}: every leg that runs has "
            f"weight 0, so nothing would be ranked; give at least one leg a weight > 0"
        )
    if "candidates" in params:
        integer("system.candidates", params["candidates"], 1, allowed=" (C, the most rows a leg returns)")
    if "recency_reserve" in params:
        integer("system.recency_reserve", params["recency_reserve"], 0, k, allowed=f" (at most system.k={k})")
    if "lexical_ranker" in params and params["lexical_ranker"] not in ("cover_density", "bm25"):
        raise ConfigError(f"system.lexical_ranker={show(params['lexical_ranker'])}: must be cover_density or bm25")
    if params.get("min_term_chars") is not None:
        integer("system.min_term_chars", params["min_term_chars"], 1)
    if params.get("max_query_terms") is not None:
        integer("system.max_query_terms", params["max_query_terms"], 1, allowed=" or null (no cap)")


def check_model(section: str, values: Mapping[str, Any], prompt_folder: str | None = None) -> None:
    """An answerer or judge: a model and endpoint actually given, sane limits, an existing prompt file
    (``prompt_folder``: the prompt is a folder, described so in the message)."""
    for key in ("model", "base_url"):
        value = values.get(key)
        if value == UNSET or (key == "model" and not value):
            what = "the model name the server serves" if key == "model" else "the server's URL, e.g. http://host:8000/v1"
            raise ConfigError(f"{section}.{key} is not set: give {section}.{key}=<{what}>")
    base_url = values.get("base_url")
    if base_url is not None and not str(base_url).startswith(("http://", "https://")):
        raise ConfigError(f"{section}.base_url={show(base_url)}: must be an http:// or https:// URL, or null")
    if "concurrency" in values:
        integer(f"{section}.concurrency", values["concurrency"], 1)
    if "max_retries" in values:
        integer(f"{section}.max_retries", values["max_retries"], 0)
    if "runs" in values:
        integer(f"{section}.runs", values["runs"], 1)
    if "timeout_s" in values:
        number(f"{section}.timeout_s", values["timeout_s"], above=0, allowed=" (seconds)")
    if values.get("max_tokens") is not None:
        integer(f"{section}.max_tokens", values["max_tokens"], 1, allowed=" or null (the dataset's answer_max_tokens)")
    for key in ("price_in_per_mtok", "price_out_per_mtok"):
        if values.get(key) is not None:
            number(f"{section}.{key}", values[key], at_least=0, allowed=" (USD per 1M tokens) or null")
    prompt = values.get("prompt_file")
    if prompt is not None:
        path = Path(str(prompt)).expanduser()
        exists = path.is_dir() if prompt_folder else path.is_file()
        if not exists:
            kind = prompt_folder or "a prompt file"
            raise ConfigError(f"{section}.prompt_file={show(prompt)}: not found; must be {kind} or null")
