"""A static encoder distilled offline from the bundled all-MiniLM-L6-v2 by model2vec (opt-in,
``pip install 'mempp-harness[static]'``): each word piece embedded alone by the teacher, PCA-reduced
and SIF-weighted; a text is the mean of its tokens' rows, hundreds of times cheaper than a transformer
pass at some cost in quality (results/BENCHMARKS.md, "Encoder"). Distilled once, sealed and checked
at every load (``memplusplus.model_files``), with its own cache identity."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from memplusplus.encoder import DEFAULT_MODEL, CachedEncoder, EmbeddingCache, _offline, derived_model_file, model_source
from memplusplus.model_files import checked
from memory_protocol import cache_root

UNUSED_TOKENS = r"\[unused\d+\]"  # BERT's placeholder rows: model2vec's default, dropped


@dataclass(frozen=True)
class StaticEncoderConfig:
    model: str = DEFAULT_MODEL  # the teacher: the bundled MiniLM, or a local sentence-transformers dir
    max_tokens: int = 256  # word pieces read per text, as the MiniLM encoder
    batch_size: int = 1024  # texts per lookup batch (and per cache write)
    pca_dims: int = 256  # width of the distilled vectors
    sif_coefficient: float = 1e-4  # model2vec's token weighting; smaller weighs frequent tokens less
    token_remove_pattern: str = UNUSED_TOKENS  # regex of teacher tokens left out of the table
    model_dir: str = field(default_factory=lambda: str(cache_root() / "static"))  # where the distilled table is kept

    def __post_init__(self) -> None:
        if self.max_tokens < 1 or self.batch_size < 1 or self.pca_dims < 1:
            raise ValueError("max_tokens, batch_size and pca_dims must be >= 1")
        if not 0 < self.sif_coefficient < 1:
            raise ValueError("sif_coefficient must lie strictly between 0 and 1")


def model2vec_version() -> str:
    try:
        from importlib.metadata import version

        return version("model2vec")
    except Exception as exc:  # pragma: no cover - depends on the environment
        raise RuntimeError("encoder=minilm_static needs model2vec: pip install 'mempp-harness[static]'") from exc


def settings_tag(config: StaticEncoderConfig) -> str:
    pattern = hashlib.sha256(config.token_remove_pattern.encode("utf-8")).hexdigest()[:8]
    return f"m2v{model2vec_version()}-pca{config.pca_dims}-sif{config.sif_coefficient:g}-rm{pattern}"


def distill(config: StaticEncoderConfig, target: Path) -> Path:
    """Distill ``config.model`` into a model2vec table saved at ``target`` (a folder), offline."""
    _offline()
    try:
        from model2vec.distill import distill_from_model
        from transformers import AutoModel, AutoTokenizer
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise RuntimeError("encoder=minilm_static needs model2vec[distill]: pip install 'mempp-harness[static]'") from exc

    source = model_source(config.model)
    teacher = AutoModel.from_pretrained(source)
    tokenizer = AutoTokenizer.from_pretrained(source, use_fast=True)
    static = distill_from_model(
        model=teacher, tokenizer=tokenizer, device="cpu", pca_dims=config.pca_dims,
        sif_coefficient=config.sif_coefficient, token_remove_pattern=config.token_remove_pattern,
        quantize_to="float32",
    )
    static.save_pretrained(str(target))
    return target


def load_static_model(config: StaticEncoderConfig, path: Path):
    _offline()
    from model2vec import StaticModel

    checked(path, lambda target: distill(config, target), "the distilled static table")
    return StaticModel.from_pretrained(str(path), normalize=True, force_download=False)


class StaticEncoder(CachedEncoder):
    """Mean of distilled MiniLM token vectors (``pca_dims`` wide), normalised."""

    def __init__(self, config: StaticEncoderConfig = StaticEncoderConfig(), cache: EmbeddingCache | None = None):
        super().__init__(cache)
        self.config, self.dimension, self.store_every = config, config.pca_dims, config.batch_size
        self.model_path = derived_model_file(config.model, config.model_dir, settings_tag(config))

    @property
    def identity(self) -> str:
        return f"{self.config.model}|max_tokens={self.config.max_tokens}|static-{settings_tag(self.config)}"

    def _build(self) -> Any:
        return load_static_model(self.config, self.model_path)

    def _compute(self, texts: list[str]) -> np.ndarray:
        vectors = self._load().encode(
            texts, max_length=self.config.max_tokens, batch_size=self.config.batch_size, use_multiprocessing=False
        )
        vectors = np.nan_to_num(np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.dimension))
        # A text with no known word piece keeps the zero vector (cosine 0 to everything).
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return np.where(norms > 0, vectors / np.where(norms > 0, norms, 1.0), 0.0).astype(np.float32)
