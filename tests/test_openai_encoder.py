"""The OpenAI-compatible embedding backend, with the real openai SDK against a local fake server.

The server's vectors are hashed bags of words: the checks below are about batching, caching,
clamping, errors and the plumbing into Mem++ and the runner, never about embedding quality.
"""

from datetime import date, datetime

import numpy as np
import pytest

from harness.compose import compose_config
from memory_protocol import ConfigError, Document
from harness.config import RunConfig
from model_clients.kvstore import KVStore
from harness.runner import run
from memplusplus.encoder import Encoder
from memplusplus.memory import MemPlusPlus
from memplusplus.openai_encoder import EmbeddingServiceError, OpenAIEncoder, OpenAIEncoderConfig
from tests.fake_openai_server import (  # noqa: F401  (fake_server is a fixture)
    Fail,
    FakeOpenAIServer,
    bag_of_words_vector,
    fake_server,
)


def make_encoder(server: FakeOpenAIServer, cache=None, **overrides) -> OpenAIEncoder:
    settings = {"model": "text-embedding-3-small", "dimensions": 32, "base_url": server.base_url, "api_key_env": None, "max_retries": 0, **overrides}
    return OpenAIEncoder(OpenAIEncoderConfig(**settings), cache=cache)


def test_batches_normalises_and_skips_empty_texts(fake_server):
    encoder = make_encoder(fake_server, batch_size=2)
    texts = ["the cat sat", "a dog ran", "", "cat sat down", "   ", "the dog"]
    vectors = encoder.encode(texts)

    assert vectors.shape == (6, 32)
    sent = [request.body["input"] for request in fake_server.requests]
    assert sent == [["the cat sat", "a dog ran"], ["cat sat down", "the dog"]]  # blanks never sent
    assert all(request.body["dimensions"] == 32 for request in fake_server.requests)
    assert np.allclose(np.linalg.norm(vectors[[0, 1, 3, 5]], axis=1), 1.0)
    assert not vectors[2].any() and not vectors[4].any()
    expected = bag_of_words_vector("cat sat down", 32)
    assert np.allclose(vectors[3], expected / np.linalg.norm(expected))
    assert encoder.requests == 2 and encoder.computed == 6


def test_cache_means_a_second_pass_sends_nothing(fake_server, tmp_path):
    cache = KVStore(tmp_path / "embeddings.sqlite")
    first = make_encoder(fake_server, cache=cache).encode(["alpha beta", "gamma"])
    again = make_encoder(fake_server, cache=cache)
    second = again.encode(["gamma", "alpha beta"])

    assert fake_server.request_count == 1
    assert again.computed == 0 and again.cache_hits == 2
    assert np.array_equal(second, first[[1, 0]])


def test_identity_separates_backends_models_and_widths(fake_server):
    narrow = make_encoder(fake_server)
    wide = make_encoder(fake_server, dimensions=64)
    other_model = make_encoder(fake_server, model="text-embedding-3-large")
    keys = {encoder.key("same text") for encoder in (narrow, wide, other_model, Encoder())}
    assert len(keys) == 4


def test_long_inputs_are_embedded_from_a_prefix_and_counted(fake_server):
    encoder = make_encoder(fake_server, max_input_chars=20)
    long_text = "word " * 40
    encoder.encode([long_text, "short"])

    assert fake_server.requests[0].body["input"] == [long_text[:20], "short"]
    assert encoder.clamped == 1


def test_missing_key_is_a_clear_error_before_any_request(fake_server, monkeypatch):
    monkeypatch.delenv("MEMPP_TEST_EMBED_KEY", raising=False)
    encoder = make_encoder(fake_server, api_key_env="MEMPP_TEST_EMBED_KEY")
    with pytest.raises(EmbeddingServiceError, match="MEMPP_TEST_EMBED_KEY is not set"):
        encoder.encode(["anything"])
    assert fake_server.request_count == 0


def test_key_is_sent_as_bearer_token(fake_server, monkeypatch):
    monkeypatch.setenv("MEMPP_TEST_EMBED_KEY", "sk-embed-test")
    make_encoder(fake_server, api_key_env="MEMPP_TEST_EMBED_KEY").encode(["anything"])
    assert fake_server.requests[0].authorization == "Bearer sk-embed-test"


def test_refused_request_raises_with_the_endpoint_named(fake_server):
    fake_server.queue(Fail(400, "maximum input length exceeded"))
    with pytest.raises(EmbeddingServiceError, match="maximum input length exceeded") as caught:
        make_encoder(fake_server).encode(["anything"])
    assert fake_server.base_url in str(caught.value)


def test_transient_failure_is_retried(fake_server):
    fake_server.queue(Fail(500))
    vectors = make_encoder(fake_server, max_retries=2).encode(["retry me"])
    assert fake_server.request_count == 2 and vectors[0].any()


