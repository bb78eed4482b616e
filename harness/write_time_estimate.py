"""A dry run of the systems that call a model at write time: their calls counted, nothing sent.

These libraries decide their calls as they go, so the counts follow each system's rule of thumb
(its registry entry's ``write_calls``, named in the printout: e.g. Mem^g++ two per write unit and
one per question, Zep about four per document as measured against fixture replies). Prompt tokens are
the documents' own text, counted with the model's tokenizer, plus a fixed allowance of
``INSTRUCTION_TOKENS`` for each call's own instructions; the cache is not consulted (a system's own
request keys are only known once it runs), so cached calls are counted as if they were to be sent.

Before retrieval a dry run prices the answers over a stand-in context (:func:`approximate_context`):
the episode's own documents, cut to the length retrieval would give, so the tokenizer meets text of
the benchmark's own density.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from harness.config import RunConfig
from model_clients.kvstore import KVStore
from model_clients.cost import CostEstimate, estimate
from model_clients.llm_client import ChatRequest, LLMClient
from harness.systems import entry_for
from harness.systems.registry import write_time_endpoint
from memory_protocol import Episode

INSTRUCTION_TOKENS = 300  # allowance for each call's own instructions (an assumption, not measured)
EXPECTED_COMPLETION_TOKENS = 200


@dataclass(frozen=True)
class WriteTimeEstimate:
    """A :class:`CostEstimate` with the rule its call count follows."""

    system: str
    rule: str
    cost: CostEstimate

    @property
    def usd(self) -> float | None:
        return self.cost.usd

    @property
    def batch(self) -> bool:
        return self.cost.batch

    @property
    def live_usd(self) -> float | None:
        return self.cost.live_usd

    def format(self) -> str:
        return f"write-time calls of {self.system} ({self.rule}):\n{self.cost.format()}"


def estimate_write_time(config: RunConfig, episodes: list[Episode], cache: KVStore) -> WriteTimeEstimate:
    """Count and price the write-time calls of ``config.system`` over ``episodes``."""
    write_calls = entry_for(config.system).write_calls
    if write_calls is None:
        raise ValueError(f"{config.system.kind!r} makes no write-time calls")
    client = LLMClient(write_time_endpoint(config.system), cache)
    requests: list[ChatRequest] = []
    rule = ""
    for episode in episodes:
        texts, rule = write_calls(config.system.params, episode)
        for index, text in enumerate(texts):
            content = f"{text}\n[{episode.episode_id}:{index}]"  # distinct per call
            requests.append(ChatRequest(messages=[{"role": "user", "content": content}], template_hash="write-time-estimate"))
    cost = estimate(requests, client, expected_completion_tokens=EXPECTED_COMPLETION_TOKENS,
                    prompt_tokens_per_call=INSTRUCTION_TOKENS,
                    prompt_basis=f"plus {INSTRUCTION_TOKENS} a call assumed for the system's instructions")
    return WriteTimeEstimate(config.system.name, rule, cost)


def approximate_context_chars(config: RunConfig, episode: Episode) -> int:
    """Before retrieval, the size of a context: k documents of the episode's mean length (or k units of its
    entry's ``context_chars``, e.g. RAG chunks), cut to the dataset's budget."""
    spec = config.system
    unit_chars = entry_for(spec).context_chars
    if unit_chars is not None:
        chars = spec.k * unit_chars(spec.params)
    else:
        mean = sum(len(d.text) for d in episode.documents) / max(len(episode.documents), 1)
        chars = math.ceil(spec.k * (mean + 40))  # + a header line per block
    budget = config.dataset.context_budget
    return min(chars, budget) if budget else chars


def approximate_context(config: RunConfig, episode: Episode) -> str:
    """A stand-in for a context before retrieval: the episode's documents, one after another (again
    from the first when they run out), cut to :func:`approximate_context_chars`."""
    chars = approximate_context_chars(config, episode)
    text = "\n\n".join(doc.text for doc in episode.documents if doc.text)
    if not text:
        return ""
    repeats = -(-chars // (len(text) + 2))
    return "\n\n".join([text] * repeats)[:chars]
