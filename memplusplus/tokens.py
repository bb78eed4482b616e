"""Counting and cutting text in OpenAI's cl100k_base tokens, offline (the ``bpe-openai`` package,
the tokenizer the RAG baselines count chunk sizes in), and the one loader of its encodings, each
built once per process (the package builds a new one on every call)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any


@lru_cache(maxsize=None)
def encoding(name: str) -> Any:
    """The ``bpe-openai`` encoding ``name`` (``cl100k_base``, ``o200k_base``), loaded once."""
    import bpe_openai

    return bpe_openai.get_encoding(name)


def _cl100k() -> Any:
    return encoding("cl100k_base")


def cl100k_count(text: str) -> int:
    """How many cl100k_base tokens ``text`` is."""
    return len(_cl100k().encode_ordinary(text))


def cut_cl100k(text: str, limit: int) -> str:
    """``text`` itself when it is at most ``limit`` cl100k_base tokens, else its longest prefix
    ending at a token boundary that is (trailing white space dropped)."""
    encoding = _cl100k()
    tokens = encoding.encode_ordinary(text)
    if len(tokens) <= limit:
        return text
    _, starts = encoding.decode_with_offsets(tokens)
    keep = limit
    while keep > 0:  # a prefix re-tokenised can differ at its end: step back until it fits
        cut = text[: starts[keep]].rstrip()
        if cl100k_count(cut) <= limit:
            return cut
        keep -= 1
    return ""


__all__ = ["cl100k_count", "cut_cl100k", "encoding"]
