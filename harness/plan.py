"""A run resolved once from its RunConfig: benchmark, system entry, prompts (checked ready),
caches, encoder and data. The stages (retrieval, qa, results) and the dry run (estimate) read it."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.batch_switch import write_time_note
from harness.config import RunConfig, SystemSpec
from harness.encoders import build_encoder
from harness.provenance import file_hashes, recording_reads
from harness.qa_checks import check_qa_ready
from harness.corrected_evidence import corrected_evidence, run_errata
from harness.stage_log import LOG
from harness.systems import SystemEntry, entry_for
from loaders import dataset_notes, load_dataset, prepare_data_dir
from memory_protocol import Episode
from memplusplus.encoder import CachedEncoder
from model_clients.chat_types import identity_fields as endpoint_settings
from model_clients.kvstore import EMBEDDINGS, LLM_REPLIES, RETRIEVALS, KVStore, run_cache

if TYPE_CHECKING:
    from harness.benchmarks import Benchmark
    from harness.prompts import ProtocolPrompts


def settings_identity(params: dict[str, Any]) -> dict[str, Any]:
    """A system's settings as far as they name its output: ``llm`` without execution-only fields."""
    if isinstance(params.get("llm"), dict):
        return {**params, "llm": endpoint_settings(params["llm"])}
    return dict(params)


def system_identity(spec: SystemSpec, entry: SystemEntry | None = None) -> dict[str, Any]:
    """What names a system's output: kind, k, settings and entry version (left out while 0, so
    keys made before versions existed still hold)."""
    version = (entry or entry_for(spec)).version
    return {"kind": spec.kind, "k": spec.k, "params": settings_identity(spec.params),
            **({"version": version} if version else {})}


@dataclass
class RunPlan:
    config: RunConfig
    benchmark: Benchmark
    entry: SystemEntry
    prompts: ProtocolPrompts | None  # None without an answerer
    episodes: list[Episode]
    data_root: Path | None
    data_files: dict[str, str]
    encoder: CachedEncoder
    retrievals: KVStore
    started: float  # perf_counter at the start of the run
    loaded: float  # ... once the data was loaded
    identity: dict[str, Any]  # what names the system's output (retrieval keys)
    ks: list[int]
    sessions: bool  # some episode is scored by the benchmark's own (session) scorer
    notes: dict[str, Any]  # known upstream quirks, questions without gold, questions dated before their documents
    errata: dict[str, Any] = field(default_factory=dict)  # qid -> Erratum (dataset.errata)

    def llm_cache(self) -> KVStore:
        return run_cache(self.config.store, LLM_REPLIES)

    def new_stats(self) -> dict[str, Any]:
        return {"episodes": len(self.episodes), "questions": 0, "retrieval_cache_hits": 0, "ingested_documents": 0,
                "dataset_notes": dict(self.notes)}


def build_plan(config: RunConfig) -> RunPlan:
    """Resolve ``config`` once; keys and prompt files fail here, before any data or retrieval."""
    started = time.perf_counter()
    dataset = config.dataset
    benchmark = dataset.describe()
    prompts = check_qa_ready(config, benchmark)
    note = write_time_note(config.system.name, config.write_time_batch)
    if note:
        print(note, file=sys.stderr)
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
    files = file_hashes(set(read_files), root, Path(config.cache_dir()) / "data_hashes.json")
    encoder = build_encoder(config.encoder.backend, config.encoder.params, cache=run_cache(config.store, EMBEDDINGS))
    entry = entry_for(config.system)
    return RunPlan(config, benchmark, entry, prompts, episodes, root, files, encoder, run_cache(config.store, RETRIEVALS),
                   started, loaded, system_identity(config.system, entry), sorted(set(dataset.ks)),
                   any(benchmark.scorer_for(ep) is not None for ep in episodes), notes, errata)
