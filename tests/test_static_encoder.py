"""The static encoder is distilled offline from the bundled MiniLM and plugs into Mem++.

To run fast in CI the table here keeps only word pieces of at most two characters (about 1,500 of
MiniLM's 30,522) and 32 PCA dimensions; the distillation code path is the one the full table takes.
"""

import socket
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("model2vec", reason='the static extra is not installed (pip install -e ".[static]")')

from harness.compose import compose_config  # noqa: E402
from harness.config import RunConfig  # noqa: E402
from harness.plan import build_encoder  # noqa: E402
from model_clients.kvstore import KVStore  # noqa: E402
from loaders import load_dataset  # noqa: E402
from memplusplus.memory import MemPlusPlus, MemPPConfig  # noqa: E402
from memplusplus.static_encoder import StaticEncoder, StaticEncoderConfig  # noqa: E402

# Leave out every token longer than two characters (a "##" prefix aside), but keep BERT's specials.
TINY_VOCAB = r"(?!\[(PAD|UNK|CLS|SEP|MASK)\]$)(##)?..."
TEXTS = ["The launch moved to Friday.", "Budget review with Dana at 3pm", "ok", "naïve café — ✓"]


def tiny_config(model_dir, **overrides) -> StaticEncoderConfig:
    return StaticEncoderConfig(model_dir=str(model_dir), pca_dims=32, token_remove_pattern=TINY_VOCAB, **overrides)


@pytest.fixture(scope="module")
def distilled(tmp_path_factory) -> StaticEncoder:
    """Distilled with every socket connection refused: no hub or other network access is needed."""
    refuse = pytest.MonkeyPatch()

    def no_network(*args, **kwargs):
        raise OSError("network access attempted during distillation")

    refuse.setattr(socket.socket, "connect", no_network)
    refuse.setattr(socket, "create_connection", no_network)
    try:
        encoder = StaticEncoder(tiny_config(tmp_path_factory.mktemp("static")))
        encoder.encode(["load the table"])
    finally:
        refuse.undo()
    return encoder


def test_distilled_table_is_kept_in_model_dir_and_named_by_its_settings(distilled):
    path = distilled.model_path
    assert path.is_dir() and path.parent == Path(distilled.config.model_dir)
    assert "pca32" in path.name and (path / "model.safetensors").exists()
    assert not list(path.parent.glob("*.partial-*"))
    stamp = (path / "model.safetensors").stat().st_mtime_ns
    StaticEncoder(distilled.config).encode(["a second encoder reuses the table"])
    assert (path / "model.safetensors").stat().st_mtime_ns == stamp


def test_vectors_are_normalised_and_as_wide_as_the_pca(distilled):
    vectors = distilled.encode(TEXTS)
    assert vectors.shape == (len(TEXTS), 32) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    assert len({vector.tobytes() for vector in vectors}) == len(TEXTS)


def test_a_text_without_known_word_pieces_gets_the_zero_vector(distilled):
    vectors = distilled.encode(["", "✓✓✓"])  # BERT's vocabulary has no check mark: [UNK] only
    assert not vectors.any()


def test_vectors_are_deterministic_across_distillations(distilled, tmp_path):
    again = StaticEncoder(tiny_config(tmp_path))
    again.encode(["distil a second table"])
    assert again.model_path != distilled.model_path
    assert np.array_equal(again.encode(TEXTS), distilled.encode(TEXTS))


def test_only_the_first_max_tokens_word_pieces_count(distilled, tmp_path):
    head = "so we go to it " * 60  # 300 word pieces, every one in the tiny table
    short = StaticEncoder(tiny_config(distilled.config.model_dir, max_tokens=50))
    assert np.array_equal(short.encode([head + "ok"]), short.encode([head + "by"]))
    assert not np.array_equal(distilled.encode([head[:60] + "ok"]), distilled.encode([head[:60] + "by"]))


def test_cache_identity_apart_from_minilm_and_per_setting(distilled, encoder, tmp_path):
    assert distilled.key("text") != encoder.key("text")
    other = StaticEncoder(StaticEncoderConfig(model_dir=str(tmp_path), pca_dims=64, token_remove_pattern=TINY_VOCAB))
    assert other.key("text") != distilled.key("text")
    cache = KVStore(tmp_path / "emb.sqlite")
    first = StaticEncoder(distilled.config, cache=cache)
    vectors = first.encode(TEXTS)
    second = StaticEncoder(distilled.config, cache=cache)
    assert np.array_equal(second.encode(TEXTS), vectors)
    assert second.stats() == {"embedded_texts": 0, "embedding_cache_hits": len(TEXTS)}


def test_mempp_retrieves_with_the_static_vectors(distilled):
    """Vector leg alone: a question worded exactly as one stored turn finds that turn first."""
    episode = load_dataset("locomo")[0]
    documents = episode.documents[:200]
    memory = MemPlusPlus(MemPPConfig(weights={"vector": 1.0}, recency_reserve=0), encoder=distilled)
    memory.ingest(documents)
    texts = [doc.text for doc in documents]
    target = next(doc for doc in documents[50:] if len(doc.text) > 60 and texts.count(doc.text) == 1)
    hits = memory.retrieve(target.text, k=10)
    assert len(hits) == 10
    assert hits[0].doc_id == target.doc_id


def test_config_group_builds_the_static_backend(tmp_path):
    config = RunConfig.from_dict(compose_config(["encoder=minilm_static", f"store.cache_dir={tmp_path}"]))
    built = build_encoder(config.encoder.backend, config.encoder.params, cache=None)
    assert isinstance(built, StaticEncoder)
    assert built.dimension == 256 and built.config.max_tokens == 256
    assert built.model_path.parent == tmp_path / "static"
