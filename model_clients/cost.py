"""Price table, dry-run cost estimates and actual-spend reports for LLM calls.

Prices are USD per 1M uncached input/output tokens, in the standard (live) tier and the provider's
batch tier. A model not in the table has an unknown price, reported as "n/a", never guessed; the
table prices only the provider's own endpoint: elsewhere (a local server, a proxy) a call costs 0
unless the config gives its prices. Prompt tokens are counted offline (:mod:`~model_clients.token_count`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal, Mapping, Sequence
from urllib.parse import urlparse

from model_clients.llm_client import ChatRequest, LLMClient, LLMConfig, LLMCounters
from model_clients.token_count import TokenCounter

Tier = Literal["live", "batch"]
CHARS_PER_TOKEN = 4  # the one rough chars-per-token estimate (embeddings, read tokens) where no tokenizer counts
PROVIDER_HOSTS = frozenset({"api.openai.com", "api.anthropic.com"})  # whose list prices the table holds


@dataclass(frozen=True)
class ModelPrice:
    """USD per 1M tokens (None = unknown) of ``tier``, with where (``source``) and when (``checked``)
    it was read; a standard row also carries its batch prices (``batch_*``, :meth:`batch_tier`)."""

    input_per_mtok: float | None
    output_per_mtok: float | None
    source: str
    checked: str
    batch_input_per_mtok: float | None = None
    batch_output_per_mtok: float | None = None
    batch_source: str = ""
    tier: Tier = "live"

    @property
    def known(self) -> bool:
        return self.input_per_mtok is not None and self.output_per_mtok is not None

    def batch_tier(self) -> "ModelPrice":
        return ModelPrice(self.batch_input_per_mtok, self.batch_output_per_mtok, self.batch_source, self.checked,
                          tier="batch")

    def describe(self) -> str:
        if not self.known:
            return "unknown"
        tier = "batch tier" if self.tier == "batch" else "live (standard) tier"
        return f"${self.input_per_mtok:g}/{self.output_per_mtok:g} per 1M in/out, {tier} ({self.source})"


# Standard tier, read 2026-11-29 from stored secondary pages quoting the official tables (the
# providers' own pages were not in that store in a version listing these models), cross-checked:
#  * OpenAI: https://deploybase.ai/articles/openai-pricing (March 2026), agreeing with
#    https://aumiqx.com/ai-tools/openai-api-pricing-gpt4-costs-guide-2026 (April 2026); GPT-4.1 (mini)
#    also with https://tokenmath.io/openai-api-pricing-explained (Jun 2026). Pages quoting half are the batch tier.
#  * claude-sonnet-4-6: https://apidog.com/blog/claude-sonnet-4-6-pricing (2026-02-18), agreeing with
#    https://deploybase.ai/articles/claude-api-pricing (March 2026); the >200K-input premium is not modelled.
# Batch tier, read 2026-12-01: half the standard input and output price. OpenAI's Batch API FAQ
# (https://help.openai.com/en/articles/9197833-batch-api-faq: 50% off; an expired batch's completed
# requests are charged); Anthropic's https://platform.claude.com/docs/en/build-with-claude/batch-processing
# (50% less; https://dev.to/neverpaytwice/claude-batch-api-half-price-if-you-can-wait-ecg quotes Sonnet 4.6
# at $1.50/$7.50 against $3/$15). Re-verify at https://platform.openai.com/docs/pricing and
# https://platform.claude.com/docs/en/about-claude/pricing before quoting dollars in the paper.
_OPENAI_SRC = "deploybase.ai/articles/openai-pricing (quoting OpenAI, 2026-03); cross-checked aumiqx.com 2026-04"
_ANTHROPIC_SRC = "apidog.com/blog/claude-sonnet-4-6-pricing (2026-02-18); cross-checked deploybase.ai 2026-03"
_OPENAI_BATCH_SRC = "OpenAI Batch API: 50% of standard (help.openai.com/en/articles/9197833, read 2026-12-01)"
_ANTHROPIC_BATCH_SRC = ("Anthropic Message Batches: 50% of standard "
                        "(platform.claude.com/docs/en/build-with-claude/batch-processing, read 2026-12-01)")
PRICES: Mapping[str, ModelPrice] = MappingProxyType(
    {
        "gpt-4.1-mini": ModelPrice(0.40, 1.60, _OPENAI_SRC, "2026-11-29", 0.20, 0.80, _OPENAI_BATCH_SRC),
        "gpt-4o-mini": ModelPrice(0.15, 0.60, _OPENAI_SRC, "2026-11-29", 0.075, 0.30, _OPENAI_BATCH_SRC),
        "gpt-4.1": ModelPrice(2.00, 8.00, _OPENAI_SRC, "2026-11-29", 1.00, 4.00, _OPENAI_BATCH_SRC),
        "gpt-4o": ModelPrice(2.50, 10.00, _OPENAI_SRC, "2026-11-29", 1.25, 5.00, _OPENAI_BATCH_SRC),
        "claude-sonnet-4-6": ModelPrice(3.00, 15.00, _ANTHROPIC_SRC, "2026-11-29", 1.50, 7.50, _ANTHROPIC_BATCH_SRC),
    }
)


def price_for(model: str, prices: Mapping[str, ModelPrice] = PRICES) -> ModelPrice | None:
    """The price of ``model``, also for a dated snapshot name (``gpt-4o-mini-2024-07-18``); else None."""
    if model in prices:
        return prices[model]
    parts = model.rsplit("-", 3)
    if len(parts) == 4 and all(part.isdigit() for part in parts[1:]):  # strip -YYYY-MM-DD
        return prices.get(parts[0])
    return None


def price_of_calls(config: LLMConfig, prices: Mapping[str, ModelPrice] = PRICES) -> ModelPrice | None:
    """What a call through ``config`` costs: the config's own prices if given, 0 on an endpoint that
    is not a provider's, else the table's price of the model (None when unknown), at the batch tier
    when ``config.batch`` is set and the standard one otherwise."""
    tier: Tier = "batch" if config.batch else "live"
    if config.price_in_per_mtok is not None or config.price_out_per_mtok is not None:
        return ModelPrice(config.price_in_per_mtok, config.price_out_per_mtok, "given in the config", "", tier=tier)
    host = urlparse(config.resolved_base_url).hostname or ""
    if host not in PROVIDER_HOSTS:
        return ModelPrice(0.0, 0.0, f"own endpoint {host}, not priced (set price_in_per_mtok/price_out_per_mtok)", "",
                          tier=tier)
    price = price_for(config.model, prices)
    if price is None:
        return None
    return price.batch_tier() if config.batch else price


def _tier_prices(config: LLMConfig, prices: Mapping[str, ModelPrice]) -> tuple[ModelPrice | None, ModelPrice | None]:
    """(standard, batch) prices of calls through ``config``, whichever it is set to."""
    return (price_of_calls(dataclasses.replace(config, batch=False), prices),
            price_of_calls(dataclasses.replace(config, batch=True), prices))


def _dollars(tokens: int | None, per_mtok: float | None) -> float | None:
    return None if tokens is None or per_mtok is None else tokens * per_mtok / 1_000_000


def _in_out(price: ModelPrice | None, prompt_tokens: int | None, completion_tokens: int | None
            ) -> tuple[float | None, float | None]:
    """Dollars of the input and of the output tokens at ``price`` (None where either is unknown)."""
    return (_dollars(prompt_tokens, price.input_per_mtok if price else None),
            _dollars(completion_tokens, price.output_per_mtok if price else None))


def _sum(*parts: float | None) -> float | None:
    return None if None in parts else sum(parts)  # type: ignore[arg-type]


def _fmt_usd(value: float | None) -> str:
    return "n/a" if value is None else f"${value:,.4f}"


def _who(role: str, model: str) -> str:
    """``answerer model gpt-4o``: the role first, so an answerer and a judge of one model are told apart."""
    return f"{role} model {model}" if role else f"model {model}"


@dataclass(frozen=True)
class _Priced:
    """Dollars for input and output tokens (None where a price or a count is unknown)."""

    price: ModelPrice | None
    input_usd: float | None
    output_usd: float | None

    @property
    def usd(self) -> float | None:
        return _sum(self.input_usd, self.output_usd)


@dataclass(frozen=True)
class CostEstimate(_Priced):
    """A dry run: ``calls`` a real run would send (distinct keys not cached; hits and duplicates are
    free), completion tokens as assumed (``completion_basis``), priced at the tier the run would pay;
    ``live_usd``: the same calls at the live tier, shown beside a batch figure."""

    model: str
    requests: int
    calls: int
    cache_hits: int
    duplicates: int
    prompt_tokens: int
    completion_tokens: int | None
    completion_basis: str
    tokens_approximate: bool
    token_method: str
    live_usd: float | None = None
    prompt_basis: str = ""
    role: str = ""  # "answerer", "judge": said before the model, as both may be the same model

    @property
    def batch(self) -> bool:
        return self.price is not None and self.price.tier == "batch"

    def format(self) -> str:
        approx = " (approximate)" if self.tokens_approximate else ""
        completion = "unknown" if self.completion_tokens is None else f"{self.completion_tokens:,}"
        basis = f"; {self.prompt_basis}" if self.prompt_basis else ""
        cost = f"  cost {_fmt_usd(self.usd)} (input {_fmt_usd(self.input_usd)}, output {_fmt_usd(self.output_usd)})"
        if self.batch:
            cost = cost.replace("cost", "cost by batch", 1) + f"; the same calls live: {_fmt_usd(self.live_usd)}"
        return "\n".join([
            f"{_who(self.role, self.model)}: {self.requests} requests -> {self.calls} calls to send, "
            f"{self.cache_hits} cache hits (free), {self.duplicates} in-batch duplicates (free)",
            f"  prompt tokens {self.prompt_tokens:,}{approx} [{self.token_method}{basis}]",
            f"  completion tokens {completion} [{self.completion_basis}]",
            f"  price {self.price.describe() if self.price is not None else 'unknown'}",
            cost,
        ])


def estimate(requests: Sequence[ChatRequest], client: LLMClient, *, expected_completion_tokens: int | None = None,
             token_counter: TokenCounter | None = None, prices: Mapping[str, ModelPrice] = PRICES,
             prompt_tokens_per_call: int = 0, prompt_basis: str = "", role: str = "") -> CostEstimate:
    """Estimate a run of ``requests`` through ``client`` without sending anything: the client's own
    cache lookup and deduplication, so ``calls`` is what a real run sends if none fails. Completion
    tokens: ``expected_completion_tokens`` per call, else each request's ``max_tokens`` (an upper
    bound); ``prompt_tokens_per_call`` is an allowance added to each counted prompt."""
    requests = list(requests)
    counter = token_counter if token_counter is not None else TokenCounter(client.config.model)
    plan = client.plan(requests)
    to_send = [requests[i] for i in plan.to_send]
    prompt_tokens = sum(counter.count_messages(request.messages) + prompt_tokens_per_call for request in to_send)
    completion_tokens: int | None
    if expected_completion_tokens is not None:
        completion_tokens = expected_completion_tokens * len(to_send)
        basis = f"assumed {expected_completion_tokens} per call"
    else:
        # A request that sends no max_tokens (mem0's judge, as upstream) is bounded by the role's config value.
        sent = [client.resolved_parameters(request)["max_tokens"] for request in to_send]
        limits = [client.config.max_tokens if limit is None else limit for limit in sent]
        if any(limit is None for limit in limits):
            completion_tokens, basis = None, "no max_tokens and no expected length given"
        else:
            completion_tokens = sum(int(limit) for limit in limits)
            basis = "max_tokens per call (upper bound)" + (
                "; the role's max_tokens where the request sends none" if None in sent else "")
    price = price_of_calls(client.config, prices)
    input_usd, output_usd = _in_out(price, prompt_tokens, completion_tokens)
    return CostEstimate(
        price=price, input_usd=input_usd, output_usd=output_usd, model=client.config.model, requests=len(requests),
        calls=len(to_send), cache_hits=plan.cache_hits, duplicates=plan.duplicates, prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens, completion_basis=basis, tokens_approximate=counter.approximate,
        token_method=counter.method, prompt_basis=prompt_basis, role=role,
        live_usd=_sum(*_in_out(_tier_prices(client.config, prices)[0], prompt_tokens, completion_tokens)),
    )


@dataclass(frozen=True)
class BatchSpend:
    """The calls that came back by batch, priced at the batch tier (``usd`` None when that price is
    unknown and some calls went by batch)."""

    calls: int
    prompt_tokens: int
    completion_tokens: int
    price: ModelPrice | None
    usd: float | None

    def as_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "usd": self.usd, "price": self.price.describe() if self.price is not None else "unknown"}


@dataclass(frozen=True)
class SpendReport(_Priced):
    """What a client spent, from its counters (API-reported, exact): batch calls at the batch tier
    (``batch``), the rest at ``price``; ``input_usd`` / ``output_usd`` are totals over both."""

    model: str
    counters: LLMCounters
    batch: BatchSpend | None = None
    role: str = ""  # "answerer", "judge"

    def format(self) -> str:
        c = self.counters
        by_batch = f" ({self.batch.calls} by batch: {_fmt_usd(self.batch.usd)})" if self.batch and self.batch.calls else ""
        return (f"{_who(self.role, self.model)}: {c.requests_sent} requests sent ({c.retries} retries), {c.completed} "
                f"completed{by_batch}, {c.failures} failed, {c.cache_hits} cache hits; tokens {c.prompt_tokens:,} in / "
                f"{c.completion_tokens:,} out; cost {_fmt_usd(self.usd)}")

    def as_dict(self) -> dict[str, Any]:
        """What ``metrics.json`` keeps: the counters, the dollars, and the batch part."""
        return {"summary": self.format(), "model": self.model, **dataclasses.asdict(self.counters), "usd": self.usd,
                "price": self.price.describe() if self.price is not None else "unknown",
                "batch": self.batch.as_dict() if self.batch is not None else None}


def actual_spend(client: LLMClient, prices: Mapping[str, ModelPrice] = PRICES, role: str = "") -> SpendReport:
    c = client.counters
    live, batch_price = _tier_prices(client.config, prices)
    batch_in, batch_out = c.batch_prompt_tokens, c.batch_completion_tokens
    live_usd = _in_out(live, c.prompt_tokens - batch_in, c.completion_tokens - batch_out)
    # a tier with no tokens costs 0, even at an unknown price
    batch_usd = tuple(0.0 if not tokens else usd for tokens, usd in
                      zip((batch_in, batch_out), _in_out(batch_price, batch_in, batch_out)))
    went_by_batch = bool(c.batch_completed or batch_in or batch_out)
    batch = BatchSpend(c.batch_completed, batch_in, batch_out, batch_price,
                       _sum(*_in_out(batch_price, batch_in, batch_out)) if went_by_batch else 0.0)
    return SpendReport(price=live, input_usd=_sum(live_usd[0], batch_usd[0]), output_usd=_sum(live_usd[1], batch_usd[1]),
                       model=client.config.model, counters=c, batch=batch, role=role)
