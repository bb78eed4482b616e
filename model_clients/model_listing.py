"""Is the configured model one the server offers? ``GET {base_url}/models`` asked once per endpoint and
process, before the first paid call: a misspelt model was otherwise found only after every request had
failed (issue 24: all 73 OrgMemBench answers). A server that does not list its models (an error, a
404, not a model list) is taken as "cannot tell" and the run goes on. Never asked when nothing is sent.
"""

from __future__ import annotations

import os
import threading

from memplusplus.api_keys import NO_KEY_PLACEHOLDER, Endpoint

LIST_TIMEOUT_S = 10.0  # one short GET; a server slower than this is treated as not listing its models
SHOWN_IDS = 5  # how many offered ids the error names


class UnknownModelError(ValueError):
    """The endpoint lists its models and the configured model is not among them."""


_lock = threading.Lock()
_lists: dict[tuple[str, str | None], tuple[str, ...] | None] = {}  # (base URL, key variable) -> ids


def forget_model_lists() -> None:
    """Drop the per-process answers (tests start servers on reused ports)."""
    with _lock:
        _lists.clear()


def _ask(base_url: str, key_env: str | None) -> tuple[str, ...] | None:
    """The ids ``GET {base_url}/models`` lists, in its order, asked through the openai SDK itself (the
    harness needs no HTTP client of its own: the SDK's is httpx in openai 1.x and 2.x, httpx2 in 3.x)."""
    import openai

    api_key = os.environ.get(key_env, "").strip() if key_env else ""
    client = openai.OpenAI(api_key=api_key or NO_KEY_PLACEHOLDER, base_url=base_url, timeout=LIST_TIMEOUT_S,
                           max_retries=0)
    try:
        data = getattr(client.models.list(), "data", None)
        ids = tuple(str(item.id) for item in data or () if getattr(item, "id", None)) if isinstance(data, list) else ()
    except (openai.OpenAIError, ValueError, TypeError, AttributeError):
        return None  # an HTTP error, a reply that is not a model list, no server: cannot tell
    finally:
        client.close()
    return ids or None


def offered_models(endpoint: Endpoint) -> tuple[str, ...] | None:
    """The models ``endpoint`` lists, or None when it does not say (asked once per process)."""
    base_url = endpoint.resolved_base_url
    slot = (base_url, endpoint.api_key_env)
    with _lock:
        if slot in _lists:
            return _lists[slot]
    listed = _ask(base_url, endpoint.api_key_env)
    with _lock:
        return _lists.setdefault(slot, listed)


def check_model_offered(endpoint: Endpoint, role: str) -> None:
    """Raise :class:`UnknownModelError` (one line naming ``role``, the endpoint and a few offered ids)
    when ``endpoint`` lists its models and ``endpoint.model`` is not one of them."""
    listed = offered_models(endpoint)
    if listed is None or endpoint.model in listed:
        return
    shown = ", ".join(repr(i) for i in listed[:SHOWN_IDS])
    more = f" and {len(listed) - SHOWN_IDS} more" if len(listed) > SHOWN_IDS else ""
    raise UnknownModelError(
        f"{role}: model {endpoint.model!r} is not offered by {endpoint.resolved_base_url} (GET /models lists "
        f"{shown}{more}); set {role}.model to one of them. Nothing was sent."
    )