def test_fixed_width_model_without_dimensions_field(fake_server):
    server_width = fake_server.embedding_dimensions
    encoder = make_encoder(fake_server, dimensions=server_width, send_dimensions=False)
    assert encoder.encode(["hello there"]).shape == (1, server_width)
    assert "dimensions" not in fake_server.requests[0].body

    wrong = make_encoder(fake_server, dimensions=server_width + 1, send_dimensions=False)
    with pytest.raises(EmbeddingServiceError, match=f"returned a {server_width}-d vector"):
        wrong.encode(["hello there"])


def test_mempp_runs_on_wider_vectors(fake_server):
    memory = MemPlusPlus(encoder=make_encoder(fake_server, dimensions=48))
    memory.add("The launch moved to Friday", author="ana", date=datetime(2024, 3, 1))
    memory.add("Lunch menu: soup and bread", author="ben", date=datetime(2024, 3, 2))
    hits = memory.search("when is the launch", as_of=date(2024, 3, 5), k=2)
    assert memory.store.vectors.shape == (2, 48)
    ranks = {hit.text: hit.leg_ranks for hit in hits}
    assert ranks["The launch moved to Friday"]["vector"] == 0
    assert ranks["Lunch menu: soup and bread"]["vector"] == 1


def test_config_group_and_bad_backend():
    raw = compose_config(["encoder=text-embedding-3-small"])
    config = RunConfig.from_dict(raw)
    assert config.encoder.backend == "openai"
    assert config.encoder.params["model"] == "text-embedding-3-small"
    assert config.encoder.params["dimensions"] == 1536

    raw["encoder"] = {"backend": "word2vec"}
    with pytest.raises(ConfigError, match="unknown backend 'word2vec'"):
        RunConfig.from_dict(raw)
    raw["encoder"] = {"backend": "openai", "dimension": 8}
    with pytest.raises(ConfigError, match=r"unknown key\(s\) \['dimension'\]"):
        RunConfig.from_dict(raw)


def test_runner_embeds_through_the_endpoint_once(fake_server, tmp_path):
    overrides = [
        "progress=false",
        "dataset.limit=3",
        "encoder=text-embedding-3-small",
        f"encoder.base_url={fake_server.base_url}",
        "encoder.api_key_env=null",
        "encoder.dimensions=64",
        "encoder.max_retries=0",
        f"store.cache_dir={tmp_path}/cache",
        f"store.results_dir={tmp_path}/runs",
    ]
    first = run(RunConfig.from_dict(compose_config(overrides)))
    sent = fake_server.request_count
    assert first.stats["embedded_texts"] > 400  # OrgMemBench's 443 artefacts and the 3 questions
    assert first.stats["embedding_inputs_clamped"] == 0
    assert sent == 2 + 3  # the 443 artefacts in batches of 256, then one request per question

    second = run(RunConfig.from_dict(compose_config(overrides)))
    assert fake_server.request_count == sent
    assert second.stats["embedded_texts"] == 0
    assert [r["qid"] for r in second.records] == [r["qid"] for r in first.records]


def rag_documents() -> list[Document]:
    return [Document(f"d{i}", f"Turn {i}: the launch plan moved again, says note {i}. " * 6, "Maya", datetime(2023, 1, 1 + i))
            for i in range(12)]


def test_rag_sends_each_chunk_whole_once_to_a_remote_encoder(fake_server):
    """text-embedding-3-small reads 8,191 tokens per input, so a 2048/4096-token chunk is one input:
    the server receives every chunk's text exactly once, no 128-token windows."""
    from baselines.rag import RAGMemory
    from harness.systems import REGISTRY
    from model_clients.embedding_cost import texts_to_embed

    memory = RAGMemory(chunk_tokens=200, k=2, encoder=make_encoder(fake_server))
    memory.ingest(rag_documents())
    sent = [text for request in fake_server.requests for text in request.body["input"]]
    chunks = [chunk.text for chunk in memory._chunks]
    assert len(chunks) > 2 and sent == chunks
    assert memory.embeds_whole_chunks and all(chunk.windows == (chunk.text,) for chunk in memory._chunks)
    # The dry-run estimate counts the very texts sent (chunks, not documents), before any request.
    estimator = make_encoder(fake_server)
    rule = REGISTRY["rag"].embed_rule({"chunk_tokens": 200, "tokenizer": "cl100k"})
    episode = type("Episode", (), {"documents": rag_documents(), "questions": []})()
    question = type("Question", (), {"text": "When did the launch move?"})()
    assert texts_to_embed(rule, [episode], lambda ep: [question], estimator) == chunks + [question.text]
    assert not rule.approximate


def test_rag_keeps_windows_where_the_encoder_window_is_shorter(fake_server):
    """A chunk longer than the model's 8,191-token window is still embedded by windows."""
    from baselines.rag import RAGMemory

    memory = RAGMemory(chunk_tokens=9000, window_tokens=128, k=1, encoder=make_encoder(fake_server))
    memory.ingest(rag_documents())
    assert not memory.embeds_whole_chunks and len(memory._chunks[0].windows) > 1
