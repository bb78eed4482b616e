"""Plain dataclasses for one run, built and checked from the composed Hydra config (Hydra stays in run.py)."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from harness.batch_switch import poll_interval, role_batch, switch, write_time_batch
from harness.benchmarks import Benchmark, benchmark_path, load_benchmark
from harness.encoders import check_encoder_keys, encoder_config
from harness.systems.registry import SystemSpec
from harness.env_settings import check_env_settings
from harness.validate import as_typed, check_booleans, check_model, int_setting, writable_folder
from memplusplus.encoder import DEFAULT_MODEL
from loaders.errata import check_errata
from memory_protocol import ConfigError, cache_root
from model_clients.chat_types import LLMConfig

PRINT_MODES = ("headline", "full")  # headline: the console-width table; full: every column
ANSWER_RECIPES = ("harness", "mem0")
RECIPE_KINDS = ("mem0", "zep")  # the systems mem0's evaluation answers with its own prompt


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
    errata: str | None = None  # corrected golds (loaders.errata): sound-gold score and ceiling columns
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
    """The embedding backend (``local`` MiniLM, ``onnx`` or ``openai``) and its settings."""

    backend: str = "local"
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StoreSpec:
    cache_dir: str = field(default_factory=lambda: str(cache_root()))
    results_dir: str = "outputs/runs"
    repair_cache: bool = False  # a cache entry failing its checksum is dropped and recomputed, not an error


def _section(cls, section: str, values: dict[str, Any]):
    unknown = sorted(set(values) - {f.name for f in fields(cls)})
    if unknown:
        raise ConfigError(f"{section}: unknown key(s) {unknown}; known keys are {sorted(f.name for f in fields(cls))}")
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


def _system(raw: dict[str, Any]) -> SystemSpec:
    from harness.systems import entry_for  # the registry imports this module

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
    return spec


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
    check_encoder_keys(spec.backend, values)
    for key in ("max_tokens", "batch_size"):  # 0 was a torch RuntimeError at the first embedding
        if values.get(key) is not None:
            # MiniLM has 512 positions: more was a torch RuntimeError too (a static table has no positions)
            bounded = key == "max_tokens" and spec.backend in ("local", "onnx") and values.get("model") == DEFAULT_MODEL
            int_setting(f"encoder.{key}", values[key], 1, 512 if bounded else None,
                        allowed=" (all-MiniLM-L6-v2 reads at most 512 word pieces)" if bounded else "")
    if spec.backend == "openai":  # a remote endpoint: checked like every other model endpoint
        check_model("encoder", values)
    encoder_config(spec.backend, spec.params)  # fail now, naming the key, not at the first embedding
    return spec


def _model(section: str, raw: dict[str, Any], prompt_folder: str | None = None) -> ModelSpec:
    check_model(section, raw, prompt_folder=prompt_folder)
    return _section(ModelSpec, section, raw)


def _roles(raw: dict[str, Any], benchmark: Benchmark, name: str, batch: bool | str, poll_s: float
           ) -> tuple[ModelSpec | None, ModelSpec | None]:
    """The answerer and judge: none without an answerer; a benchmark without a judge takes no answerer."""
    answerer_raw = dict(raw.pop("answerer", None) or {"name": "none"})
    judge_raw = raw.pop("judge", None)
    if answerer_raw.get("name") == "none":
        return None, None
    if benchmark.judge is None:
        raise ConfigError(f"dataset {name}: its benchmark has no judge (retrieval only); run it with answerer=none")
    answerer = _model("answerer", role_batch("answerer", answerer_raw, batch, poll_s))
    judge = (_model("judge", role_batch("judge", dict(judge_raw), batch, poll_s), benchmark.judge_prompt_folder)
             if judge_raw else None)
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
    write_time_batch: bool = False  # batch asked for system.llm: its calls still go live (harness.batch_switch)
    progress: bool = True
    run_name: str | None = None
    official_dir: str | None = None
    answer_recipe: str = "harness"  # harness | mem0 (mem0's answer prompt for Mem0 and Zep rows)
    print_mode: str = "headline"  # config key `print`

    @property
    def answerer_name(self) -> str:
        return self.answerer.name if self.answerer is not None else "none"

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> RunConfig:
        raw = dict(raw)
        raw.pop("hydra", None)
        check_env_settings(raw)  # a key pasted as answerer.api_key_env=sk-... never reaches a file
        check_booleans(raw)  # system.conjunctive=no is refused, naming the key: bool("no") ran it conjunctive
        system = _system(dict(raw.pop("system")))
        dataset = _dataset(dict(raw.pop("dataset")))
        benchmark = dataset.describe()  # an unknown benchmark module stops the run here, naming the key
        check_errata(dataset.errata, getattr(benchmark.loader, "name", str(benchmark.loader)), dataset.errata_evidence)
        batch = switch(raw.pop("batch", False))
        answerer, judge = _roles(raw, benchmark, dataset.name, batch, poll_interval(raw.pop("batch_poll_s", 60)))
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
            write_time_batch=write_time_batch(system.params, batch),
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
        return config

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def cache_dir(self) -> str:
        return os.path.expanduser(self.store.cache_dir)
