"""all-MiniLM-L6-v2 through ONNX Runtime: the PyTorch encoder's vectors (to about 1e-6), sooner.
As the authors' code, an fp32 export (mean pooling, unit vectors, 256 word pieces) made once from the
bundled weights, with eager attention so ONNX Runtime fuses each layer (an export of PyTorch's fused
attention ran slower than PyTorch). Sealed with its sha256 and checked at every load
(``memplusplus.model_files``); its own cache identity (``|onnx-fp32-fused``)."""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from memplusplus.encoder import DEFAULT_MODEL, EmbeddingCache, Encoder, _offline, derived_model_file, model_source, word_piece_tokenizer
from memplusplus.model_files import checked
from memory_protocol import cache_root

OPSET = 17
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


@dataclass(frozen=True)
class OnnxEncoderConfig:
    model: str = DEFAULT_MODEL
    max_tokens: int = 256
    batch_size: int = 64
    threads: int | None = None  # ONNX Runtime intra-op threads; None = every core
    model_dir: str = field(default_factory=lambda: str(cache_root() / "onnx"))  # where the one-off export is kept

    def __post_init__(self) -> None:
        if not 1 <= self.max_tokens <= 512 or self.batch_size < 1:
            raise ValueError("max_tokens must be within 1..512 and batch_size >= 1")
        if self.threads is not None and self.threads < 1:
            raise ValueError("threads must be >= 1 (or null for every core)")


def export_onnx(model: str, target: Path) -> dict[str, int]:
    """Export ``model``'s transformer to ``target`` as an optimized fp32 ONNX graph; the fused-node
    counts (an export with no fused attention is refused: it is the slow graph)."""
    import torch
    from transformers import AutoModel

    _offline()
    transformer = AutoModel.from_pretrained(model_source(model), attn_implementation="eager").eval()

    class TokenStates(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.transformer(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).last_hidden_state

    example = tuple(torch.ones((2, 8), dtype=torch.int64) for _ in INPUTS)
    raw = target.with_suffix(f".raw-{os.getpid()}")
    axes = {name: {0: "batch", 1: "tokens"} for name in (*INPUTS, "token_states")}
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the tracer's notes on shape-dependent Python branches
            torch.onnx.export(
                TokenStates(), example, str(raw), input_names=list(INPUTS), output_names=["token_states"],
                dynamic_axes=axes, opset_version=OPSET, dynamo=False,
            )
        fused = optimize_graph(raw, target, transformer.config.num_attention_heads, transformer.config.hidden_size)
    finally:
        raw.unlink(missing_ok=True)
    if fused.get("Attention", 0) < 1:
        raise RuntimeError(f"ONNX Runtime fused no attention node in the export of {model}: {fused}")
    return fused


def optimize_graph(source: Path, target: Path, num_heads: int, hidden_size: int) -> dict[str, int]:
    from onnxruntime.transformers.optimizer import optimize_model

    optimized = optimize_model(str(source), model_type="bert", num_heads=num_heads, hidden_size=hidden_size)
    optimized.save_model_to_file(str(target))
    return {name: int(count) for name, count in optimized.get_fused_operator_statistics().items()}


class OnnxEncoder(Encoder):
    """all-MiniLM-L6-v2 (384-d) on ONNX Runtime's CPU provider."""

    def __init__(self, config: OnnxEncoderConfig = OnnxEncoderConfig(), cache: EmbeddingCache | None = None):
        super().__init__(config, cache)  # type: ignore[arg-type]  # the same model/max_tokens/batch_size
        self.model_path = derived_model_file(config.model, config.model_dir, f"fp32-opset{OPSET}-eager-fused.onnx")

    @property
    def identity(self) -> str:
        return f"{super().identity}|onnx-fp32-fused"

    @property
    def tokenizer(self):
        return word_piece_tokenizer(self.config.model)

    def _build(self) -> Any:
        import onnxruntime

        checked(self.model_path, lambda path: export_onnx(self.config.model, path), "the ONNX export")
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = self.config.threads or os.cpu_count() or 1
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        return onnxruntime.InferenceSession(str(self.model_path), options, providers=["CPUExecutionProvider"])

    def _compute(self, texts: list[str]) -> np.ndarray:
        session = self._load()
        tokenizer = self.tokenizer
        encoded = tokenizer(texts, truncation=True, max_length=self.config.max_tokens)
        order = sorted(range(len(texts)), key=lambda row: len(encoded["input_ids"][row]))
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for start in range(0, len(order), self.config.batch_size):
            rows = order[start : start + self.config.batch_size]
            batch = tokenizer.pad({name: [encoded[name][row] for row in rows] for name in INPUTS}, padding=True, return_tensors="np")
            feeds = {name: np.asarray(batch[name], dtype=np.int64) for name in INPUTS}
            states = session.run(None, feeds)[0]
            mask = feeds["attention_mask"][..., None].astype(np.float32)
            pooled = (states * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
            out[rows] = pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return out
