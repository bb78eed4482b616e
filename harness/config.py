"""Plain dataclasses for one run, built and checked from the composed Hydra config (Hydra stays in run.py).

``batch`` (true, false, or ``status``: list the pending batches, run nothing) sends the answerer's and
judge's calls through a provider's batch API; a role's own ``batch`` wins, null meaning the top-level
value. A local server has no batch API, and a system's write-time calls (``system.llm``) go live one
by one, since each reads what the ones before wrote.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field, fields
from functools import cached_property
from typing import Any

from harness.benchmarks import Benchmark, benchmark_path, load_benchmark
from harness.systems.registry import SystemEntry, SystemSpec
from harness.validate import (as_typed, check_booleans, check_env_settings, check_keys, check_model, float_setting,
                             int_setting, writable_folder)
from loaders.published import check_errata
from memory_protocol import ConfigError, cache_root
from memplusplus.encoder import DEFAULT_MODEL, Encoder, EncoderConfig
from memplusplus.onnx_encoder import OnnxEncoder, OnnxEncoderConfig
from memplusplus.openai_encoder import OpenAIEncoder, OpenAIEncoderConfig
from memplusplus.static_encoder import StaticEncoder, StaticEncoderConfig
from model_clients.chat_types import LLMConfig, identity_fields as endpoint_settings

PRINT_MODES = ("headline", "full")  # headline: the console-width table; full: every column
ANSWER_RECIPES = ("harness", "mem0")
RECIPE_KINDS = ("mem0", "zep")  # the systems mem0's evaluation answers with its own prompt
BATCH_STATUS = "status"
# Settings that do not name a run's results (where things are stored, progress, dry runs, ...).
UNNAMING = ("store", "progress", "estimate", "cache_only", "batch", "write_time_batch", "official_dir", "print_mode")
# encoder.backend -> (its settings dataclass, its encoder class)
ENCODERS: dict[str, tuple[type, type]] = {
    "local": (EncoderConfig, Encoder),
    "onnx": (OnnxEncoderConfig, OnnxEncoder),
    "openai": (OpenAIEncoderConfig, OpenAIEncoder),
    "static": (StaticEncoderConfig, StaticEncoder),
}


@dataclass(frozen=True)
class DatasetSpec:
    """``benchmark``: the dotted path of the module defining its ``BENCHMARK`` (None:
    ``harness.benchmarks.<name>``); every other key has a default."""

    name: str
    benchmark: str | None = None
    data_dir: str | None = None
    limit: int | None = None
    categories: list[str] | None = None
    options: dict[str, Any] = field(default_factory=dict)
    context_budget: int | None = None
    answer_max_tokens: int = 512
    ks: list[int] = field(default_factory=lambda: [10])
    metric_depth: int | None = None  # rank this deep for the metrics only (context keeps system.k)
    errata: str | None = None  # corrected golds (loaders.published.load_errata): sound-gold score and ceiling columns
    errata_evidence: bool = False  # the errata's corrected evidence ids drive the retrieval metrics

    def describe(self) -> Benchmark:
        return load_benchmark(benchmark_path(self))


@dataclass(frozen=True)
class ModelSpec(LLMConfig):
    """An answerer or a judge: its endpoint (every LLMConfig field) and the role's own settings.
    ``price_*_per_mtok`` default to the price table on the provider's endpoint, 0 elsewhere."""

    name: str = ""
    local: str | None = None  # a local server to start
    local_context_tokens: int | None = None
    prompt_file: str | None = None
    runs: int = 1  # independent grades


@dataclass(frozen=True)
class EncoderSpec:
    """The embedding backend (``local`` MiniLM, ``onnx``, ``openai`` or ``static``) and its settings."""

    backend: str = "local"
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StoreSpec:
    cache_dir: str = field(default_factory=lambda: str(cache_root()))
    results_dir: str = "outputs/runs"
    repair_cache: bool = False  # a cache entry failing its checksum is dropped and recomputed, not an error


