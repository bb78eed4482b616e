"""The answer stage: one chat request per question, built from the evidence the answerer reads.

Each benchmark answers by its own rule (:class:`harness.benchmarks.AnswerRule`: its prompt,
whether the question's date is shown, how an empty context reads, whether the answerer cuts the
context at ``dataset.context_budget``). ``answerer.prompt_file`` replaces the wording (e.g. the
official prompt verbatim, with ``{context}`` and ``{question}``).
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
from memory_protocol import Question
from memory_protocol.documents import Hit


class OfficialAnswer(Protocol):
    """An answer request read from official texts (OrgMemBench's answerer, the authors' template,
    mem0's answer prompts): its wording, request settings and messages."""

    wording: Wording
    params: RequestParams

    def messages(self, question: Question, context: str, hits: Sequence[Hit] | None) -> list[dict[str, str]]: ...


def llm_config(spec: ModelSpec, max_tokens: int | None, cache_only: bool, base_url: str | None = None) -> LLMConfig:
    """The client settings of an answerer or judge: its endpoint fields, with the stage's
    ``max_tokens``, the run's ``cache_only`` and ``base_url`` overridden (e.g. a local server)."""
    endpoint = {f.name: getattr(spec, f.name) for f in fields(LLMConfig)}
    return LLMConfig(**{**endpoint, "max_tokens": max_tokens, "cache_only": cache_only, "base_url": base_url or spec.base_url})


def make_client(spec: ModelSpec, max_tokens: int | None, cache_only: bool, cache: KVStore, base_url: str | None = None,
                role: str = "answerer", limits: EndpointLimits | None = None) -> LLMClient:
    """The role's client; with ``limits``, holding the limit of requests in flight it shares with
    the other clients of its endpoint."""
    config = llm_config(spec, max_tokens, cache_only, base_url)
    limit = limits.for_endpoint(config.resolved_base_url, config.api_key_env, config.concurrency) if limits else None
    return LLMClient(config, cache, role=role, limit=limit)


def display_name(spec: ModelSpec | None) -> str:
    """The name to show in titles and tables: the model itself for a generic endpoint config
    (``openai_compatible``), else the config's name; ``none`` without a model."""
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
    """A benchmark's answer prompt and its context rule; ``budget`` is the dataset's
    ``context_budget`` (characters, None: no cut). ``wording`` says where the words come from.

    With ``upstream`` (official texts: OrgMemBench's ``basic_answer``, the authors' template, mem0's
    answer prompts) the request is what that upstream code sends for the question and the hits (or
    the rendered context); the template and rule are then not used."""

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
