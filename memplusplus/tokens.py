"""cl100k_base tokens offline (``bpe-openai``, as the RAG baselines count chunks), each encoding
built once per process (the package builds a new one on every call)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any


@lru_cache(maxsize=None)
def encoding(name: str) -> Any:
    import bpe_openai

    return bpe_openai.get_encoding(name)


def cl100k_count(text: str) -> int:
    return len(encoding("cl100k_base").encode_ordinary(text))


def cut_cl100k(text: str, limit: int) -> str:
    """``text``, or its longest prefix of at most ``limit`` tokens ending at a token boundary (stripped)."""
    cl100k = encoding("cl100k_base")
    tokens = cl100k.encode_ordinary(text)
    if len(tokens) <= limit:
        return text
    _, starts = cl100k.decode_with_offsets(tokens)
    keep = limit
    while keep > 0:  # a prefix re-tokenised can differ at its end: step back until it fits
        cut = text[: starts[keep]].rstrip()
        if cl100k_count(cut) <= limit:
            return cut
        keep -= 1
    return ""


__all__ = ["cl100k_count", "cut_cl100k", "encoding"]