def encoder_label(backend: str, params: dict[str, Any]) -> str:
    """The encoder in a few words, for a printout: its model, backend and width when it names one."""
    width = params.get("dimensions")
    return f"{params.get('model', '?')} ({backend}{f', {width}-d' if width else ''})"


def _section(cls, section: str, values: dict[str, Any]):
    check_keys(section, values, {f.name for f in fields(cls)})
    return cls(**values)


def _store(values: dict[str, Any]) -> StoreSpec:
    store = _section(StoreSpec, "store", values)
    if not isinstance(store.repair_cache, bool):
        raise ConfigError(f"store.repair_cache={store.repair_cache!r}: must be true or false")
    for key in ("cache_dir", "results_dir"):
        writable_folder(f"store.{key}", getattr(store, key))
    return store


def _optional_folder(key: str, value: Any) -> str | None:
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise ConfigError(f"{key}={value!r}: must be a directory path or null")
    return value


def _system(raw: dict[str, Any]) -> tuple[SystemSpec, SystemEntry]:
    from harness.systems import entry_for  # the registry imports this module's neighbours

    if "_target_" in raw:  # a user's own memory: the importable object is its kind
        if "kind" in raw:
            raise ConfigError("system: give either kind (a registered system) or _target_ (your own), not both")
        raw["kind"] = raw.pop("_target_")
    for key in ("name", "kind", "k"):
        if key not in raw:
            raise ConfigError(f"system.{key} is missing; pick a system=<name> from configs/system")
    name, kind = str(raw.pop("name")), str(raw.pop("kind"))
    k = int_setting("system.k", raw.pop("k"), 1, allowed=" (how many rows are retrieved)")
    spec = SystemSpec(name=name, kind=kind, k=k, params=raw)
    entry = entry_for(spec)
    if entry.check is not None:
        entry.check(spec)
    return spec, entry


def _dataset(raw: dict[str, Any]) -> DatasetSpec:
    # limit 0 wrote an empty run folder with a row of NaN
    for key, allowed in (("limit", " (questions to run) or null (every question)"),
                         ("context_budget", " (characters) or null (no cut)"), ("answer_max_tokens", "")):
        if raw.get(key) is not None or key == "answer_max_tokens":
            raw[key] = int_setting(f"dataset.{key}", raw.get(key, 512), 1, allowed=allowed)
    categories = raw.get("categories")
    if categories is not None and (not isinstance(categories, list) or not categories
                                   or not all(isinstance(c, str) and c.strip() for c in categories)):
        # [] selected no question and still wrote a run folder of empty rows
        raise ConfigError(f"dataset.categories={as_typed(categories)}: must be a non-empty list of category names, "
                          f"or null (every category)")
    ks = raw.get("ks", [10])
    if not isinstance(ks, list) or not ks:
        raise ConfigError(f"dataset.ks={as_typed(ks)}: must be a non-empty list of integers >= 1")
    raw["ks"] = [int_setting("dataset.ks", k, 1) for k in ks]
    return _section(DatasetSpec, "dataset", raw)


def _encoder(values: dict[str, Any]) -> EncoderSpec:
    spec = EncoderSpec(backend=str(values.pop("backend", "local")), params=values)
    if spec.backend not in ENCODERS:
        raise ConfigError(f"encoder.backend: unknown backend {spec.backend!r}; known are {sorted(ENCODERS)}")
    known = {f.name for f in fields(ENCODERS[spec.backend][0])}  # a misspelt key first, before what it leaves unset
    check_keys(f"encoder ({spec.backend} backend)", values, known | {"backend"})
    for key in ("max_tokens", "batch_size"):  # 0 was a torch RuntimeError at the first embedding
        if values.get(key) is not None:
            # MiniLM has 512 positions: more was a torch RuntimeError too (a static table has no positions)
            bounded = key == "max_tokens" and spec.backend in ("local", "onnx") and values.get("model") == DEFAULT_MODEL
            int_setting(f"encoder.{key}", values[key], 1, 512 if bounded else None,
                        allowed=" (all-MiniLM-L6-v2 reads at most 512 word pieces)" if bounded else "")
    if spec.backend == "openai":  # a remote endpoint: checked like every other model endpoint
        check_model("encoder", values)
    ENCODERS[spec.backend][0](**spec.params)  # a bad value fails now, not at the first embedding
    return spec


