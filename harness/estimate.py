"""A dry run (``estimate=true``) of a plan: the calls, tokens and dollars a run would spend; it
sends nothing and never embeds.

Answers are priced over cached retrievals when every text is cached, else over a stand-in context
(the episode's own documents cut to the length retrieval would give, so the tokenizer meets text of
the benchmark's density). Write-time calls follow the entry's ``write_calls`` rule of thumb, each
the documents' text plus ``INSTRUCTION_TOKENS``; cached ones count as sent (a system's own request
keys are only known once it runs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from harness.config import SystemSpec
from harness.plan import RunPlan
from harness.qa import QAItem, qa_session
from harness.results import RunResult
from harness.retrieval import question_keys, retrieve
from harness.stage_log import LOG
from harness.systems import SystemEntry
from harness.systems.registry import write_time_endpoint
from memory_protocol import Episode
from memplusplus.encoder import WouldEmbed
from model_clients.call_counts import ModelCallTally
from model_clients.cost import CostEstimate, estimate
from model_clients.embedding_cost import EmbeddingEstimate, estimate_embeddings, texts_to_embed
from model_clients.llm_client import ChatRequest, LLMClient

INSTRUCTION_TOKENS = 300  # allowance for each call's own instructions (an assumption, not measured)
EXPECTED_COMPLETION_TOKENS = 200


@dataclass(frozen=True)
class WriteTimeEstimate:
    """A :class:`CostEstimate` with the rule its call count follows."""

    system: str
    rule: str
    cost: CostEstimate

    @property
    def calls(self) -> int:
        return self.cost.calls

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


def dry_run(plan: RunPlan) -> RunResult:
    estimates: list[Any] = []
    embedding, items = None, None
    if plan.entry.write_calls is not None:  # ingesting would spend the calls
        estimates.append(estimate_write_time(plan))
    else:
        embedding = _embedding_estimate(plan)
        plan.encoder.cached_only = True
    if plan.config.answerer is not None and embedding is not None and not embedding.to_embed:
        try:
            items = retrieve(plan, ModelCallTally())
        except WouldEmbed:  # the counted texts were cached, yet a system asked for another one
            items = None
    if plan.config.answerer is not None and items is None:
        estimates += _before_retrieval(plan)
    elif items is not None:
        LOG.stage(f"answers and judging: {len(items)} questions")
        estimates += price_answers(plan, items)
    return RunResult(None, None, "", [item.record for item in items or ()], plan.stats, estimates, embedding)


def price_answers(plan: RunPlan, items: list[QAItem]) -> list[CostEstimate]:
    """Exact answer calls; judge calls for cached answers exactly, for the rest with the gold
    answer standing in for the answer text (so the count is exact and the tokens close)."""
    with qa_session(plan, items) as session:
        answers = session.answer_client.plan(session.requests)
        judge = session.prompts.judge
        assert judge is not None
        requests: list[ChatRequest] = []
        for item, key in zip(items, answers.keys):
            if judge.is_graded(item.question):
                cached = answers.hits.get(key)
                text = cached.get("text") if cached else None
                answer = text if text is not None else str(item.question.answer)
                requests += session.judge_requests(item.question, answer, plan.benchmark)
        return [estimate(session.requests, session.answer_client, expected_completion_tokens=None, role="answerer"),
                estimate(requests, session.judge_client, expected_completion_tokens=None, role="judge")]


def _before_retrieval(plan: RunPlan) -> list[CostEstimate]:
    """Answers and grades priced over stand-in contexts (exact call counts, approximate tokens)."""
    spec, budget = plan.config.system, plan.config.dataset.context_budget
    items = [QAItem(q, approximate_context(plan.entry, spec, budget, ep), {"metrics": {}})
             for ep in plan.episodes for q in ep.questions]
    return price_answers(plan, items)


def _embedding_estimate(plan: RunPlan) -> EmbeddingEstimate:
    """What must be embedded first (texts of episodes not fully retrieved), priced."""
    def needs_retrieval(episode: Episode) -> list:
        keys = question_keys(plan, episode)
        found = plan.retrievals.get_many(keys.values())
        return [q for q in episode.questions if keys[q.qid] not in found]

    rule = plan.entry.embed_rule(plan.config.system.params)
    texts = texts_to_embed(rule, plan.episodes, needs_retrieval, plan.encoder)
    return estimate_embeddings(plan.encoder, texts, approximate=rule.approximate)


def estimate_write_time(plan: RunPlan) -> WriteTimeEstimate:
    spec, write_calls = plan.config.system, plan.entry.write_calls
    assert write_calls is not None
    client = LLMClient(write_time_endpoint(spec), plan.llm_cache)
    requests: list[ChatRequest] = []
    rule = ""
    for episode in plan.episodes:
        texts, rule = write_calls(spec.params, episode)
        requests += [ChatRequest(messages=[{"role": "user", "content": f"{text}\n[{episode.episode_id}:{index}]"}],
                                 template_hash="write-time-estimate") for index, text in enumerate(texts)]  # distinct
    cost = estimate(requests, client, expected_completion_tokens=EXPECTED_COMPLETION_TOKENS,
                    prompt_tokens_per_call=INSTRUCTION_TOKENS,
                    prompt_basis=f"plus {INSTRUCTION_TOKENS} a call assumed for the system's instructions")
    return WriteTimeEstimate(spec.name, rule, cost)


def approximate_context_chars(entry: SystemEntry, spec: SystemSpec, budget: int | None, episode: Episode) -> int:
    """k documents of the episode's mean length (or k units of the entry's ``context_chars``, e.g.
    RAG chunks), cut to the dataset's ``budget``."""
    if entry.context_chars is not None:
        chars = spec.k * entry.context_chars(spec.params)
    else:
        mean = sum(len(d.text) for d in episode.documents) / max(len(episode.documents), 1)
        chars = math.ceil(spec.k * (mean + 40))  # + a header line per block
    return min(chars, budget) if budget else chars


def approximate_context(entry: SystemEntry, spec: SystemSpec, budget: int | None, episode: Episode) -> str:
    """The episode's documents one after another (again from the first when they run out), cut to
    :func:`approximate_context_chars`."""
    chars = approximate_context_chars(entry, spec, budget, episode)
    text = "\n\n".join(doc.text for doc in episode.documents if doc.text)
    if not text:
        return ""
    repeats = -(-chars // (len(text) + 2))
    return "\n\n".join([text] * repeats)[:chars]
