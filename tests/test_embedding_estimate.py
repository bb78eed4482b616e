"""estimate=true prices the embeddings a remote encoder would compute and warns before local embedding."""

import math

from harness.compose import compose_config
from harness.config import RunConfig
from model_clients.kvstore import KVStore
from model_clients.embedding_cost import estimate_embeddings
from harness.runner import run
from loaders import load_dataset
from memplusplus.encoder import Encoder
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
    tokens = sum(math.ceil(min(len(t), 20_000) / 4) for t in texts if t.strip())
    assert (embedding.remote, embedding.to_embed, embedding.tokens) == (True, 446, tokens)
    assert embedding.usd == tokens * 0.02 / 1e6
    assert "text-embedding-3-small" in embedding.format() and "sends nothing" in embedding.format()

    local_endpoint = run(RunConfig.from_dict(compose_config(
        [*base, f"encoder.base_url={fake_server.base_url}", "encoder.api_key_env=null"])))
    assert local_endpoint.embedding_estimate.usd == 0.0
    assert "own endpoint 127.0.0.1" in local_endpoint.embedding_estimate.format()
    assert fake_server.request_count == 0
    assert not (tmp_path / "runs").exists()


def test_a_local_encoder_with_a_cold_cache_is_warned_about(tmp_path):
    encoder = Encoder(cache=KVStore(tmp_path / "e.sqlite"))
    estimate = estimate_embeddings(encoder, ["one text", "another text", "one text"])
    assert (estimate.remote, estimate.texts, estimate.to_embed, estimate.usd) == (False, 2, 2, 0.0)
    assert "warning: this dry run embeds 2 texts locally" in estimate.format()
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
