"""One run: load episodes, retrieve for every question (cached), score, summarise, store.

Retrieval for a question is looked up by (system config, encoder, corpus fingerprint, question)
before anything is built, so a repeated run neither embeds nor ingests; an episode is ingested
only when one of its questions misses the cache, and each answer is stored the moment it exists.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm import tqdm

from harness.batch_switch import write_time_note
from harness.config import RunConfig
from harness.console_table import console_table
from harness.stage_log import LOG
from harness.errors import RunInterrupted
from model_clients.call_counts import ModelCallTally, snapshot
from model_clients.chat_types import identity_fields as endpoint_settings
from model_clients.cost import CostEstimate
from model_clients.embedding_cost import EmbeddingEstimate, estimate_embeddings, texts_to_embed
from harness.encoders import build_encoder
from memplusplus.encoder import CachedEncoder, WouldEmbed
from harness.answering import display_name
from harness.qa import QAItem, check_qa_ready, qa_summary, run_qa
from harness.caches import EMBEDDINGS, LLM_REPLIES, RETRIEVALS, run_cache
from model_clients.kvstore import KVStore, stable_hash
from harness.benchmarks import Benchmark
from harness.explanations import explanation_depth, gold_docs
from harness.records import build_record, episode_metrics, ranked_ids
from harness.provenance import collect as collect_provenance, file_hashes, recording_reads
from harness.results import RunPaths, run_folder, write_run
from harness.retrieval_cache import corpus_fingerprint, hit_from_dict, hit_to_dict, retrieval_key
from harness.systems import RunContext, build_system, entry_for
from harness.write_time_estimate import approximate_context, estimate_write_time
from judges.aggregate import format_table, summarize
from judges.metrics.registry import retrieval_summary_keys
from loaders import dataset_notes, load_dataset, prepare_data_dir
from memory_protocol import Episode
from judges.metrics.budget_chars import BlockLayout
from memory_protocol.documents import Hit
from memplusplus.evidence import RenderedContext, render


@dataclass
class RunResult:
    paths: RunPaths | None
    summary: pd.DataFrame | None
    table: str
    records: list[dict[str, Any]]
    stats: dict[str, Any] = field(default_factory=dict)
    estimates: list[CostEstimate] = field(default_factory=list)
    embedding_estimate: EmbeddingEstimate | None = None  # estimate=true: texts still to embed, priced
    console: str = ""  # the table as the console prints it by default (headline columns, <= 120 characters a line)


def _settings_identity(params: dict[str, Any]) -> dict[str, Any]:
    """A system's settings as far as they name its output: its write-time model (``llm``) without
    the endpoint's execution-only fields."""
    if isinstance(params.get("llm"), dict):
        return {**params, "llm": endpoint_settings(params["llm"])}
    return dict(params)


def system_identity(config: RunConfig) -> dict[str, Any]:
    """What names a system's output: its kind, k, settings and its entry's version (left out while
    0, so keys made before versions existed still hold)."""
    spec = config.system
    version = entry_for(spec).version
    return {"kind": spec.kind, "k": spec.k, "params": _settings_identity(spec.params),
            **({"version": version} if version else {})}


def run_identity(resolved: dict[str, Any]) -> dict[str, Any]:
    """The resolved config as far as it names the run's results (its folder's hash): without where
    things are stored, progress bars, dry runs, and the endpoints' execution-only fields."""
    identity = {k: v for k, v in resolved.items()
                if k not in ("store", "progress", "estimate", "cache_only", "batch", "write_time_batch", "official_dir",
                             "print_mode")}
    if identity.get("answer_recipe") == "harness":  # the default names no run apart (older folders keep their hash)
        identity.pop("answer_recipe")
    for section in ("answerer", "judge"):
        if isinstance(identity.get(section), dict):
            identity[section] = endpoint_settings(identity[section])
    for section, strip in (("encoder", endpoint_settings), ("system", _settings_identity)):
        value = identity.get(section)
        if isinstance(value, dict) and isinstance(value.get("params"), dict):
            identity[section] = {**value, "params": strip(value["params"])}
    return identity


