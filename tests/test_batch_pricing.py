"""The batch tier of the price table: half the standard input and output price (OpenAI's Batch API
FAQ, help.openai.com/en/articles/9197833: a 50% discount against the synchronous APIs; Anthropic's
batch-processing page, platform.claude.com/docs/en/build-with-claude/batch-processing: Message
Batches cost 50% less), used for estimates with ``batch`` set and for the calls that came back by
batch in the actual spend."""

from __future__ import annotations

import dataclasses

import pytest

from model_clients.cost import PRICES, ModelPrice, actual_spend, estimate, price_of_calls
from model_clients.kvstore import KVStore
from model_clients.llm_client import LLMClient, LLMConfig
from tests.llm_client_support import reqs

# (standard in, standard out, batch in, batch out), USD per 1M tokens
EXPECTED = {
    "gpt-4.1-mini": (0.40, 1.60, 0.20, 0.80),
    "gpt-4o-mini": (0.15, 0.60, 0.075, 0.30),
    "gpt-4.1": (2.00, 8.00, 1.00, 4.00),
    "gpt-4o": (2.50, 10.00, 1.25, 5.00),
    "claude-sonnet-4-6": (3.00, 15.00, 1.50, 7.50),
}


def test_every_row_has_a_batch_tier_at_half_its_standard_price_with_the_providers_source() -> None:
    assert set(PRICES) == set(EXPECTED)
    for model, (live_in, live_out, batch_in, batch_out) in EXPECTED.items():
        price = PRICES[model]
        assert (price.input_per_mtok, price.output_per_mtok, price.tier) == (live_in, live_out, "live")
        batch = price.batch_tier()
        assert (batch.input_per_mtok, batch.output_per_mtok, batch.tier) == (batch_in, batch_out, "batch")
        assert batch.input_per_mtok == pytest.approx(price.input_per_mtok / 2)
        assert batch.output_per_mtok == pytest.approx(price.output_per_mtok / 2)
        provider = "platform.claude.com" if model.startswith("claude") else "help.openai.com/en/articles/9197833"
        assert provider in batch.source and "50%" in batch.source and "2026-12-01" in batch.source


def test_price_of_calls_is_the_batch_tier_when_the_config_says_batch() -> None:
    live = LLMConfig(model="gpt-4.1-mini")
    assert price_of_calls(live) == PRICES["gpt-4.1-mini"]
    batch = price_of_calls(dataclasses.replace(live, batch=True))
    assert batch is not None and (batch.input_per_mtok, batch.output_per_mtok) == (0.20, 0.80)
    assert "batch tier" in batch.describe() and "help.openai.com" in batch.describe()
    claude = price_of_calls(LLMConfig(model="claude-sonnet-4-6", base_url="https://api.anthropic.com/v1/",
                                      api_key_env="ANTHROPIC_API_KEY", batch=True))
    assert claude is not None and (claude.input_per_mtok, claude.output_per_mtok) == (1.50, 7.50)
    # A local endpoint stays free; prices given in the config are taken as they are.
    local = price_of_calls(LLMConfig(model="gpt-4.1-mini", base_url="http://127.0.0.1:8000/v1", batch=True))
    assert local is not None and (local.input_per_mtok, local.output_per_mtok) == (0.0, 0.0)
    given = price_of_calls(LLMConfig(model="m", base_url="http://127.0.0.1:8000/v1", batch=True,
                                     price_in_per_mtok=1.0, price_out_per_mtok=2.0))
    assert given is not None and (given.input_per_mtok, given.output_per_mtok) == (1.0, 2.0)
    assert price_of_calls(LLMConfig(model="gpt-5-nano", batch=True)) is None


def test_a_batch_estimate_costs_half_the_live_one_and_shows_both(tmp_path) -> None:
    cache = KVStore(tmp_path / "llm.sqlite")
    requests = reqs(5)
    live = estimate(requests, LLMClient(LLMConfig(model="gpt-4o-mini", max_tokens=100), cache))
    batch = estimate(requests, LLMClient(LLMConfig(model="gpt-4o-mini", max_tokens=100, batch=True), cache))
    assert live.prompt_tokens == batch.prompt_tokens and live.completion_tokens == batch.completion_tokens == 500
    expected_live = live.prompt_tokens * 0.15 / 1e6 + 500 * 0.60 / 1e6
    assert live.usd == pytest.approx(expected_live) and not live.batch
    assert batch.batch and batch.usd == pytest.approx(expected_live / 2)
    assert batch.live_usd == pytest.approx(expected_live)
    text = batch.format()
    assert f"cost by batch ${expected_live / 2:,.4f}" in text and f"the same calls live: ${expected_live:,.4f}" in text
    assert "batch tier (OpenAI Batch API: 50% of standard" in text


def test_actual_spend_prices_batch_tokens_at_the_batch_tier_and_the_rest_live(tmp_path) -> None:
    client = LLMClient(LLMConfig(model="gpt-4.1-mini", batch=True), KVStore(tmp_path / "llm.sqlite"))
    # 10 calls completed: 6 came back through a batch (3,000 in / 600 out), 4 live (1,000 in / 400 out)
    client._counting.add(requests_sent=4, completed=10, prompt_tokens=4_000, completion_tokens=1_000,
                         batch_completed=6, batch_prompt_tokens=3_000, batch_completion_tokens=600)
    spend = actual_spend(client)
    live_usd = 1_000 * 0.40 / 1e6 + 400 * 1.60 / 1e6
    batch_usd = 3_000 * 0.20 / 1e6 + 600 * 0.80 / 1e6
    assert spend.usd == pytest.approx(live_usd + batch_usd)
    assert spend.batch is not None and spend.batch.usd == pytest.approx(batch_usd)
    recorded = spend.as_dict()
    batch_price = PRICES["gpt-4.1-mini"].batch_tier().describe()
    assert recorded["batch"] == {"calls": 6, "prompt_tokens": 3_000, "completion_tokens": 600,
                                 "usd": pytest.approx(batch_usd), "price": batch_price}
    assert recorded["usd"] == pytest.approx(live_usd + batch_usd) and recorded["completed"] == 10
    assert "6 by batch" in recorded["summary"]


def test_a_spend_without_batch_calls_is_priced_as_before(tmp_path) -> None:
    client = LLMClient(LLMConfig(model="gpt-4o-mini"), KVStore(tmp_path / "llm.sqlite"))
    client._counting.add(completed=2, prompt_tokens=2_000, completion_tokens=100)
    spend = actual_spend(client)
    assert spend.usd == pytest.approx(2_000 * 0.15 / 1e6 + 100 * 0.60 / 1e6)
    assert spend.as_dict()["batch"] == {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "usd": 0.0,
                                        "price": PRICES["gpt-4o-mini"].batch_tier().describe()}


def test_an_unknown_batch_price_makes_the_spend_unknown_only_when_calls_went_by_batch(tmp_path) -> None:
    half_known = {"m": ModelPrice(1.0, 2.0, "s", "d")}  # no batch prices
    client = LLMClient(LLMConfig(model="m", batch=True), KVStore(tmp_path / "llm.sqlite"))
    client._counting.add(completed=1, prompt_tokens=1_000, completion_tokens=10)
    assert actual_spend(client, half_known).usd == pytest.approx(1_000 * 1.0 / 1e6 + 10 * 2.0 / 1e6)
    client._counting.add(completed=1, prompt_tokens=5, completion_tokens=5, batch_completed=1,
                         batch_prompt_tokens=5, batch_completion_tokens=5)
    assert actual_spend(client, half_known).usd is None
