"""Prompt tokens counted offline with the model's own tokenizer (``bpe-openai`` ships o200k_base and
cl100k_base; nothing is downloaded). Which encoding a model uses follows tiktoken's table
(``tiktoken/model.py``: exact names, then prefixes); any other model (Claude, a local one) is counted
in o200k_base as a stand-in, flagged approximate. A chat request costs more than its texts: OpenAI's
cookbook ("How to count tokens with tiktoken", section 6, checked against the API's ``prompt_tokens``)
adds 3 tokens per message, 1 per ``name`` field and 3 that prime the reply.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from memplusplus.tokens import encoding

TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
TOKENS_REPLY_PRIMING = 3

# Prefix -> encoding, longest prefixes first where one contains another (gpt-4o before gpt-4).
_PREFIXES: tuple[tuple[str, str], ...] = (
    ("gpt-4o", "o200k_base"), ("chatgpt-4o", "o200k_base"), ("gpt-4.1", "o200k_base"),
    ("gpt-4.5", "o200k_base"), ("gpt-5", "o200k_base"), ("o1", "o200k_base"), ("o3", "o200k_base"),
    ("o4", "o200k_base"),
    ("gpt-4", "cl100k_base"), ("gpt-3.5", "cl100k_base"), ("gpt-35", "cl100k_base"),
    ("text-embedding-3", "cl100k_base"), ("text-embedding-ada-002", "cl100k_base"),
)
STAND_IN_ENCODING = "o200k_base"  # counts the text of a model whose own tokenizer is not offline here


def encoding_name_for(model: str) -> str | None:
    """The encoding OpenAI's ``model`` tokenizes with (also for a dated snapshot such as
    ``gpt-4o-mini-2024-07-18``), None for a model that is not OpenAI's."""
    import bpe_openai

    try:
        return str(bpe_openai.encoding_name_for_model(model))
    except KeyError:
        pass
    for prefix, name in _PREFIXES:
        if model == prefix or model.startswith(prefix + "-"):
            return name
    return None


class TokenCounter:
    """Counts the prompt tokens of one model's requests; ``approximate`` unless its own encoding counts
    them; ``method`` names the encoding (and, if approximate, why)."""

    def __init__(self, model: str) -> None:
        self.model = model
        own = encoding_name_for(model)
        self.encoding_name = own or STAND_IN_ENCODING
        self.approximate = own is None
        if own is not None:
            self.method = f"{own}, {model}'s own tokenizer (offline)"
        else:
            self.method = (f"approximate: {STAND_IN_ENCODING} standing in for {model}'s own tokenizer, "
                           f"which is not available offline")
        self._encoder = encoding(self.encoding_name)

    def count_text(self, text: str) -> int:
        """Tokens of ``text`` as plain text (special-token strings in it count as ordinary text)."""
        return len(self._encoder.encode_ordinary(text))

    def count_messages(self, messages: Sequence[Mapping[str, str]]) -> int:
        """Prompt tokens of a chat request: every field's text, plus the cookbook's extra tokens."""
        return TOKENS_REPLY_PRIMING + sum(TOKENS_PER_MESSAGE + sum(self.count_text(value) for value in message.values())
                                          + TOKENS_PER_NAME * ("name" in message) for message in messages)
