"""Embeddings are stored slice by slice as they are computed, so a killed run keeps its work."""

import numpy as np
import pytest

from harness.kvstore import KVStore
from memplusplus.encoder import CachedEncoder, Encoder, EncoderConfig
from memplusplus.onnx_encoder import OnnxEncoder, OnnxEncoderConfig


class Killed(Exception):
    pass


class DiesAfter(CachedEncoder):
    """Word-count vectors; raises (a stand-in for kill -9) on the ``dies_on``-th slice."""

    dimension = 4
    store_every = 3

    def __init__(self, cache, dies_on: int | None):
        super().__init__(cache)
        self.dies_on = dies_on
        self.slices = 0
        self.seen: list[list[str]] = []

    @property
    def identity(self) -> str:
        return "test-words"

    def _compute(self, texts):
        self.slices += 1
        self.seen.append(list(texts))
        if self.slices == self.dies_on:
            raise Killed
        vectors = np.array([[len(t), t.count(" "), 1, 0] for t in texts], dtype=np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_a_kill_mid_corpus_keeps_every_finished_slice(tmp_path):
    cache = KVStore(tmp_path / "emb.sqlite")
    texts = [f"text number {i} " + "x " * i for i in range(10)]
    with pytest.raises(Killed):
        DiesAfter(cache, dies_on=3).encode(texts)
    assert len(cache) == 6, "two slices of three were computed before the kill and both are stored"

    resumed = DiesAfter(cache, dies_on=None)
    vectors = resumed.encode(texts)
    assert resumed.stats() == {"embedded_texts": 4, "embedding_cache_hits": 6}
    assert np.array_equal(vectors, DiesAfter(None, dies_on=None).encode(texts))


def test_slices_are_longest_first_and_results_keep_input_order(tmp_path):
    encoder = DiesAfter(KVStore(tmp_path / "emb.sqlite"), dies_on=None)
    texts = ["a", "bbbb", "cc", "ddddd", "eee"]
    vectors = encoder.encode(texts)
    assert encoder.seen == [["ddddd", "bbbb", "eee"], ["cc", "a"]]
    assert np.array_equal(vectors[0], DiesAfter(None, None).encode(["a"])[0])


def test_identities_are_unchanged_so_existing_caches_stay_valid(tmp_path):
    assert Encoder().identity == "all-MiniLM-L6-v2|max_tokens=256"
    assert Encoder(EncoderConfig(max_tokens=128)).identity == "all-MiniLM-L6-v2|max_tokens=128"
    onnx = OnnxEncoder(OnnxEncoderConfig(model_dir=str(tmp_path)))
    assert onnx.identity == "all-MiniLM-L6-v2|max_tokens=256|onnx-fp32"
    assert isinstance(onnx, Encoder) and onnx.store_every == 64
