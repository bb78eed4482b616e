"""The cached form of one chat completion: what is stored under its key, and the result read back.

An entry holds the answer and enough of the request to audit it (model, template hash, run index),
never a credential. ``CACHE_SCHEMA`` enters every cache key (:meth:`LLMClient.canonical_request`).
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from model_clients.chat_types import ChatResult

__all__ = ["CACHE_SCHEMA", "decode_entry", "encode_entry", "result_from_cache"]

CACHE_SCHEMA = 1  # bump to invalidate every cached completion if the canonical request form changes


def encode_entry(model: str, template_hash: str, run_index: int, result: ChatResult) -> dict[str, Any]:
    """The cache entry of ``result`` (no credential)."""
    return {
        "schema": CACHE_SCHEMA,
        "model": model,
        "template_hash": template_hash,
        "run_index": run_index,
        "text": result.text,
        "prompt_tokens": result.prompt_tokens,
        "completion_tokens": result.completion_tokens,
        "finish_reason": result.finish_reason,
        **({"tool_calls": list(result.tool_calls)} if result.tool_calls else {}),
    }


def decode_entry(raw: bytes) -> dict[str, Any]:
    value = json.loads(raw)
    if not isinstance(value, dict) or "text" not in value:
        raise ValueError("corrupt LLM cache entry")
    return value


def result_from_cache(key: str, value: Mapping[str, Any]) -> ChatResult:
    return ChatResult(
        text=str(value["text"]),
        prompt_tokens=int(value.get("prompt_tokens", 0)),
        completion_tokens=int(value.get("completion_tokens", 0)),
        cached=True,
        key=key,
        finish_reason=value.get("finish_reason"),
        tool_calls=tuple(value.get("tool_calls") or ()),
    )
