"""The ONNX Runtime encoder gives the PyTorch encoder's vectors, and so the same retrievals."""

import numpy as np
import pytest

from harness.compose import compose_config
from harness.config import RunConfig
from harness.plan import build_encoder
from loaders import load_dataset
from memplusplus.memory import MemPlusPlus, MemPPConfig
from memplusplus.onnx_encoder import OnnxEncoder, OnnxEncoderConfig

TRICKY = [
    "  leading and trailing spaces  ",
    "UPPER and lower Case",
    "naïve café, an em dash — and a check mark ✓",
    "x",
    "word " * 400,  # longer than the 256 word pieces either encoder reads
    "\n\nnew lines\tand tabs\n",
    "The launch moved to Friday.",
]


@pytest.fixture(scope="module")
def onnx_encoder(tmp_path_factory) -> OnnxEncoder:
    return OnnxEncoder(OnnxEncoderConfig(model_dir=str(tmp_path_factory.mktemp("onnx"))))


def test_vectors_match_the_pytorch_encoder(onnx_encoder, encoder):
    ours, reference = onnx_encoder.encode(TRICKY), encoder.encode(TRICKY)
    assert ours.shape == reference.shape == (len(TRICKY), 384)
    assert np.abs(ours - reference).max() < 1e-5
    assert (ours * reference).sum(axis=1).min() > 1 - 1e-6  # cosine to the PyTorch vector
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-6)


def test_export_fuses_one_attention_node_per_layer(onnx_encoder):
    """all-MiniLM-L6-v2 has 6 transformer layers: the optimizer must fuse each one's attention
    (an export of PyTorch's SDPA attention fused none, issue 12)."""
    onnx_encoder.encode(["load the model"])
    import onnx

    graph = onnx.load(str(onnx_encoder.model_path), load_external_data=False).graph
    assert sum(node.op_type == "Attention" for node in graph.node) == 6  # one fused attention per layer


def test_export_is_made_once_and_cached_apart(onnx_encoder, encoder):
    onnx_encoder.encode(["make sure the model is loaded"])
    exported = onnx_encoder.model_path
    stamp = exported.stat().st_mtime_ns
    again = OnnxEncoder(onnx_encoder.config)
    again.encode(["a second encoder reuses the export"])
    assert exported.stat().st_mtime_ns == stamp
    assert not list(exported.parent.glob("*.partial-*"))
    assert onnx_encoder.key("text") != encoder.key("text")


def test_mempp_retrieves_nearly_the_same_rows_with_either_encoder(onnx_encoder, encoder):
    """Differences of 1e-7 flip only near-ties: measured here, 14 of 15 top-20 lists are identical
    (the other swaps two rows at ranks 16-17), every top 5 is identical."""
    episode = load_dataset("locomo")[0]
    documents = episode.documents[:300]
    questions = episode.questions[:15]
    results = []
    for backend in (encoder, onnx_encoder):
        memory = MemPlusPlus(MemPPConfig(conjunctive=False), encoder=backend)
        memory.ingest(documents)
        results.append([[hit.doc_id for hit in memory.retrieve(q.text, k=20)] for q in questions])
    pairs = list(zip(*results))
    assert sum(len(ids) for ids in results[0]) == 15 * 20
    assert all(torch_ids[:5] == onnx_ids[:5] for torch_ids, onnx_ids in pairs)
    assert sum(torch_ids == onnx_ids for torch_ids, onnx_ids in pairs) >= 14
    shared = sum(len(set(torch_ids) & set(onnx_ids)) for torch_ids, onnx_ids in pairs)
    assert shared >= 0.99 * 15 * 20


def test_config_group_builds_the_onnx_backend(tmp_path):
    config = RunConfig.from_dict(compose_config(["encoder=minilm_onnx", f"store.cache_dir={tmp_path}"]))
    built = build_encoder(config.encoder.backend, config.encoder.params, cache=None)
    assert isinstance(built, OnnxEncoder)
    assert built.model_path.parent == tmp_path / "onnx"
