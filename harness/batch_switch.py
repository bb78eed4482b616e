"""The ``batch`` switch: which roles send their calls through a provider's batch API.

Top-level ``batch`` is true, false or ``status`` (list pending batches, run nothing); a role's own
``batch`` (``answerer.batch``, ``judge.batch``, ``system.llm.batch``) wins, null meaning the top-level
value. Batched: the answerer's and judge's calls. Live: a local server's (no batch API), and a system's
write-time calls, made one at a time inside its ingest where each reads what the ones before wrote
(Mem0, Zep, Mem^g++), at the live price with one stderr line saying so.
"""

from __future__ import annotations

from typing import Any

from harness.validate import as_typed as show, float_setting as number
from memory_protocol import ConfigError

STATUS = "status"


def switch(value: Any) -> bool:
    """The top-level ``batch`` of a run (``status`` is handled before a run is built)."""
    if isinstance(value, bool):
        return value
    if value == STATUS:
        raise ConfigError("batch=status lists the pending batches and runs nothing; give it on its own "
                          "(python run.py batch=status), or batch=true / batch=false for a run")
    raise ConfigError(f"batch={show(value)}: must be true, false or status")


def poll_interval(value: Any) -> float:
    return number("batch_poll_s", value, at_least=0, allowed=" (seconds between two polls of a batch)")


def role_batch(section: str, raw: dict[str, Any], batch: bool, poll_s: float) -> dict[str, Any]:
    """A role's settings with ``batch`` resolved (its own, else the top-level value; never on a local
    server) and ``batch_poll_s`` filled in."""
    own = raw.get("batch")
    if own is not None and not isinstance(own, bool):
        raise ConfigError(f"{section}.batch={show(own)}: must be true, false or null (the top-level batch)")
    local = raw.get("local")
    if own and local:
        raise ConfigError(f"{section}.batch=true: {section} {raw.get('name', '')!s} runs on a local server "
                          f"({local}), which has no batch API; leave {section}.batch unset or false")
    resolved = dict(raw)
    resolved["batch"] = bool(own) if own is not None else (batch and not local)
    if resolved.get("batch_poll_s") is None:
        resolved["batch_poll_s"] = poll_s
    return resolved


def write_time_batch(system_params: dict[str, Any], batch: bool) -> bool:
    """Batch asked for the system's write-time model (``system.llm.batch``, else the top-level value)."""
    llm = system_params.get("llm")
    if not isinstance(llm, dict):
        return False
    own = llm.get("batch")
    if own is not None and not isinstance(own, bool):
        raise ConfigError(f"system.llm.batch={show(own)}: must be true, false or null (the top-level batch)")
    return bool(own) if own is not None else batch


def write_time_note(system_name: str, asked: bool) -> str | None:
    """The stderr line when batch was asked for write-time calls, which go live."""
    if not asked:
        return None
    return (f"batch: the write-time calls of {system_name} (system.llm) are made one by one "
            "while ingesting: sent live")
