"""A run resolved once from its RunConfig: benchmark, system entry, prompts (checked ready: a missing
key or broken prompt file stops the run in one line, not after an hour of embedding), data, caches and
encoder. The stages (retrieval, qa, results) and the dry run (estimate) read it."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from harness.config import ENCODERS, ModelSpec, RunConfig, SystemSpec, run_identity, settings_identity
from harness.corrected_evidence import corrected_evidence, run_errata
from harness.prompts import choose_prompts, display_name
from harness.provenance import collect as collect_provenance, recording_reads
from harness.stage_log import LOG
from harness.systems import SystemEntry, entry_for
from loaders import dataset_notes, load_dataset, prepare_data_dir
from memory_protocol import ConfigError, Episode
from memplusplus.encoder import CachedEncoder, EmbeddingCache
from model_clients.kvstore import EMBEDDINGS, LLM_REPLIES, RETRIEVAL_COSTS, RETRIEVALS, KVStore, embedding_store
from model_clients.model_listing import check_model_offered

if TYPE_CHECKING:
    from harness.benchmarks import Benchmark
    from harness.prompts import ProtocolPrompts


def system_identity(spec: SystemSpec, entry: SystemEntry | None = None) -> dict[str, Any]:
    """What names a system's output: kind, k, settings and entry version (left out while 0, so
    keys made before versions existed still hold)."""
    version = (entry or entry_for(spec)).version
    return {"kind": spec.kind, "k": spec.k, "params": settings_identity(spec.params),
            **({"version": version} if version else {})}


def build_encoder(backend: str, params: dict[str, Any], cache: EmbeddingCache | None) -> CachedEncoder:
    """The run's embedding backend (its settings were checked with the config)."""
    settings_class, encoder_class = ENCODERS[backend]
    return encoder_class(settings_class(**params), cache=cache)


@dataclass
class RunPlan:
    config: RunConfig
    benchmark: Benchmark
    entry: SystemEntry
    prompts: ProtocolPrompts | None  # None without an answerer
    episodes: list[Episode]
    data_root: Path | None
    provenance: dict[str, Any]  # code, packages, command and the data files read, hashed (harness/provenance.py)
    encoder: CachedEncoder
    encoder_identity: str  # what names the encoder's vectors (retrieval keys)
    retrievals: KVStore
    retrieval_costs: KVStore  # each ranking's seconds and its episode's store size (harness/retrieval.py)
    started: float  # perf_counter at the start of the run
    loaded: float  # ... once the data was loaded
    identity: dict[str, Any]  # what names the system's output (retrieval keys)
    resolved: dict[str, Any]  # the whole config, as the run folder's config.json records it
    run_identity: dict[str, Any]  # what names the run's results (its folder's hash)
    ks: list[int]
    sessions: bool  # some episode is scored by the benchmark's own (session) scorer
    notes: dict[str, Any]  # known upstream quirks, questions without gold, questions dated before their documents
    errata: dict[str, Any] = field(default_factory=dict)  # qid -> Erratum (dataset.errata)
    stats: dict[str, Any] = field(default_factory=dict)  # the run's counts, filled in by the stages
    overrides: list[str] | None = None  # the command line's (plain strings): recorded, and in the folder's name

    @cached_property
    def llm_cache(self) -> KVStore:
        """The LLM replies' cache, opened once, at its first use (a retrieval-only run never opens it)."""
        return KVStore(Path(self.config.cache_dir()) / LLM_REPLIES, repair=self.config.store.repair_cache)


