"""Embeddings from an OpenAI-compatible ``/v1/embeddings`` endpoint (the paper's Table 6 embeds
LoCoMo and LongMemEval_S with text-embedding-3-small), cached like the local ones.

Inputs over ``max_input_chars`` are embedded from that prefix (``clamped`` counts them; 20,000
characters stay under the model's 8,191-token cap for English and need no tokenizer); empty inputs
get a zero vector and cost no request.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from memplusplus.api_keys import Endpoint, MissingAPIKey, read_api_key, require_at_least
from memplusplus.encoder import CachedEncoder, EmbeddingCache

log = logging.getLogger(__name__)

# text-embedding-3-small/-large and ada-002 read at most 8,191 cl100k tokens per input (OpenAI's
# embeddings guide); RAG embeds a chunk whole when it fits.
MODEL_MAX_INPUT_TOKENS = 8191


class EmbeddingServiceError(RuntimeError):
    """The embedding endpoint could not be used (no key, refused request, wrong vector shape)."""


@dataclass(frozen=True)
class OpenAIEncoderConfig(Endpoint):
    """The endpoint (``Endpoint``) and the request; ``send_dimensions=False`` leaves ``dimensions``
    out for fixed-width models (text-embedding-ada-002), whose replies must still have that width."""

    dimensions: int = 1536
    send_dimensions: bool = True
    batch_size: int = 256
    max_input_chars: int = 20_000

    def __post_init__(self) -> None:
        require_at_least(1, "OpenAIEncoderConfig", dimensions=self.dimensions, batch_size=self.batch_size,
                         max_input_chars=self.max_input_chars)
        require_at_least(0, "OpenAIEncoderConfig", max_retries=self.max_retries)


class OpenAIEncoder(CachedEncoder):
    """Embeds through the ``openai`` SDK; batches of ``batch_size`` inputs, the SDK's retries."""

    def __init__(self, config: OpenAIEncoderConfig, cache: EmbeddingCache | None = None):
        super().__init__(cache)
        self.config = config
        self.dimension = config.dimensions
        self.store_every = config.batch_size  # one request's vectors per cache write
        self.clamped = 0
        self.requests = 0
        self._client = None

    @property
    def identity(self) -> str:
        cfg = self.config
        return f"openai:{cfg.model}|dimensions={cfg.dimensions}|max_input_chars={cfg.max_input_chars}|base_url={cfg.resolved_base_url}"

    def _api_key(self) -> str:
        hint = ", use encoder.api_key_env=null for a server that needs none, or use the offline encoder=minilm"
        try:
            return read_api_key(self.config.api_key_env, f"embedding model {self.config.model!r} at {self.config.resolved_base_url}", hint)
        except MissingAPIKey as exc:
            raise EmbeddingServiceError(str(exc)) from None

    def _sdk(self):
        if self._client is None:
            from openai import OpenAI

            self._client = OpenAI(api_key=self._api_key(), base_url=self.config.resolved_base_url,
                                  timeout=self.config.timeout_s, max_retries=self.config.max_retries)
        return self._client

    def _payload(self, text: str) -> str:
        if len(text) <= self.config.max_input_chars:
            return text
        self.clamped += 1
        if self.clamped == 1:
            log.warning("embedding inputs over %d characters are embedded from their first %d characters "
                        "(the stored text is unchanged); the run reports how many", *[self.config.max_input_chars] * 2)
        return text[: self.config.max_input_chars]

    def _order(self, missing: dict[str, str]) -> list[str]:
        return sorted(missing, key=lambda key: not missing[key].strip())

    def stats(self) -> dict[str, int]:
        return {**super().stats(), "embedding_inputs_clamped": self.clamped, "embedding_requests": self.requests}

    def _compute(self, texts: list[str]) -> np.ndarray:
        from openai import OpenAIError

        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        todo = [row for row, text in enumerate(texts) if text.strip()]
        for start in range(0, len(todo), self.config.batch_size):
            rows = todo[start : start + self.config.batch_size]
            extra = {"dimensions": self.config.dimensions} if self.config.send_dimensions else {}
            try:
                reply = self._sdk().embeddings.create(
                    model=self.config.model, input=[self._payload(texts[row]) for row in rows], **extra
                )
            except OpenAIError as exc:
                raise EmbeddingServiceError(
                    f"embedding request to {self.config.resolved_base_url} (model {self.config.model!r}, "
                    f"{len(rows)} inputs) failed after {self.config.max_retries} retries: {exc}"
                ) from exc
            self.requests += 1
            items = sorted(reply.data, key=lambda item: item.index)
            if len(items) != len(rows):
                raise EmbeddingServiceError(f"asked for {len(rows)} embeddings, the server returned {len(items)}")
            for row, item in zip(rows, items):
                vector = np.asarray(item.embedding, dtype=np.float32)
                if vector.shape != (self.dimension,):
                    raise EmbeddingServiceError(
                        f"model {self.config.model!r} returned a {vector.shape[0]}-d vector; the config says "
                        f"dimensions={self.dimension}"
                    )
                norm = float(np.linalg.norm(vector))
                out[row] = vector / norm if norm > 0 else vector
        return out