def run(config: RunConfig, overrides: list[str] | None = None) -> RunResult:
    """``overrides``: the command-line overrides (plain strings), recorded and used in the folder name."""
    started = time.perf_counter()
    dataset = config.dataset
    benchmark = dataset.describe()
    check_qa_ready(config)  # keys, prompt files: fail before retrieval, not after it
    note = write_time_note(config.system.name, config.write_time_batch)
    if note:
        print(note, file=sys.stderr)
    ks = sorted(set(dataset.ks))
    LOG.stage(f"{config.system.name} on {dataset.name}: loading the data")
    data_root = prepare_data_dir(benchmark.loader, dataset.data_dir, dataset.options, progress=config.progress)
    with recording_reads(data_root) as read_files:
        episodes = load_dataset(
            benchmark.loader, data_dir=data_root, limit=dataset.limit, categories=dataset.categories, **dataset.options
        )
    loaded = time.perf_counter()
    cache_dir = Path(config.cache_dir())
    data_files = file_hashes(set(read_files), data_root, cache_dir / "data_hashes.json")
    embeddings = run_cache(config, EMBEDDINGS)
    retrievals = run_cache(config, RETRIEVALS)
    encoder = build_encoder(config.encoder.backend, config.encoder.params, cache=embeddings)
    identity = system_identity(config)
    sessions = any(benchmark.scorer_for(ep) is not None for ep in episodes)
    items: list[QAItem] = []
    stats = {"episodes": len(episodes), "questions": 0, "retrieval_cache_hits": 0, "ingested_documents": 0,
             # known upstream quirks, questions without gold, questions dated before their documents (loaders.notes)
             "dataset_notes": dataset_notes(episodes).as_dict()}
    if config.estimate and entry_for(config.system).write_calls is not None:  # ingesting would spend the calls
        write = estimate_write_time(config, episodes, run_cache(config, LLM_REPLIES))
        answers = _price_answers_before_retrieval(config, episodes, cache_dir) if config.answerer else []
        return RunResult(None, None, "", [], stats, [write, *answers])
    embedding = None
    if config.estimate:
        # A dry run never embeds: it counts what a run would embed and prices the answers over
        # cached retrievals when every one of them is cached, else over contexts of the size retrieval gives.
        embedding = _embedding_estimate(config, episodes, encoder, retrievals, identity)
        encoder.cached_only = True
        if config.answerer is None:
            return RunResult(None, None, "", [], stats, [], embedding)
        if embedding.to_embed:
            return RunResult(None, None, "", [], stats, _price_answers_before_retrieval(config, episodes, cache_dir), embedding)
    calls = ModelCallTally()
    progress = tqdm(episodes, desc=f"{config.system.name} on {dataset.name}", unit="episode", disable=not config.progress)
    done = 0
    LOG.begin("retrieval", len(episodes), "episodes")
    try:
        for done, episode in enumerate(progress):
            items += _run_episode(config, benchmark, episode, encoder, retrievals, identity, ks, sessions, stats, calls)
            LOG.tick("retrieval", done + 1, len(episodes), "episodes")
    except WouldEmbed:  # a dry run whose counted texts were cached, yet a system asked for another one
        progress.close()
        return RunResult(None, None, "", [], stats, _price_answers_before_retrieval(config, episodes, cache_dir), embedding)
    except KeyboardInterrupt:
        progress.close()
        raise RunInterrupted(f"interrupted after {done}/{len(episodes)} episodes; re-run to resume") from None
    records = [item.record for item in items]

    metric_keys = retrieval_summary_keys(ks, sessions)
    qa = None
    if config.answerer is not None:
        LOG.stage(f"answers and judging: {len(items)} questions")
        qa = run_qa(config, items, run_cache(config, LLM_REPLIES))
        if config.estimate:
            return RunResult(None, None, "", records, stats, qa.estimates, embedding)
        stats.update(qa.stats)
        metric_keys = qa.metric_keys + metric_keys
    finished = time.perf_counter()

    rows = [{"category": r["category"], **r["metrics"]} for r in records]
    excluded = benchmark.overall_excludes(answered=qa is not None)
    summary = summarize(rows, metric_keys, exclude_from_overall=excluded)
    if qa is not None:
        summary = qa_summary(summary, qa)
    label = config.run_name or config.system.name + (f"__{config.answerer_name}" if config.answerer else "")
    stage = f"answers by {display_name(config.answerer)}, judged {qa.runs}x by {display_name(config.judge)}" if qa else "retrieval"
    plumbing = " [PLUMBING CHECK: local SmolLM2, not a model score]" if stats.get("plumbing") else ""
    wording = qa.prompts.title_note if qa is not None and qa.prompts is not None else ""
    budget = f", budget={dataset.context_budget}" if dataset.context_budget is not None else ""  # no budget: no cut, nothing to show
    title = f"{label} on {dataset.name}: {stage} (k={config.system.k}{budget}){plumbing}{wording}"
    table = f"{title}\n\n{format_table(summary)}"
    console = console_table(summary, title, qa.metric if qa is not None else None,
                            benchmark.extra_metrics if qa is not None else (),
                            system_k=max(config.system.k, dataset.metric_depth or 0)).text
    stats.update(
        {
            **encoder.stats(),
            "seconds_load": round(loaded - started, 3),
            "seconds_total": round(finished - started, 3),
            "mean_read_chars": sum(r["read_chars"] for r in records) / max(len(records), 1),
            "model_calls": calls.as_dict(),
        }
    )
    resolved = config.as_dict()
    extra: dict[str, Any] = {"stats": stats, "provenance": collect_provenance(overrides, data_root, data_files)}
    identity = run_identity(resolved)
    if qa is not None and qa.prompts is not None:
        # Official and own wording give different numbers: never the same run folder.
        extra.update(wording=qa.prompts.label, answer_wording=qa.prompts.answer_source,
                     judge_wording=qa.prompts.judge_source, answer_recipe=qa.prompts.recipe, prompts=qa.prompts.record())
        identity["wording"] = qa.prompts.label
    paths = run_folder(config.store.results_dir, dataset.name, label, stable_hash(identity), overrides)
    write_run(paths, resolved, records, summary, table, extra)
    return RunResult(paths, summary, table, records, stats, console=console)


