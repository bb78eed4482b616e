"""A run resolved once from its RunConfig: benchmark, system entry, prompts (checked ready),
caches, encoder and data. The stages (retrieval, qa, results) and the dry run (estimate) read it."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.batch_switch import write_time_note
from harness.caches import EMBEDDINGS, LLM_REPLIES, RETRIEVALS, run_cache
from harness.config import RunConfig, SystemSpec
from harness.encoders import build_encoder
from harness.provenance import file_hashes, recording_reads
from harness.qa_checks import check_qa_ready
from harness.stage_log import LOG
from harness.systems import SystemEntry, entry_for
from loaders import dataset_notes, load_dataset, prepare_data_dir
from memory_protocol import Episode
from memplusplus.encoder import CachedEncoder
from model_clients.chat_types import identity_fields as endpoint_settings
from model_clients.kvstore import KVStore

if TYPE_CHECKING:
    from harness.benchmarks import Benchmark
    from harness.wording import ProtocolPrompts


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
    started: float  # perf_counter at the start of the run
    loaded: float  # ... once the data was loaded
    identity: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def encoder(self) -> CachedEncoder:
        spec = self.config.encoder
        return build_encoder(spec.backend, spec.params, cache=run_cache(self.config, EMBEDDINGS))

    @cached_property
    def retrievals(self) -> KVStore:
        return run_cache(self.config, RETRIEVALS)

    @cached_property
    def sessions(self) -> bool:
        """Some episode is scored by the benchmark's own (session) scorer."""
        return any(self.benchmark.scorer_for(ep) is not None for ep in self.episodes)

    @property
    def ks(self) -> list[int]:
        return sorted(set(self.config.dataset.ks))

    def llm_cache(self) -> KVStore:
        return run_cache(self.config, LLM_REPLIES)

    def new_stats(self) -> dict[str, Any]:
        # dataset_notes: known upstream quirks, questions without gold, questions dated before their documents
        return {"episodes": len(self.episodes), "questions": 0, "retrieval_cache_hits": 0, "ingested_documents": 0,
                "dataset_notes": dataset_notes(self.episodes).as_dict()}


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
    root = prepare_data_dir(dataset.name, dataset.data_dir, dataset.options, progress=config.progress)
    with recording_reads(root) as read_files:
        episodes = load_dataset(benchmark.loader, data_dir=root, limit=dataset.limit, categories=dataset.categories,
                                **dataset.options)
    loaded = time.perf_counter()
    files = file_hashes(set(read_files), root, Path(config.cache_dir()) / "data_hashes.json")
    entry = entry_for(config.system)
    return RunPlan(config, benchmark, entry, prompts, episodes, root, files, started, loaded,
                   system_identity(config.system, entry))