def build_plan(config: RunConfig, overrides: list[str] | None = None) -> RunPlan:
    """Resolve ``config`` once; keys and prompt files fail here, before any data or retrieval.
    ``overrides``: the command line's, recorded in the provenance."""
    started = time.perf_counter()
    dataset, benchmark, entry = config.dataset, config.benchmark, config.entry
    prompts = check_qa_ready(config, benchmark)
    note = write_time_note(config.system.name, config.write_time_batch)
    if note:
        print(note, file=sys.stderr)
    identity, cache_dir = system_identity(config.system, entry), Path(config.cache_dir())
    resolved = config.as_dict()
    named_by = run_identity(resolved, prompts.label if prompts is not None else None)
    LOG.stage(f"{config.system.name} on {dataset.name}: loading the data")
    root = prepare_data_dir(benchmark.loader, dataset.data_dir, dataset.options, progress=config.progress)
    with recording_reads(root) as read_files:
        episodes = load_dataset(benchmark.loader, data_dir=root, limit=dataset.limit, categories=dataset.categories,
                                **dataset.options)
    errata = run_errata(dataset.errata, root, dataset.data_dir) if dataset.errata else {}
    if dataset.errata_evidence:
        episodes = corrected_evidence(episodes, errata)
    loaded = time.perf_counter()
    notes = dataset_notes(episodes).as_dict()
    provenance = collect_provenance(overrides, root, set(read_files), cache_dir / "data_hashes.json")
    repair = config.store.repair_cache
    encoder = build_encoder(config.encoder.backend, config.encoder.params,
                            embedding_store(cache_dir / EMBEDDINGS, repair=repair))
    scorer = benchmark.official_scorer
    sessions = scorer is not None and any(scorer(ep) is not None for ep in episodes)
    stats = {"episodes": len(episodes), "questions": 0, "retrieval_cache_hits": 0, "ingested_documents": 0,
             "dataset_notes": dict(notes)}
    return RunPlan(config, benchmark, entry, prompts, episodes, root, provenance, encoder, encoder.identity,
                   KVStore(cache_dir / RETRIEVALS, repair=repair), KVStore(cache_dir / RETRIEVAL_COSTS, repair=repair),
                   started, loaded, identity, resolved, named_by,
                   sorted(set(dataset.ks)), sessions, notes, errata, stats, overrides)


def write_time_note(system_name: str, asked: bool) -> str | None:
    """The stderr line when batch was asked for write-time calls, which go live."""
    if not asked:
        return None
    return (f"batch: the write-time calls of {system_name} (system.llm) are made one by one "
            "while ingesting: sent live")


def _is_local(url: str | None) -> bool:
    host = (urlparse(url).hostname or "") if url else ""
    return host == "localhost" or host.startswith("127.") or host in ("::1", "0.0.0.0")


def _check_key(role: str, spec: ModelSpec, answerer: ModelSpec, offline: bool) -> None:
    if not spec.api_key_env or spec.local or offline or _is_local(spec.base_url) or os.environ.get(spec.api_key_env):
        return
    options = ["export it", "use estimate=true (dry run) or cache_only=true (replay)"]
    if spec.base_url:  # only a server of one's own may need no key; the provider's default endpoint always does
        options.append(f"{role}.api_key_env=null for a server that needs no key")
    hint = ", or ".join(options)
    if role == "judge" and (answerer.local is not None or _is_local(answerer.base_url)):
        # the default judge is hosted: settings that keep a run with a local answerer offline
        model = answerer.model if answerer.local is None else "<model>"
        url = answerer.base_url if answerer.local is None and answerer.base_url else "http://host:port/v1"
        hint = (f"the answerer is local, so the judge can be too: judge=openai_compatible judge.model={model} "
                f"judge.base_url={url} (any OpenAI-compatible server), or judge=smollm2-local (a plumbing check, "
                f"not a grade); else {hint}")
    raise ConfigError(f"{role} {display_name(spec)} needs an API key in ${spec.api_key_env}, which is not set; {hint}")


def check_qa_ready(config: RunConfig, benchmark: Benchmark | None = None) -> ProtocolPrompts | None:
    """The prompts the QA stage will send (None without an answerer); a one-line ConfigError when
    it cannot run: a missing API key (not needed locally, with ``cache_only`` or ``estimate``), a
    model its endpoint does not list, a broken prompt file, a batch provider that cannot serve a
    role, or the benchmark's own check (e.g. data an answer metric needs)."""
    answerer, judge, offline = config.answerer, config.judge, config.cache_only or config.estimate
    if answerer is None:
        return None
    benchmark = benchmark or config.benchmark
    roles = [("answerer", answerer)] + ([("judge", judge)] if judge is not None else [])
    for role, spec in roles:
        _check_key(role, spec, answerer, offline)
    # a broken prompt file or a changed official file stops the run here
    prompts = choose_prompts(benchmark, answerer, judge, recipe=config.answer_recipe, system_kind=config.system.kind,
                             context_budget=config.dataset.context_budget, official_dir=config.official_dir)
    if not offline:
        prompts.check_batchable(answerer, judge, answerer.max_tokens or config.dataset.answer_max_tokens)
        for role, spec in roles:
            if spec.local is None:  # a server the harness starts serves the configured name
                check_model_offered(spec, role)  # one GET /models per endpoint: a wrong name stops here
    if benchmark.check_ready is not None:
        benchmark.check_ready()
    return prompts
