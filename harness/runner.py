"""One run: load episodes, retrieve for every question (cached), score, summarise, store.

Retrieval for a question is looked up by (system config, encoder, corpus fingerprint, question)
before anything is built, so a repeated run neither embeds nor ingests; an episode is ingested
only when one of its questions misses the cache, and each answer is stored the moment it exists.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm import tqdm

from harness.config import RunConfig
from harness.models.cost import CostEstimate
from harness.encoders import build_encoder
from memplusplus.encoder import CachedEncoder
from harness.qa import QAItem, add_judge_columns, run_qa
from harness.kvstore import KVStore, stable_hash
from harness.records import build_record, question_metrics
from harness.results import RunPaths, run_folder, write_run
from harness.retrieval_cache import corpus_fingerprint, hit_from_dict, hit_to_dict, retrieval_key
from harness.systems import build_system
from judges.aggregate import format_table, summarize
from loaders import load_dataset
from loaders.schema import Episode
from memplusplus.evidence import render


@dataclass
class RunResult:
    paths: RunPaths | None
    summary: pd.DataFrame | None
    table: str
    records: list[dict[str, Any]]
    stats: dict[str, Any] = field(default_factory=dict)
    estimates: list[CostEstimate] = field(default_factory=list)


def summary_metric_keys(ks: list[int], sessions: bool) -> list[str]:
    """Document ranks at the dataset's fixed ks, then over all retrieved, sessions, in budget."""
    keys = []
    for k in ks:
        keys += [f"recall_any@{k}", f"recall_all@{k}", f"ndcg@{k}"]
    keys += ["recall_any@all", "recall_all@all"]
    if sessions:
        keys += [f"session_recall_any@{ks[-1]}", f"session_recall_all@{ks[-1]}"]
    return keys + ["in_budget_recall"]


def system_identity(config: RunConfig) -> dict[str, Any]:
    spec = config.system
    return {"kind": spec.kind, "k": spec.k, "params": spec.params}


def run(config: RunConfig) -> RunResult:
    started = time.perf_counter()
    dataset = config.dataset
    ks = sorted(set(dataset.ks))
    episodes = load_dataset(
        dataset.name, data_dir=dataset.data_dir, limit=dataset.limit, categories=dataset.categories, **dataset.options
    )
    loaded = time.perf_counter()
    cache_dir = Path(config.cache_dir())
    embeddings = KVStore(cache_dir / "embeddings.sqlite")
    retrievals = KVStore(cache_dir / "retrieval.sqlite")
    encoder = build_encoder(config.encoder.backend, config.encoder.params, cache=embeddings)
    identity = system_identity(config)
    sessions = any("evidence_sessions" in q.meta for ep in episodes for q in ep.questions)
    items: list[QAItem] = []
    stats = {"episodes": len(episodes), "questions": 0, "retrieval_cache_hits": 0, "ingested_documents": 0}
    progress = tqdm(episodes, desc=f"{config.system.name} on {dataset.name}", unit="episode", disable=not config.progress)
    for episode in progress:
        items += _run_episode(config, episode, encoder, retrievals, identity, ks, sessions, stats)
    records = [item.record for item in items]

    metric_keys = summary_metric_keys(ks, sessions)
    qa = None
    if config.answerer is not None:
        qa = run_qa(config, items, KVStore(cache_dir / "llm.sqlite"))
        if config.estimate:
            return RunResult(None, None, "", records, stats, qa.estimates)
        stats.update(qa.stats)
        qa_keys = [qa.metric] + [f"{qa.metric}_run{run}" for run in range(qa.runs)]
        metric_keys = qa_keys + (["f1", "bleu1"] if dataset.name == "locomo" else []) + metric_keys
    finished = time.perf_counter()

    rows = [{"category": r["category"], **r["metrics"]} for r in records]
    summary = summarize(rows, metric_keys, exclude_from_overall=dataset.exclude_from_overall)
    if qa is not None:
        summary = add_judge_columns(summary, qa.metric, qa.runs)
        if dataset.name == "longmemeval_s":
            summary = _with_task_average(summary, qa.metric)
    label = config.run_name or config.system.name + (f"__{config.answerer_name}" if config.answerer else "")
    stage = f"answers by {config.answerer_name}, judged {qa.runs}x by {config.judge.name}" if qa else "retrieval"
    plumbing = " [PLUMBING CHECK: local SmolLM2, not a model score]" if stats.get("plumbing") else ""
    title = f"{label} on {dataset.name}: {stage} (k={config.system.k}, budget={dataset.context_budget}){plumbing}"
    table = f"{title}\n\n{format_table(summary)}"
    stats.update(
        {
            "embedded_texts": encoder.computed,
            "embedding_cache_hits": encoder.cache_hits,
            **({"embedding_inputs_clamped": encoder.clamped} if hasattr(encoder, "clamped") else {}),
            "seconds_load": round(loaded - started, 3),
            "seconds_total": round(finished - started, 3),
            "mean_read_chars": sum(r["read_chars"] for r in records) / max(len(records), 1),
        }
    )
    resolved = config.as_dict()
    paths = run_folder(config.store.results_dir, dataset.name, label, stable_hash({k: v for k, v in resolved.items() if k not in ("store", "progress", "estimate", "cache_only")}))
    write_run(paths, resolved, records, summary, table, {"stats": stats})
    return RunResult(paths, summary, table, records, stats)


