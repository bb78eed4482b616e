"""The answer request: one chat request per question, by the benchmark's answer rule (prompt,
question date, empty-context line, cut at ``dataset.context_budget``) or official texts;
``answerer.prompt_file`` replaces the wording (with ``{context}`` and ``{question}``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import date, datetime
from typing import Any, Protocol

from harness.benchmarks import AnswerRule
from harness.config import ModelSpec
from model_clients.endpoint_limit import EndpointLimits
from model_clients.kvstore import KVStore
from model_clients.llm_client import ChatRequest, LLMClient, LLMConfig
from judges.templates import PromptTemplate, RequestParams, Wording, load_template, texts_hash
from memory_protocol import Hit, Question


class OfficialAnswer(Protocol):
    """An answer request read from official texts (OrgMemBench, the authors' template, mem0's)."""

    wording: Wording
    params: RequestParams

    def messages(self, question: Question, context: str, hits: Sequence[Hit] | None) -> list[dict[str, str]]: ...


def make_client(spec: ModelSpec, max_tokens: int | None, cache_only: bool, cache: KVStore, base_url: str | None = None,
                role: str = "answerer", limits: EndpointLimits | None = None) -> LLMClient:
    """The role's client over its endpoint fields (``base_url`` overridden for a local server);
    ``limits``: the limit of requests in flight shared with its endpoint's other clients."""
    endpoint = {f.name: getattr(spec, f.name) for f in fields(LLMConfig)}
    config = LLMConfig(**{**endpoint, "max_tokens": max_tokens, "cache_only": cache_only,
                          "base_url": base_url or spec.base_url})
    limit = limits.for_endpoint(config.resolved_base_url, config.api_key_env, config.concurrency) if limits else None
    return LLMClient(config, cache, role=role, limit=limit)


def display_name(spec: ModelSpec | None) -> str:
    """The name for titles: the model for a generic ``openai_compatible`` config, else the config's name."""
    if spec is None:
        return "none"
    return spec.model if spec.name == "openai_compatible" else spec.name


def question_date(question: Question) -> date | datetime | None:
    """The moment the question is asked, when the dataset gives one, else its as-of date."""
    return question.meta.get("question_date") or question.as_of


def date_line(question: Question) -> str:
    when = question_date(question)
    if when is None:
        return ""
    text = when.strftime("%Y-%m-%d %H:%M") if isinstance(when, datetime) else when.isoformat()
    return f"Question date: {text}\n"


@dataclass(frozen=True)
class Answerer:
    """A benchmark's answer prompt and context rule (``budget``: characters, None: no cut), or with
    ``upstream`` the request that official code sends for the question and hits."""

    template: PromptTemplate | None
    rule: AnswerRule = AnswerRule()
    budget: int | None = None
    wording: Wording = Wording("own", "judges/prompts/answer.txt")
    upstream: Any = None  # an OfficialAnswer

    @classmethod
    def load(cls, prompt_file: str | None = None, rule: AnswerRule = AnswerRule(), budget: int | None = None,
             wording: Wording | None = None) -> "Answerer":
        template = load_template(rule.template, prompt_file)
        return cls(template, rule, budget, wording or Wording("own", template.source))

    @classmethod
    def official(cls, upstream: OfficialAnswer) -> "Answerer":
        return cls(None, wording=upstream.wording, upstream=upstream)

    def request(self, question: Question, context: str, hits: Sequence[Hit] | None = None) -> ChatRequest:
        if self.upstream is not None:
            params: RequestParams = self.upstream.params
            return ChatRequest(messages=self.upstream.messages(question, context, hits),
                               template_hash=texts_hash(self.wording), temperature=params.temperature,
                               seed=params.seed, max_tokens=params.max_tokens, omit=params.omit)
        assert self.template is not None
        shown = context
        if self.rule.empty_context is not None:
            shown = context.strip() or self.rule.empty_context
        if self.rule.cut_at_budget and self.budget is not None:
            shown = shown[: self.budget]
        when = date_line(question) if self.rule.question_date else ""
        messages = self.template.messages(context=shown, question=question.text, date_line=when)
        return ChatRequest(messages=messages, template_hash=self.template.sha256)
