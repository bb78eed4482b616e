"""Price table, token counting, dry-run cost estimates and actual-spend reports for LLM calls.

Prices are USD per 1M tokens, standard (synchronous, non-batch, uncached-input) tier. A model not in
the table has an unknown price and its dollar figures are reported as "n/a", never guessed. The
table prices only calls to the provider's own endpoint: a model served elsewhere (a local server, a
proxy) costs 0 unless the config gives its prices (``price_in_per_mtok`` / ``price_out_per_mtok``).

Token counting uses ``tiktoken`` when it is importable *and* its BPE file can be loaded (tiktoken
downloads it on first use, which fails offline unless ``TIKTOKEN_CACHE_DIR`` holds it); otherwise
it falls back to an approximation of one token per 4 characters, and every estimate says so.
Counts for non-OpenAI models (e.g. Claude) are always flagged approximate: their tokenizers differ.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping, Sequence
from urllib.parse import urlparse

from model_clients.llm_client import ChatRequest, LLMClient, LLMConfig, LLMCounters

__all__ = [
    "PRICES",
    "CostEstimate",
    "ModelPrice",
    "SpendReport",
    "TokenCounter",
    "actual_spend",
    "estimate",
    "price_for",
    "price_of_calls",
]


@dataclass(frozen=True)
class ModelPrice:
    """USD per 1M tokens; None = unknown. ``source``/``checked`` say where and when it was read."""

    input_per_mtok: float | None
    output_per_mtok: float | None
    source: str
    checked: str

    @property
    def known(self) -> bool:
        return self.input_per_mtok is not None and self.output_per_mtok is not None


# Standard-tier list prices, read on 2026-11-29 from stored copies of public pricing pages (OpenAI's
# and Anthropic's own pricing pages were not available in that store in a version listing these
# models, so each row rests on secondary pages that quote the official tables, cross-checked):
#  * OpenAI rows: https://deploybase.ai/articles/openai-pricing ("Data from OpenAI pricing page,
#    March 2026"), agreeing with https://aumiqx.com/ai-tools/openai-api-pricing-gpt4-costs-guide-2026
#    (April 2026); GPT-4.1 and GPT-4.1 mini also with https://tokenmath.io/openai-api-pricing-explained
#    ("OpenAI model pricing, checked Jun 21, 2026"). Some pages quote half these prices: that is the
#    Batch API tier, not used here.
#  * claude-sonnet-4-6: https://apidog.com/blog/claude-sonnet-4-6-pricing (2026-02-18), agreeing with
#    https://deploybase.ai/articles/claude-api-pricing (March 2026). The long-context (>200K input)
#    premium some pages mention is not modelled.
# Re-verify against https://platform.openai.com/docs/pricing and
# https://platform.claude.com/docs/en/about-claude/pricing before quoting dollars in the paper.
_OPENAI_SRC = "deploybase.ai/articles/openai-pricing (quoting OpenAI, 2026-03); cross-checked aumiqx.com 2026-04"
_ANTHROPIC_SRC = "apidog.com/blog/claude-sonnet-4-6-pricing (2026-02-18); cross-checked deploybase.ai 2026-03"
PRICES: Mapping[str, ModelPrice] = MappingProxyType(
    {
        "gpt-4.1-mini": ModelPrice(0.40, 1.60, _OPENAI_SRC, "2026-11-29"),
        "gpt-4o-mini": ModelPrice(0.15, 0.60, _OPENAI_SRC, "2026-11-29"),
        "gpt-4.1": ModelPrice(2.00, 8.00, _OPENAI_SRC, "2026-11-29"),
        "gpt-4o": ModelPrice(2.50, 10.00, _OPENAI_SRC, "2026-11-29"),
        "claude-sonnet-4-6": ModelPrice(3.00, 15.00, _ANTHROPIC_SRC, "2026-11-29"),
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


# The hosts whose list prices the table holds; anything else is someone's own server.
PROVIDER_HOSTS = frozenset({"api.openai.com", "api.anthropic.com"})


def price_of_calls(config: LLMConfig, prices: Mapping[str, ModelPrice] = PRICES) -> ModelPrice | None:
    """What a call through ``config`` costs: the config's own prices if given, 0 on an endpoint that
    is not a provider's, else the table's price of the model (None when unknown)."""
    if config.price_in_per_mtok is not None or config.price_out_per_mtok is not None:
        return ModelPrice(config.price_in_per_mtok, config.price_out_per_mtok, "given in the config", "")
    host = urlparse(config.resolved_base_url).hostname or ""
    if host not in PROVIDER_HOSTS:
        return ModelPrice(0.0, 0.0, f"own endpoint {host}, not priced (set price_in_per_mtok/price_out_per_mtok)", "")
    return price_for(config.model, prices)


def _dollars(tokens: int | None, per_mtok: float | None) -> float | None:
    if tokens is None or per_mtok is None:
        return None
    return tokens * per_mtok / 1_000_000


def _fmt_usd(value: float | None) -> str:
    return "n/a" if value is None else f"${value:,.4f}"


# ---------------------------------------------------------------------------- token counting
_TOKENS_PER_MESSAGE = 3  # OpenAI's documented chat overhead: per message, plus 3 to prime the reply
_TOKENS_REPLY_PRIMING = 3
CHARS_PER_TOKEN = 4  # the one rough chars-per-token estimate (prompts, embeddings, read tokens) where no tokenizer counts


class TokenCounter:
    """Counts prompt tokens for one model: tiktoken if it can load its encoding, else chars/4."""

    def __init__(self, model: str, *, use_tiktoken: bool = True) -> None:
        self.model = model
        self._encoding: Any = None
        self.unavailable_reason: str | None = None
        if use_tiktoken:
            self._encoding, self.unavailable_reason = _load_tiktoken(model)
        else:
            self.unavailable_reason = "tiktoken disabled"
        is_openai = model.startswith(("gpt-", "o1", "o3", "o4", "chatgpt-"))
        self.approximate: bool = self._encoding is None or not is_openai
        if self._encoding is not None:
            self.method = f"tiktoken:{self._encoding.name}" + ("" if is_openai else " (other vendor's tokenizer)")
        else:
            self.method = f"approx chars/{CHARS_PER_TOKEN} ({self.unavailable_reason})"

    def count_text(self, text: str) -> int:
        if self._encoding is not None:
            return len(self._encoding.encode(text, disallowed_special=()))
        return math.ceil(len(text) / CHARS_PER_TOKEN)

    def count_messages(self, messages: Sequence[Mapping[str, str]]) -> int:
        total = _TOKENS_REPLY_PRIMING
        for message in messages:
            total += _TOKENS_PER_MESSAGE + self.count_text(message["role"]) + self.count_text(message["content"])
        return total


def _load_tiktoken(model: str) -> tuple[Any, str | None]:
    try:
        import tiktoken  # type: ignore[import-not-found]
    except ImportError:
        return None, "tiktoken not installed"
    try:
        try:
            return tiktoken.encoding_for_model(model), None
        except KeyError:
            return tiktoken.get_encoding("o200k_base"), None  # the encoding of gpt-4o / gpt-4.1
    except Exception as exc:  # offline: the BPE file cannot be downloaded
        return None, f"tiktoken cannot load its encoding: {type(exc).__name__}"


# ---------------------------------------------------------------------------- estimates
@dataclass(frozen=True)
class _Priced:
    """Dollars for input and output tokens (None where a price or a count is unknown)."""

    price: ModelPrice | None
    input_usd: float | None
    output_usd: float | None

    @property
    def usd(self) -> float | None:
        if self.input_usd is None or self.output_usd is None:
            return None
        return self.input_usd + self.output_usd


@dataclass(frozen=True)
class CostEstimate(_Priced):
    """A dry run: what a real run of these requests would send and cost.

    ``calls`` is the number of requests a run would send (distinct keys not in the cache); cache hits
    and in-batch duplicates are free. Completion tokens are an assumption (``completion_basis``);
    dollars are None when the price or the completion length is unknown.
    """

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

    def format(self) -> str:
        approx = " (approximate)" if self.tokens_approximate else ""
        completion = "unknown" if self.completion_tokens is None else f"{self.completion_tokens:,}"
        price = (
            f"${self.price.input_per_mtok}/{self.price.output_per_mtok} per 1M in/out ({self.price.source})"
            if self.price is not None and self.price.known
            else "unknown"
        )
        return "\n".join(
            [
                f"model {self.model}: {self.requests} requests -> {self.calls} calls to send, "
                f"{self.cache_hits} cache hits (free), {self.duplicates} in-batch duplicates (free)",
                f"  prompt tokens {self.prompt_tokens:,}{approx} [{self.token_method}]",
                f"  completion tokens {completion} [{self.completion_basis}]",
                f"  price {price}",
                f"  cost {_fmt_usd(self.usd)} (input {_fmt_usd(self.input_usd)}, output {_fmt_usd(self.output_usd)})",
            ]
        )


def estimate(
    requests: Sequence[ChatRequest],
    client: LLMClient,
    *,
    expected_completion_tokens: int | None = None,
    token_counter: TokenCounter | None = None,
    prices: Mapping[str, ModelPrice] = PRICES,
) -> CostEstimate:
    """Estimate a run of ``requests`` through ``client`` without sending anything.

    Uses the same cache lookup and deduplication as ``client.complete_many``, so ``calls`` is exactly
    the number of requests a real run would send if none failed. Completion tokens per call are
    ``expected_completion_tokens`` if given, else the request's ``max_tokens`` (an upper bound).
    """
    requests = list(requests)
    model = client.config.model
    counter = token_counter if token_counter is not None else TokenCounter(model)
    plan = client.plan(requests)
    to_send = [requests[i] for i in plan.to_send]

    prompt_tokens = sum(counter.count_messages(request.messages) for request in to_send)
    completion_tokens: int | None
    if expected_completion_tokens is not None:
        completion_tokens = expected_completion_tokens * len(to_send)
        basis = f"assumed {expected_completion_tokens} per call"
    else:
        limits = [client.resolved_parameters(request)["max_tokens"] for request in to_send]
        if any(limit is None for limit in limits):
            completion_tokens, basis = None, "no max_tokens and no expected length given"
        else:
            completion_tokens = sum(int(limit) for limit in limits)
            basis = "max_tokens per call (upper bound)"

    price = price_of_calls(client.config, prices)
    return CostEstimate(
        model=model,
        requests=len(requests),
        calls=len(to_send),
        cache_hits=plan.cache_hits,
        duplicates=plan.duplicates,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        completion_basis=basis,
        tokens_approximate=counter.approximate,
        token_method=counter.method,
        price=price,
        input_usd=_dollars(prompt_tokens, price.input_per_mtok if price else None),
        output_usd=_dollars(completion_tokens, price.output_per_mtok if price else None),
    )


# ---------------------------------------------------------------------------- actual spend
@dataclass(frozen=True)
class SpendReport(_Priced):
    """What a client actually spent, from its counters (API-reported token usage, exact)."""

    model: str
    counters: LLMCounters

    def format(self) -> str:
        c = self.counters
        return (
            f"model {self.model}: {c.requests_sent} requests sent ({c.retries} retries), {c.completed} completed, "
            f"{c.failures} failed, {c.cache_hits} cache hits; tokens {c.prompt_tokens:,} in / "
            f"{c.completion_tokens:,} out; cost {_fmt_usd(self.usd)}"
        )


def actual_spend(client: LLMClient, prices: Mapping[str, ModelPrice] = PRICES) -> SpendReport:
    counters = client.counters
    price = price_of_calls(client.config, prices)
    return SpendReport(
        model=client.config.model,
        counters=counters,
        price=price,
        input_usd=_dollars(counters.prompt_tokens, price.input_per_mtok if price else None),
        output_usd=_dollars(counters.completion_tokens, price.output_per_mtok if price else None),
    )
