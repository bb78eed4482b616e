"""Prompt tokens are counted offline with the model's own tokenizer, pinned to published counts.

Known answers: tiktoken's own tests (openai/tiktoken, tests/test_encoding.py: cl100k_base
"hello world" -> [15339, 1917], "today\\n \\n" -> [31213, 27907], the thumbs-up emoji -> 3 tokens);
a known-answer test of the bpe-rs tokenizer whose ids were produced by tiktoken 0.14 (o200k_base
"hello world" -> [24912, 2375], a mixed string -> 15 ids against cl100k_base's 17, a CJK + emoji
string -> 7 against 12). Chat overhead: OpenAI's cookbook "How to count tokens with tiktoken"
(openai/openai-cookbook, examples/How_to_count_tokens_with_tiktoken.ipynb, section 6) prints, for its
six example messages, the prompt tokens the OpenAI API itself reported: 129 for gpt-4 and
gpt-3.5-turbo, 124 for gpt-4o and gpt-4o-mini.
"""

from __future__ import annotations

import pytest

from model_clients.cost import TokenCounter
from model_clients.token_count import encoding_name_for

MIXED = "I'm can't HELLO'S camelCaseWord  123456 \n\n  x"
CJK_EMOJI = "你好，世界 🌍🚀"

# The cookbook's example conversation (section 6), whose prompt tokens the API reported.
COOKBOOK_MESSAGES = [
    {"role": "system",
     "content": "You are a helpful, pattern-following assistant that translates corporate jargon into plain English."},
    {"role": "system", "name": "example_user", "content": "New synergies will help drive top-line growth."},
    {"role": "system", "name": "example_assistant", "content": "Things working well together will increase revenue."},
    {"role": "system", "name": "example_user",
     "content": "Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage."},
    {"role": "system", "name": "example_assistant",
     "content": "Let's talk later when we're less busy about how to do better."},
    {"role": "user",
     "content": "This late pivot means we don't have time to boil the ocean for the client deliverable."},
]


@pytest.mark.parametrize(
    ("model", "text", "tokens"),
    [
        ("gpt-4", "hello world", 2),
        ("gpt-4", "today\n \n", 2),
        ("gpt-4", "👍", 3),
        ("gpt-4", MIXED, 17),
        ("gpt-4", CJK_EMOJI, 12),
        ("gpt-4.1-mini", "hello world", 2),
        ("gpt-4.1-mini", MIXED, 15),
        ("gpt-4.1-mini", CJK_EMOJI, 7),
    ],
)
def test_text_counts_equal_the_published_counts_of_the_models_encoding(model: str, text: str, tokens: int) -> None:
    counter = TokenCounter(model)
    assert counter.count_text(text) == tokens
    assert not counter.approximate


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("gpt-4.1-mini", "o200k_base"), ("gpt-4.1", "o200k_base"), ("gpt-4o", "o200k_base"),
        ("gpt-4o-mini", "o200k_base"), ("gpt-4o-mini-2024-07-18", "o200k_base"), ("o3", "o200k_base"),
        ("o4-mini", "o200k_base"), ("o1-preview", "o200k_base"), ("gpt-5-nano", "o200k_base"),
        ("gpt-4", "cl100k_base"), ("gpt-4-0613", "cl100k_base"), ("gpt-3.5-turbo", "cl100k_base"),
        ("gpt-3.5-turbo-0125", "cl100k_base"), ("text-embedding-3-small", "cl100k_base"),
        ("claude-sonnet-4-6", None), ("smollm2-135m-instruct", None), ("o3x", None),
    ],
)
def test_each_model_gets_its_own_encoding(model: str, encoding: str | None) -> None:
    assert encoding_name_for(model) == encoding
    counter = TokenCounter(model)
    assert counter.method.startswith(encoding or "approximate")
    assert "tiktoken" not in counter.method and "chars/" not in counter.method


def test_other_vendors_are_counted_in_a_labelled_stand_in() -> None:
    claude = TokenCounter("claude-sonnet-4-6")
    assert claude.approximate and claude.encoding_name == "o200k_base"
    assert claude.method == ("approximate: o200k_base standing in for claude-sonnet-4-6's own tokenizer, "
                             "which is not available offline")
    assert claude.count_text("hello world") == 2


@pytest.mark.parametrize(("model", "api_reported"),
                         [("gpt-4", 129), ("gpt-4-0613", 129), ("gpt-3.5-turbo", 129), ("gpt-4o", 124),
                          ("gpt-4o-mini", 124)])
def test_chat_overhead_gives_the_prompt_tokens_the_api_reported(model: str, api_reported: int) -> None:
    assert TokenCounter(model).count_messages(COOKBOOK_MESSAGES) == api_reported


def test_chat_overhead_per_message_and_reply_priming() -> None:
    counter = TokenCounter("gpt-4.1-mini")
    one = [{"role": "user", "content": "hello world"}]
    # 3 to prime the reply + 3 for the message + "user" (1 token) + "hello world" (2 tokens)
    assert counter.count_messages(one) == 3 + 3 + 1 + 2
    two = one + [{"role": "user", "name": "bob", "content": MIXED}]
    # + 3 for the message, "user" 1, "bob" 1 and 1 for carrying a name, the mixed string 15
    assert counter.count_messages(two) == 9 + 3 + 1 + 1 + 1 + 15
