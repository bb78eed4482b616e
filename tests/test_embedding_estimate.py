"""estimate=true prices the embeddings a remote encoder would compute and warns before local embedding."""

import math

import bpe_openai

import pytest

from harness.compose import compose_config
from harness.config import RunConfig
from model_clients.kvstore import EMBEDDINGS, KVStore, run_cache
from model_clients.embedding_cost import LOCAL_TOKENS_PER_SECOND, estimate_embeddings
from harness.cli import execute
from harness.runner import run
from loaders import load_dataset
from memplusplus.encoder import CachedEncoder, Encoder
from tests.fake_openai_server import fake_server  # noqa: F401  (a fixture)


def test_a_dry_run_prices_remote_embeddings_and_sends_nothing(fake_server, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    base = ["dataset.limit=3", "encoder=text-embedding-3-small", "answerer=gpt-4.1-mini", "estimate=true",
            "progress=false", f"store.cache_dir={tmp_path}/cache", f"store.results_dir={tmp_path}/runs"]
    on_openai = run(RunConfig.from_dict(compose_config(base)))
    embedding = on_openai.embedding_estimate
    # Retrieval would need those embeddings: answers are priced over contexts of the size retrieval
    # would give, here OrgMemBench's 40,000-character cut (k = 50 documents are longer than that).
    answers, grades = on_openai.estimates
    assert (answers.model, answers.calls, grades.model, grades.calls) == ("gpt-4.1-mini", 3, "gpt-4o-mini", 9)
    assert answers.prompt_tokens >= 3 * 40_000 // 4
    episode = load_dataset("orgmem", limit=3)[0]
    texts = [d.text for d in episode.documents] + [q.text for q in episode.questions]
    cl100k = bpe_openai.get_encoding("cl100k_base")  # text-embedding-3-small's own encoding
    tokens = sum(len(cl100k.encode_ordinary(t[:20_000])) for t in texts if t.strip())
    assert (embedding.remote, embedding.to_embed, embedding.tokens) == (True, 446, tokens)
    assert embedding.usd == tokens * 0.02 / 1e6
    assert "text-embedding-3-small" in embedding.format() and "sends nothing" in embedding.format()
    assert f"tokens {tokens:,} [cl100k_base, text-embedding-3-small's own tokenizer (offline)]" in embedding.format()
    # 446 texts in batches of 256: two requests, timed at the stated assumption of 1 s each
    assert embedding.seconds == 2.0
    assert "time to embed ~2 s (2 request(s) of up to 256 texts at an assumed 1 s each" in embedding.format()

    local_endpoint = run(RunConfig.from_dict(compose_config(
        [*base, f"encoder.base_url={fake_server.base_url}", "encoder.api_key_env=null"])))
    assert local_endpoint.embedding_estimate.usd == 0.0
    assert "own endpoint 127.0.0.1" in local_endpoint.embedding_estimate.format()
    assert fake_server.request_count == 0
    assert not (tmp_path / "runs").exists()


def test_a_local_encoder_with_a_cold_cache_is_counted_and_timed_not_run(tmp_path):
    encoder = Encoder(cache=KVStore(tmp_path / "e.sqlite"))
    estimate = estimate_embeddings(encoder, ["one text", "another text", "one text"])
    assert (estimate.remote, estimate.texts, estimate.to_embed, estimate.usd) == (False, 2, 2, 0.0)
    assert "2 to embed locally" in estimate.format()
    assert estimate.seconds == (2 + 3) / LOCAL_TOKENS_PER_SECOND  # ceil(8 / 4) + ceil(12 / 4) tokens
    assert "this dry run embedded none" in estimate.format()
    assert "all-MiniLM-L6-v2|max_tokens=256" in estimate.format()
    assert encoder.computed == 0, "an estimate computes nothing"


def test_mempp_embeds_every_document_at_write_even_without_its_vector_leg():
    from harness.systems import REGISTRY
    from model_clients.embedding_cost import texts_to_embed

    episode = load_dataset("orgmem", limit=2)[0]
    weights = {"lexical": 1.0, "tag": 1.0, "vector": 4.0}

    def texts(kind: str, params: dict) -> list[str]:
        return texts_to_embed(REGISTRY[kind].embed_rule(params), [episode], lambda ep: ep.questions)

    no_vector = texts("mempp", {"legs": ["lexical", "tag"], "weights": weights})
    full = texts("mempp", {"legs": ["lexical", "tag", "vector"], "weights": weights})
    assert no_vector == [d.text for d in episode.documents]  # rows keep their embedding; no query is embedded
    assert full == no_vector + [q.text for q in episode.questions]
    assert texts("bm25", {}) == []


def _never_compute(self, texts):
    raise AssertionError(f"a dry run computed {len(texts)} embeddings")


@pytest.mark.parametrize("answerer", ["none", "gpt-4.1-mini"])
def test_a_local_dry_run_embeds_nothing_and_prints_the_count_and_the_time(answerer, tmp_path, capsys, monkeypatch):
    """`system=rag_4096 dataset=orgmem estimate=true` used to embed on the CPU for ~2 minutes; a dry
    run now counts the texts and times them at the measured MiniLM rate, and computes none."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for backend in (Encoder, CachedEncoder):
        monkeypatch.setattr(backend, "_compute", _never_compute)
    raw = compose_config(["system=mempp", "dataset.limit=3", f"answerer={answerer}", "estimate=true",
                          "progress=false", f"store.cache_dir={tmp_path}/cache", f"store.results_dir={tmp_path}/runs"])
    assert execute(raw) == 0
    out = capsys.readouterr().out
    # one episode: its 443 documents and 3 questions (Mem++ embeds both), all missing from the cache
    assert "446 texts -> 446 to embed locally, on this machine's CPU, 0 cached" in out
    episode = load_dataset("orgmem", limit=3)[0]
    texts = [d.text for d in episode.documents] + [q.text for q in episode.questions]
    window = sum(min(math.ceil(len(t) / 4), 256) for t in texts)  # what MiniLM reads of each text
    assert f"time to embed ~{window / 1470:.0f} s ({window:,} tokens read at 1,470 tokens/s, as measured" in out
    assert len(run_cache(RunConfig.from_dict(raw).store, EMBEDDINGS)) == 0  # nothing computed, nothing stored
    assert not (tmp_path / "runs").exists()
    if answerer != "none":  # answers priced over contexts of the size retrieval would give
        assert "gpt-4.1-mini" in out and "total for this configuration: $" in out


def test_an_encoder_in_a_dry_run_refuses_a_text_missing_from_its_cache(tmp_path):
    from memplusplus.encoder import WouldEmbed

    encoder = Encoder(cache=KVStore(tmp_path / "e.sqlite"))
    encoder.cached_only = True
    with pytest.raises(WouldEmbed, match="1 text"):
        encoder.encode(["never embedded"])
    assert encoder.computed == 0 and len(encoder.cache) == 0
