"""A dry run of the systems that call a model at write time: their calls counted, nothing sent.

These libraries decide their calls as they go, so the counts below follow each system's rule of
thumb, named in the printout: Mem^g++ makes two calls per write unit (entities, then triples; a unit
is one document or ``chunk_turns`` speaker turns) and one per question (paper §3.5); the fact
index one per document; consolidation at most one per group of two or more rows (here: at most one
per two documents); Mem0 up to two per ``add`` (fact extraction, then the memory update); Zep about
four per document (measured against fixture replies; a real model may differ). Prompt tokens are
the documents' own text at ~4 characters a token plus a fixed instruction allowance; the cache is
not consulted (a system's own request keys are only known once it runs), so cached calls are
counted as if they were to be sent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from harness.config import RunConfig
from model_clients.kvstore import KVStore
from model_clients.cost import CostEstimate, estimate
from model_clients.llm_client import ChatRequest, LLMClient, LLMConfig
from memory_protocol import Episode

WRITE_TIME_KINDS = ("mempp_g", "mempp_fact_index", "mempp_consolidated", "mem0", "zep")
INSTRUCTION_CHARS = 1_200  # allowance for each call's own instructions (~300 tokens)
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

    def format(self) -> str:
        return f"write-time calls of {self.system} ({self.rule}):\n{self.cost.format()}"


def _call_texts(config: RunConfig, episode: Episode) -> tuple[list[str], str]:
    """The text each write-time call would carry, and the rule that gave their number."""
    kind, params = config.system.kind, config.system.params
    docs = [d for d in episode.documents if d.text.strip()]
    if kind == "mempp_g":
        from memplusplus.graph import units  # networkx (~0.07 s) only when Mem^g++ is estimated

        chunk = int(params.get("chunk_turns", 10))
        unit_texts = ["\n".join(d.text for d in unit) for unit in units(docs, chunk)]
        questions = [q.text for q in episode.questions]
        return unit_texts * 2 + questions, f"2 per write unit of 1 document or {chunk} turns, 1 per question"
    if kind == "mempp_fact_index":
        return [d.text for d in docs], "1 per document"
    if kind == "mempp_consolidated":
        pairs = [docs[i].text + "\n" + docs[i + 1].text for i in range(0, len(docs) - 1, 2)]
        return pairs, "at most 1 per group of 2+ similar rows; counted as 1 per 2 documents (an upper bound)"
    if kind == "mem0":
        per_add = max(int(params.get("turns_per_add", 1)), 1)
        adds = ["\n".join(d.text for d in docs[i : i + per_add]) for i in range(0, len(docs), per_add)]
        return adds * 2, f"up to 2 per add() of {per_add} document(s): extraction, then update"
    if kind == "zep":
        return [d.text for d in docs] * 4, "about 4 per document (measured against fixture replies)"
    raise ValueError(f"{kind!r} makes no write-time calls")


def estimate_write_time(config: RunConfig, episodes: list[Episode], cache: KVStore) -> WriteTimeEstimate:
    """Count and price the write-time calls of ``config.system`` over ``episodes``."""
    llm = dict(config.system.params.get("llm") or {})
    llm.pop("name", None)
    client = LLMClient(LLMConfig(cache_only=False, **llm), cache)
    requests: list[ChatRequest] = []
    rule = ""
    for episode in episodes:
        texts, rule = _call_texts(config, episode)
        for index, text in enumerate(texts):
            filler = "x" * INSTRUCTION_CHARS
            content = f"{filler}\n{text}\n[{episode.episode_id}:{index}]"  # distinct per call
            requests.append(ChatRequest(messages=[{"role": "user", "content": content}], template_hash="write-time-estimate"))
    cost = estimate(requests, client, expected_completion_tokens=EXPECTED_COMPLETION_TOKENS)
    return WriteTimeEstimate(config.system.name, rule, cost)


def approximate_context_chars(config: RunConfig, episode: Episode) -> int:
    """Before retrieval, the size of a context: k documents of the episode's mean length (RAG: k
    chunks of ``chunk_tokens`` at ~4 characters a token), cut to the dataset's budget."""
    spec = config.system
    if spec.kind == "rag":
        chars = spec.k * int(spec.params.get("chunk_tokens", 0)) * 4
    else:
        mean = sum(len(d.text) for d in episode.documents) / max(len(episode.documents), 1)
        chars = math.ceil(spec.k * (mean + 40))  # + a header line per block
    budget = config.dataset.context_budget
    return min(chars, budget) if budget else chars
