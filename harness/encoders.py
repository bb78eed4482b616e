"""Build the run's embedding backend from its config section."""

from __future__ import annotations

from typing import Any

from memory_protocol import ConfigError
from memplusplus.encoder import CachedEncoder, EmbeddingCache, Encoder, EncoderConfig
from memplusplus.onnx_encoder import OnnxEncoder, OnnxEncoderConfig
from memplusplus.openai_encoder import OpenAIEncoder, OpenAIEncoderConfig
from memplusplus.static_encoder import StaticEncoder, StaticEncoderConfig

BACKENDS: dict[str, tuple[type, type[CachedEncoder]]] = {
    "local": (EncoderConfig, Encoder),
    "onnx": (OnnxEncoderConfig, OnnxEncoder),
    "openai": (OpenAIEncoderConfig, OpenAIEncoder),
    "static": (StaticEncoderConfig, StaticEncoder),
}


def check_encoder_keys(backend: str, params: dict[str, Any]) -> None:
    """A ConfigError naming an unknown backend or key (so a misspelt key is named before anything
    it leaves unset)."""
    if backend not in BACKENDS:
        raise ConfigError(f"encoder.backend: unknown backend {backend!r}; known are {sorted(BACKENDS)}")
    config_class = BACKENDS[backend][0]
    known = set(config_class.__dataclass_fields__)
    unknown = sorted(set(params) - known)
    if unknown:
        raise ConfigError(
            f"encoder ({backend} backend): unknown key(s) {unknown}; known keys are {sorted(known | {'backend'})}"
        )


def encoder_config(backend: str, params: dict[str, Any]) -> Any:
    """The backend's config dataclass; a ConfigError names an unknown backend or key."""
    check_encoder_keys(backend, params)
    return BACKENDS[backend][0](**params)


def encoder_label(backend: str, params: dict[str, Any]) -> str:
    """The encoder in a few words, for a printout: its model, backend and width when it names one."""
    width = params.get("dimensions")
    return f"{params.get('model', '?')} ({backend}{f', {width}-d' if width else ''})"


def build_encoder(backend: str, params: dict[str, Any], cache: EmbeddingCache | None) -> CachedEncoder:
    return BACKENDS[backend][1](encoder_config(backend, params), cache=cache)
