"""What the LLM client tests share: requests, a client on the fake server, the expected fake answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from model_clients.kvstore import KVStore
from model_clients.llm_client import (
    ChatRequest,
    ChatResult,
    LLMClient,
    LLMConfig,
)
from tests.fake_openai_server import FakeOpenAIServer, default_answer


REPO_ROOT = Path(__file__).resolve().parents[1]
FAKE_KEY = "sk-test-MEMPP-SECRET-9f8e7d6c5b4a39281706f5e4d3c2b1a0"


def req(content: str, **kwargs: Any) -> ChatRequest:
    return ChatRequest(
        messages=[{"role": "system", "content": "You answer briefly."}, {"role": "user", "content": content}],
        template_hash=kwargs.pop("template_hash", "tmpl-v1"),
        **kwargs,
    )


def reqs(n: int, prefix: str = "q") -> list[ChatRequest]:
    return [req(f"{prefix}{i}") for i in range(n)]


def make_client(server: FakeOpenAIServer, cache: KVStore | Path, **overrides: Any) -> LLMClient:
    settings: dict[str, Any] = dict(
        model="gpt-4.1-mini",
        base_url=server.base_url,
        api_key_env=None,
        reask_delay_s=0.001,
        timeout_s=5.0,
        concurrency=4,
        max_retries=3,
    )
    sleep = overrides.pop("sleep", None)
    settings.update(overrides)
    store = cache if isinstance(cache, KVStore) else KVStore(cache)
    if sleep is not None:
        return LLMClient(LLMConfig(**settings), store, sleep=sleep)
    return LLMClient(LLMConfig(**settings), store)


def expected_text(request: ChatRequest, model: str = "gpt-4.1-mini", seed: int = 0, temperature: float = 0.0) -> str:
    body = {"model": model, "messages": list(request.messages), "seed": seed, "temperature": temperature}
    return default_answer(body)


def essence(results: list[ChatResult]) -> list[tuple[str, int, int, str | None]]:
    return [(r.text, r.prompt_tokens, r.completion_tokens, r.error) for r in results]


@pytest.fixture
def cache_path(tmp_path: Path) -> Path:
    return tmp_path / "llm_cache.sqlite"