def _price_answers_before_retrieval(config: RunConfig, episodes: list[Episode], cache_dir: Path) -> list[CostEstimate]:
    """A dry run that cannot retrieve: answers and grades priced over contexts of the size
    retrieval would give, cut from the episode's own documents (exact call counts, approximate
    prompt tokens)."""
    items = [QAItem(q, approximate_context(config, ep), {"metrics": {}}) for ep in episodes for q in ep.questions]
    return run_qa(config, items, run_cache(config, LLM_REPLIES)).estimates


def _embedding_estimate(config, episodes, encoder, retrievals, identity):
    """What a dry run must embed first (texts of episodes not fully retrieved), priced."""
    def needs_retrieval(episode: Episode) -> list:
        fingerprint = corpus_fingerprint(episode.documents)
        keys = {q.qid: retrieval_key(identity, encoder.identity, fingerprint, q) for q in episode.questions}
        found = retrievals.get_many(keys.values())
        return [q for q in episode.questions if keys[q.qid] not in found]

    rule = entry_for(config.system).embed_rule(config.system.params)
    return estimate_embeddings(encoder, texts_to_embed(rule, episodes, needs_retrieval, encoder), approximate=rule.approximate)


def _run_episode(
    config: RunConfig,
    benchmark: Benchmark,
    episode: Episode,
    encoder: CachedEncoder,
    retrievals: KVStore,
    identity: dict[str, Any],
    ks: list[int],
    sessions: bool,
    stats: dict[str, Any],
    calls: ModelCallTally,
) -> list[QAItem]:
    fingerprint = corpus_fingerprint(episode.documents)
    keys = {q.qid: retrieval_key(identity, encoder.identity, fingerprint, q) for q in episode.questions}
    # A deeper ranking for the metrics only (a benchmark scoring sessions widens k), cached apart.
    depth = config.dataset.metric_depth or 0
    deep_identity = {**identity, "metric_depth": depth}
    deep_keys = {q.qid: retrieval_key(deep_identity, encoder.identity, fingerprint, q) for q in episode.questions} if depth > config.system.k else {}
    # Where each gold document ranked in every leg (systems that report it), cached apart too.
    explain_depth = explanation_depth(ks, config.dataset.metric_depth)
    diag_keys = ({q.qid: retrieval_key({**identity, "diagnose_depth": explain_depth, "gold": list(q.evidence_ids)},
                                       encoder.identity, fingerprint, q) for q in episode.questions}
                 if entry_for(config.system).diagnoses else {})
    wanted = [*keys.values(), *deep_keys.values(), *diag_keys.values()]
    cached = {key: json.loads(value) for key, value in retrievals.get_many(wanted).items()}
    stats["retrieval_cache_hits"] += sum(1 for key in keys.values() if key in cached)
    missing = [q for q in episode.questions
               if any(key not in cached for key in (keys[q.qid], deep_keys.get(q.qid), diag_keys.get(q.qid)) if key)]
    if missing:
        context = RunContext(config.system, encoder, config.cache_dir(), run_cache(config, LLM_REPLIES),
                             config.cache_only, config.progress)
        built = build_system(context)
        system = built.memory
        try:  # close() stops a library's proxy and store (Kuzu, Qdrant) also on an error or Ctrl-C
            before = snapshot(built.client, encoder)
            system.ingest(episode.documents, show_progress=config.progress)
            after = snapshot(built.client, encoder)
            calls.add_write(before, after, len(episode.documents))
            stats["ingested_documents"] += len(episode.documents)
            _retrieve_missing(config, system, missing, keys, deep_keys, depth, cached, retrievals, episode.episode_id)
            calls.add_read(after, snapshot(built.client, encoder), len(missing))
            # After the read-time count: the explanation's own legs are the harness's, not the system's read.
            _diagnose_missing(system, missing, diag_keys, explain_depth, cached, retrievals)
        finally:
            built.close()
    by_id = {doc.doc_id: doc for doc in episode.documents}
    scorer = benchmark.scorer_for(episode) if sessions else None
    all_hits = [[hit_from_dict(item, by_id) for item in cached[keys[q.qid]]] for q in episode.questions]
    contexts, layouts = _contexts(config, all_hits)
    deeper = [cached[deep_keys[q.qid]] if q.qid in deep_keys else None for q in episode.questions]
    lengths = {doc.doc_id: len(doc.text) for doc in episode.documents}
    metrics = episode_metrics(episode.questions, all_hits, contexts, ks, scorer, deeper, lengths, layouts)
    items = []
    for question, q_hits, q_deeper, context, q_metrics in zip(episode.questions, all_hits, deeper, contexts, metrics):
        diagnosis = cached[diag_keys[question.qid]] if question.qid in diag_keys else None
        golds = gold_docs(question, by_id, q_hits, q_deeper, context, explain_depth,
                          diagnosis["placements"] if diagnosis else None)
        record = build_record(episode, question, q_hits, context, q_metrics, golds, explain_depth,
                              diagnosis["leg_sizes"] if diagnosis else None)
        items.append(QAItem(question, context.text, record, q_hits))
        stats["questions"] += 1
    return items


