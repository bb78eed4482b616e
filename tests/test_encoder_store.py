"""Embeddings are stored slice by slice as they are computed, so a killed run keeps its work."""

import numpy as np
import pytest

from model_clients.kvstore import KVStore
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
    # The optimized (fused) export's vectors differ from the first export's by ~1e-7, as both do
    # from PyTorch's, so they were given their own identity when it replaced the unfused graph.
    assert onnx.identity == "all-MiniLM-L6-v2|max_tokens=256|onnx-fp32-fused"
    assert isinstance(onnx, Encoder) and onnx.store_every == 64


def test_auto_device_is_cuda_only_when_torch_sees_one(monkeypatch):
    import torch

    from memplusplus.encoder import resolve_device

    assert EncoderConfig().device == "auto"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert Encoder().device == "cpu"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert Encoder().device == "cuda"
    assert resolve_device("cpu") == "cpu" and resolve_device("cuda:1") == "cuda:1"
    assert Encoder(EncoderConfig(device="cpu")).identity == Encoder().identity == "all-MiniLM-L6-v2|max_tokens=256"


def test_a_single_query_on_one_cpu_thread_gives_the_same_vector_and_restores_the_pool():
    import torch

    encoder = Encoder(EncoderConfig(device="cpu", threads=None))  # batches on torch's own pool
    text = "Who approved the Helix rollout plan in March?"
    torch.set_num_threads(2)
    reference = encoder._load().encode([text], normalize_embeddings=True, convert_to_numpy=True)[0]
    seen: list[int] = []
    original = encoder._model.encode
    encoder._model.encode = lambda *a, **k: (seen.append(torch.get_num_threads()), original(*a, **k))[1]
    vector = encoder.encode_one(text)
    assert seen == [1], "the one query ran on a single torch thread"
    assert torch.get_num_threads() == 2, "the thread pool is restored afterwards"
    assert np.allclose(vector, reference, atol=1e-6, rtol=0)
    encoder.encode(["first text", "second text"])
    assert seen[1:] == [2], "with threads=None batches keep the thread pool"
