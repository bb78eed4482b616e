"""The answer stage: one chat request per question, built from the evidence the answerer reads."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from harness.config import ModelSpec
from harness.kvstore import KVStore
from harness.models.llm_client import ChatRequest, LLMClient, LLMConfig
from judges.llm_judges import PromptTemplate, load_template
from loaders.schema import Question


def llm_config(spec: ModelSpec, max_tokens: int | None, cache_only: bool, base_url: str | None = None) -> LLMConfig:
    """The client settings of an answerer or judge (``base_url`` overrides, e.g. a local server)."""
    return LLMConfig(
        model=spec.model,
        base_url=base_url or spec.base_url,
        api_key_env=spec.api_key_env,
        temperature=spec.temperature,
        seed=spec.seed,
        max_tokens=max_tokens,
        timeout_s=spec.timeout_s,
        max_retries=spec.max_retries,
        concurrency=spec.concurrency,
        cache_only=cache_only,
        price_in_per_mtok=spec.price_in_per_mtok,
        price_out_per_mtok=spec.price_out_per_mtok,
    )


def make_client(spec: ModelSpec, max_tokens: int | None, cache_only: bool, cache: KVStore, base_url: str | None = None) -> LLMClient:
    return LLMClient(llm_config(spec, max_tokens, cache_only, base_url), cache)


def question_date(question: Question) -> date | datetime | None:
    """The moment the question is asked, when the dataset gives one (LongMemEval) or its as-of date."""
    return question.meta.get("question_date") or question.as_of


def date_line(question: Question) -> str:
    when = question_date(question)
    if when is None:
        return ""
    text = when.strftime("%Y-%m-%d %H:%M") if isinstance(when, datetime) else when.isoformat()
    return f"Question date: {text}\n"


@dataclass(frozen=True)
class Answerer:
    """The answer prompt (``judges/prompts/answer.txt``, or the user's ``prompt_file``)."""

    template: PromptTemplate

    @classmethod
    def load(cls, prompt_file: str | None = None) -> "Answerer":
        return cls(load_template("answer", prompt_file))

    def request(self, question: Question, context: str) -> ChatRequest:
        messages = self.template.messages(context=context, question=question.text, date_line=date_line(question))
        return ChatRequest(messages=messages, template_hash=self.template.sha256)