def _with_task_average(summary: pd.DataFrame, metric: str) -> pd.DataFrame:
    """LongMemEval's task-averaged accuracy: the unweighted mean over question types."""
    types = [name for name in summary.index if not str(name).startswith("overall")]
    row = {column: float("nan") for column in summary.columns}
    row.update({"n": int(summary.loc[types, "n"].sum()), metric: float(summary.loc[types, metric].mean())})
    return pd.concat([summary, pd.DataFrame([row], index=["task_averaged"])])


def _run_episode(
    config: RunConfig,
    episode: Episode,
    encoder: CachedEncoder,
    retrievals: KVStore,
    identity: dict[str, Any],
    ks: list[int],
    sessions: bool,
    stats: dict[str, Any],
) -> list[QAItem]:
    fingerprint = corpus_fingerprint(episode.documents)
    keys = {q.qid: retrieval_key(identity, encoder.identity, fingerprint, q) for q in episode.questions}
    cached = {key: json.loads(value) for key, value in retrievals.get_many(keys.values()).items()}
    stats["retrieval_cache_hits"] += sum(1 for key in keys.values() if key in cached)
    missing = [q for q in episode.questions if keys[q.qid] not in cached]
    if missing:
        system = build_system(config.system, encoder, config.cache_dir())
        system.ingest(episode.documents, show_progress=config.progress and len(episode.documents) > 2000)
        stats["ingested_documents"] += len(episode.documents)
        many = len(missing) > 50 and config.progress
        for question in tqdm(missing, desc=f"  {episode.episode_id}", unit="q", leave=False, disable=not many):
            hits = system.retrieve(question.text, question.as_of, config.system.k)
            payload = [hit_to_dict(hit) for hit in hits]
            retrievals.put(keys[question.qid], json.dumps(payload).encode("utf-8"))
            cached[keys[question.qid]] = payload
    by_id = {doc.doc_id: doc for doc in episode.documents}
    session_of = {doc.doc_id: doc.thread or doc.doc_id for doc in episode.documents} if sessions else None
    items = []
    for question in episode.questions:
        hits = [hit_from_dict(item, by_id) for item in cached[keys[question.qid]]]
        context = render(hits, config.dataset.context_budget)
        metrics = question_metrics(question, hits, context, ks, session_of)
        items.append(QAItem(question, context.text, build_record(episode, question, hits, context, metrics)))
        stats["questions"] += 1
    return items