def _contexts(config: RunConfig, all_hits: list[list[Hit]]) -> tuple[list[RenderedContext], list[list[BlockLayout]] | None]:
    """Each question's context: the harness's ranked blocks, or the system's own layout (Mem0, Zep)
    with where each hit's text sits in it."""
    budget = config.dataset.context_budget
    layout = entry_for(config.system).context
    if layout is None:
        return [render(h, budget) for h in all_hits], None
    pairs = [layout(h, budget) for h in all_hits]
    return [context for context, _ in pairs], [
        [BlockLayout(line.start, line.length, tuple(line.sources)) for line in placed] for _, placed in pairs
    ]


def _retrieve_missing(config, system, missing, keys, deep_keys, depth, cached, retrievals, episode_id) -> None:
    """Retrieve (and cache at once) every question the retrieval cache did not hold."""
    many = len(missing) > 50 and config.progress
    for question in tqdm(missing, desc=f"  {episode_id}", unit="q", leave=False, disable=not many):
        if keys[question.qid] not in cached:
            hits = system.retrieve(question.text, question.as_of, config.system.k)
            payload = [hit_to_dict(hit) for hit in hits]
            retrievals.put(keys[question.qid], json.dumps(payload).encode("utf-8"))
            cached[keys[question.qid]] = payload
        if question.qid in deep_keys and deep_keys[question.qid] not in cached:
            deep = ranked_ids(system.retrieve(question.text, question.as_of, depth))
            retrievals.put(deep_keys[question.qid], json.dumps(deep).encode("utf-8"))
            cached[deep_keys[question.qid]] = deep


def _diagnose_missing(system, missing, diag_keys, depth, cached, retrievals) -> None:
    """Ask the system where each missing question's gold documents ranked (and cache it at once)."""
    for question in missing:
        key = diag_keys.get(question.qid)
        if key is None or key in cached:
            continue
        payload = system.diagnose(question.text, question.as_of, question.evidence_ids, depth).as_dict()
        retrievals.put(key, json.dumps(payload).encode("utf-8"))
        cached[key] = payload