def _batch_switch(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if value == BATCH_STATUS:
        raise ConfigError("batch=status lists the pending batches and runs nothing; give it on its own "
                          "(python run.py batch=status), or batch=true / batch=false for a run")
    raise ConfigError(f"batch={as_typed(value)}: must be true, false or status")


def _own_batch(section: str, own: Any) -> bool | None:
    if own is not None and not isinstance(own, bool):
        raise ConfigError(f"{section}.batch={as_typed(own)}: must be true, false or null (the top-level batch)")
    return own


def _write_time_batch(system_params: dict[str, Any], batch: bool) -> bool:
    """Batch asked for the system's write-time model (``system.llm.batch``, else the top-level value)."""
    llm = system_params.get("llm")
    if not isinstance(llm, dict):
        return False
    own = _own_batch("system.llm", llm.get("batch"))
    return bool(own) if own is not None else batch


def _model(section: str, raw: dict[str, Any], batch: bool, poll_s: float, prompt_folder: str | None = None
           ) -> ModelSpec:
    """A role's settings, checked, with ``batch`` resolved (never on a local server) and ``batch_poll_s`` filled in."""
    own, local = _own_batch(section, raw.get("batch")), raw.get("local")
    if own and local:
        raise ConfigError(f"{section}.batch=true: {section} {raw.get('name', '')!s} runs on a local server "
                          f"({local}), which has no batch API; leave {section}.batch unset or false")
    raw = {**raw, "batch": bool(own) if own is not None else (batch and not local)}
    if raw.get("batch_poll_s") is None:
        raw["batch_poll_s"] = poll_s
    check_model(section, raw, prompt_folder=prompt_folder)
    return _section(ModelSpec, section, raw)


def _roles(raw: dict[str, Any], benchmark: Benchmark, name: str, batch: bool, poll_s: float
           ) -> tuple[ModelSpec | None, ModelSpec | None]:
    """The answerer and judge: none without an answerer; a benchmark without a judge takes no answerer."""
    answerer_raw = dict(raw.pop("answerer", None) or {"name": "none"})
    judge_raw = raw.pop("judge", None)
    if answerer_raw.get("name") == "none":
        return None, None
    if benchmark.judge is None:
        raise ConfigError(f"dataset {name}: its benchmark has no judge (retrieval only); run it with answerer=none")
    answerer = _model("answerer", answerer_raw, batch, poll_s)
    judge = _model("judge", dict(judge_raw), batch, poll_s, benchmark.judge_prompt_folder) if judge_raw else None
    return answerer, judge


def _choice(key: str, value: Any, allowed: tuple[str, ...], what: str = "") -> str:
    if value not in allowed:
        raise ConfigError(f"{key}={as_typed(value)}: expected one of {', '.join(allowed)}{what}")
    return str(value)


@dataclass(frozen=True)
class RunConfig:
    dataset: DatasetSpec
    system: SystemSpec
    encoder: EncoderSpec = EncoderSpec()
    store: StoreSpec = StoreSpec()
    answerer: ModelSpec | None = None
    judge: ModelSpec | None = None
    estimate: bool = False
    cache_only: bool = False
    batch: bool = False  # the top-level switch (each role's own resolved value is on its ModelSpec)
    write_time_batch: bool = False  # batch asked for system.llm: its calls still go live
    progress: bool = True
    run_name: str | None = None
    official_dir: str | None = None
    answer_recipe: str = "harness"  # harness | mem0 (mem0's answer prompt for Mem0 and Zep rows)
    print_mode: str = "headline"  # config key `print`

    @cached_property
    def benchmark(self) -> Benchmark:
        """The dataset's benchmark, resolved once (``from_dict`` already has it)."""
        return self.dataset.describe()

    @cached_property
    def entry(self) -> SystemEntry:
        """The system's registry entry, resolved once (``from_dict`` already has it)."""
        from harness.systems import entry_for

        return entry_for(self.system)

    @property
    def answerer_name(self) -> str:
        return self.answerer.name if self.answerer is not None else "none"

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> RunConfig:
        raw = dict(raw)
        raw.pop("hydra", None)
        check_env_settings(raw)  # a key pasted as answerer.api_key_env=sk-... never reaches a file
        check_booleans(raw)  # system.conjunctive=no is refused, naming the key: bool("no") ran it conjunctive
        system, entry = _system(dict(raw.pop("system")))
        dataset = _dataset(dict(raw.pop("dataset")))
        benchmark = dataset.describe()  # an unknown benchmark module stops the run here, naming the key
        check_errata(dataset.errata, getattr(benchmark.loader, "name", str(benchmark.loader)), dataset.errata_evidence)
        batch = _batch_switch(raw.pop("batch", False))
        poll_s = float_setting("batch_poll_s", raw.pop("batch_poll_s", 60), at_least=0,
                               allowed=" (seconds between two polls of a batch)")
        answerer, judge = _roles(raw, benchmark, dataset.name, batch, poll_s)
        recipe = _choice("answer_recipe", raw.pop("answer_recipe", "harness"), ANSWER_RECIPES)
        config = cls(
            dataset=dataset,
            system=system,
            encoder=_encoder(dict(raw.pop("encoder", None) or {})),
            store=_store(dict(raw.pop("store", {}))),
            answerer=answerer,
            judge=judge,
            estimate=bool(raw.pop("estimate", False)),
            cache_only=bool(raw.pop("cache_only", False)),
            batch=batch,
            write_time_batch=_write_time_batch(system.params, batch),
            progress=bool(raw.pop("progress", True)),
            run_name=raw.pop("run_name", None),
            official_dir=_optional_folder("official_dir", raw.pop("official_dir", None)),
            # mem0 only where it changes something, so a preset asking for it names every other row's run as before
            answer_recipe=recipe if system.kind in RECIPE_KINDS else "harness",
            print_mode=_choice("print", raw.pop("print", "headline"), PRINT_MODES,
                               " (headline: the headline metrics in at most 120 characters a line; full: every column)"),
        )
        if raw:
            raise ConfigError(f"unknown top-level key(s) {sorted(raw)}")
        config.__dict__.update(benchmark=benchmark, entry=entry)  # the cached properties, resolved above
        return config

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def cache_dir(self) -> str:
        return os.path.expanduser(self.store.cache_dir)


def settings_identity(params: dict[str, Any]) -> dict[str, Any]:
    """A system's settings as far as they name its output: ``llm`` without execution-only fields."""
    if isinstance(params.get("llm"), dict):
        return {**params, "llm": endpoint_settings(params["llm"])}
    return dict(params)


def run_identity(resolved: dict[str, Any], wording: str | None = None) -> dict[str, Any]:
    """The resolved config as far as it names the run's results (its folder's hash); ``wording``: the
    answer and judge prompts' label (official and own wording give different numbers, never one folder)."""
    identity = {k: v for k, v in resolved.items() if k not in UNNAMING}
    if identity.get("answer_recipe") == "harness":  # the default names no run apart (older folders keep their hash)
        identity.pop("answer_recipe")
    if isinstance(identity.get("dataset"), dict):  # so do no errata
        identity["dataset"] = {k: v for k, v in identity["dataset"].items()
                               if not (k in ("errata", "errata_evidence") and not v)}
    for section in ("answerer", "judge"):
        if isinstance(identity.get(section), dict):
            identity[section] = endpoint_settings(identity[section])
    for section, strip in (("encoder", endpoint_settings), ("system", settings_identity)):
        value = identity.get(section)
        if isinstance(value, dict) and isinstance(value.get("params"), dict):
            identity[section] = {**value, "params": strip(value["params"])}
    if wording is not None:
        identity["wording"] = wording
    return identity
