"""A dry run's embeddings: texts not yet in the embedding cache, their tokens, price and time.

A remote encoder's tokens are counted offline in its model's encoding (cl100k_base for
text-embedding-3), a local one's as characters / 4. Only text-embedding-3-small on OpenAI's endpoint
is priced: $0.02 per 1M input tokens (tokenprice.fyi quoting developers.openai.com, 2026-07-03;
tokenmix.ai 2026-04-25 agrees). Time is estimated: a local encoder at ``LOCAL_TOKENS_PER_SECOND``
(all-MiniLM-L6-v2 measured on this shared 2-core CPU, 2026-12-01: 292 OrgMemBench documents, 73,522
tokens, at most 256 a text, in 50.1 s = 5.8 texts/s), a remote one at an assumed
``REMOTE_SECONDS_PER_REQUEST`` per request of ``batch_size`` texts (retries, rate limits not counted).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlparse

from memplusplus.encoder import CachedEncoder
from memplusplus.openai_encoder import OpenAIEncoder
from model_clients.cost import CHARS_PER_TOKEN
from model_clients.token_count import TokenCounter

EMBEDDING_PRICES = {"text-embedding-3-small": 0.02}  # USD per 1M input tokens on api.openai.com
LOCAL_TOKENS_PER_SECOND = 1_470  # all-MiniLM-L6-v2 on a 2-core CPU (see above)
LOCAL_WINDOW_TOKENS = 256  # MiniLM reads at most this many tokens of a text
REMOTE_SECONDS_PER_REQUEST = 1.0  # assumed, not measured


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


@dataclass(frozen=True)
class EmbeddingEstimate:
    """Texts a run would embed (not cached), where, and at what price (``usd`` None: unknown)."""

    encoder: str
    remote: bool
    texts: int
    to_embed: int
    tokens: int
    usd: float | None
    price_note: str
    approximate: bool = False  # True when the texts a system embeds are not exactly the documents (RAG windows)
    seconds: float = 0.0  # estimated time to embed ``to_embed`` (see ``time_basis``)
    time_basis: str = ""
    token_method: str = f"approximate: chars/{CHARS_PER_TOKEN}"

    def format(self) -> str:
        where = "at the remote endpoint" if self.remote else "locally, on this machine's CPU"
        approx = " (approximate: the system embeds chunks of these texts)" if self.approximate else ""
        cost = "n/a" if self.usd is None else f"${self.usd:,.4f}"
        lines = [
            f"embeddings {self.encoder}: {self.texts} texts -> {self.to_embed} to embed {where}, "
            f"{self.texts - self.to_embed} cached{approx}",
            f"  tokens {self.tokens:,} [{self.token_method}]; price {self.price_note}; cost {cost}",
        ]
        if self.to_embed:
            lines.append(f"  time to embed ~{_duration(self.seconds)} ({self.time_basis}); this dry run embedded none")
        if self.to_embed and self.remote:
            lines.append("  answers below are priced over contexts of the size retrieval would give (a dry run sends nothing)")
        return "\n".join(lines)


def estimate_embeddings(encoder: CachedEncoder, texts: Sequence[str], approximate: bool = False) -> EmbeddingEstimate:
    """Count ``texts`` missing from ``encoder``'s cache and price them; sends nothing, computes nothing."""
    keys = {encoder.key(text): text for text in texts}
    cached = encoder.cache.get_many(list(keys)) if encoder.cache is not None else {}
    missing = [text for key, text in keys.items() if key not in cached and text.strip()]
    remote = isinstance(encoder, OpenAIEncoder)
    if remote:
        cap = encoder.config.max_input_chars
        counter = TokenCounter(encoder.config.model)
        tokens = sum(counter.count_text(text[:cap]) for text in missing)
        method = counter.method
        host = urlparse(encoder.config.resolved_base_url).hostname or ""
        price = EMBEDDING_PRICES.get(encoder.config.model) if host == "api.openai.com" else 0.0
        note = (
            f"${price}/1M tokens" if price else f"own endpoint {host}, not priced" if host != "api.openai.com"
            else f"unknown for {encoder.config.model}"
        )
        usd = None if price is None else tokens * price / 1_000_000
        requests = math.ceil(len(missing) / encoder.config.batch_size)
        seconds = requests * REMOTE_SECONDS_PER_REQUEST
        basis = (f"{requests} request(s) of up to {encoder.config.batch_size} texts at an assumed "
                 f"{REMOTE_SECONDS_PER_REQUEST:g} s each, not measured")
    else:
        tokens = sum(math.ceil(len(text) / CHARS_PER_TOKEN) for text in missing)
        method = f"approximate: chars/{CHARS_PER_TOKEN}"
        usd, note = 0.0, "0 (local model)"
        window = sum(min(math.ceil(len(text) / CHARS_PER_TOKEN), LOCAL_WINDOW_TOKENS) for text in missing)
        seconds = window / LOCAL_TOKENS_PER_SECOND
        basis = (f"{window:,} tokens read at {LOCAL_TOKENS_PER_SECOND:,} tokens/s, as measured for all-MiniLM-L6-v2 "
                 f"on a 2-core CPU")
    return EmbeddingEstimate(encoder.identity, remote, len(keys), len(missing), tokens, usd, note, approximate,
                             seconds, basis, method)


@dataclass(frozen=True)
class EmbedRule:
    """What a memory system embeds: documents, questions, views of either (a document's sentences,
    a question's clauses), or ``history_views`` of an episode's documents given the encoder (RAG's
    chunks, exactly as sent). ``approximate``: the system embeds pieces of these texts."""

    documents: bool = False
    questions: bool = False
    document_views: Callable[[object], list[str]] | None = None
    question_views: Callable[[str], list[str]] | None = None
    approximate: bool = False
    history_views: Callable[[list, CachedEncoder], list[str]] | None = None


def texts_to_embed(
    rule: EmbedRule, episodes: Sequence, needs_retrieval, encoder: CachedEncoder | None = None
) -> list[str]:
    """The texts a run embeds by ``rule`` for episodes with questions not yet retrieved
    (``needs_retrieval(episode) -> questions``); ``encoder``: the run's (for ``history_views``)."""
    texts: list[str] = []
    for episode in episodes:
        questions = needs_retrieval(episode)
        if not questions:
            continue
        if rule.documents:
            texts += [doc.text for doc in episode.documents]
        if rule.document_views is not None:
            texts += [view for doc in episode.documents for view in rule.document_views(doc)]
        if rule.history_views is not None:
            if encoder is None:
                raise ValueError("this system's embeddings depend on the encoder: pass it to texts_to_embed")
            texts += rule.history_views(list(episode.documents), encoder)
        if rule.questions:
            texts += [q.text for q in questions]
        if rule.question_views is not None:
            texts += [view for q in questions for view in rule.question_views(q.text)]
    return texts
