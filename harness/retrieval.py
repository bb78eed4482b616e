"""The retrieval stage: every question's ranking, cached by (system identity, encoder, corpus
fingerprint, question) and looked up before anything is built, so a repeated run neither embeds
nor ingests; an episode is ingested only when one of its questions misses the cache.

What a ranking cost is kept beside it (``retrieval_costs.sqlite``): its ``system.retrieve`` seconds
under the ranking's key and the episode's store size after ingest, so a repeated run reports the
figures measured when they were computed (one missing never forces a retrieval)."""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict
from collections.abc import Callable, Sequence
from typing import Any

from tqdm import tqdm

from harness.caches import RETRIEVAL_COSTS, run_cache
from harness.config import RunConfig
from harness.errors import RunInterrupted
from harness.explanations import explanation_depth, gold_docs
from harness.plan import RunPlan
from harness.qa import QAItem
from harness.records import build_record, episode_metrics, ranked_ids
from harness.stage_log import LOG
from harness.systems import RunContext
from judges.metrics.budget_chars import BlockLayout
from memory_protocol import Document, Episode, Hit, Question, store_size
from memplusplus.evidence import RenderedContext, render
from model_clients.call_counts import ModelCallTally, snapshot
from model_clients.kvstore import KVStore, stable_hash
from model_clients.token_count import TokenCounter, encoding_name_for

# Bump when retrieval code changes in a way that changes results, so old cache entries are ignored.
RETRIEVAL_VERSION = 2


def corpus_fingerprint(documents: Sequence[Document]) -> str:
    digest = hashlib.sha256()
    for doc in documents:
        for part in (doc.doc_id, doc.text, doc.author or "", doc.date.isoformat() if doc.date else "", doc.thread or ""):
            digest.update(part.encode("utf-8"))
            digest.update(b"\x1f")
        digest.update(b"\x1e")
    return digest.hexdigest()


def retrieval_key(system: dict[str, Any], encoder_identity: str, fingerprint: str, question: Question) -> str:
    return stable_hash({"version": RETRIEVAL_VERSION, "system": system, "encoder": encoder_identity, "corpus": fingerprint,
                        "question": [question.qid, question.text, question.as_of.isoformat() if question.as_of else None]})


def question_keys(plan: RunPlan, episode: Episode, extra: Callable[[Question], dict[str, Any]] | None = None,
                  fingerprint: str | None = None) -> dict[str, str]:
    """Each question's cache key; ``extra`` adds to the system identity (a deeper or diagnostic ranking)."""
    fingerprint = fingerprint or corpus_fingerprint(episode.documents)
    return {q.qid: retrieval_key({**plan.identity, **(extra(q) if extra else {})}, plan.encoder.identity, fingerprint, q)
            for q in episode.questions}


def hit_to_dict(hit: Hit) -> dict[str, Any]:
    """A hit without its text when it is one stored document (looked up again); a chunk keeps its text."""
    item: dict[str, Any] = {"doc_id": hit.doc_id, "score": hit.score, "leg_ranks": hit.leg_ranks, "reserve": hit.reserve}
    if hit.sources:
        item["sources"] = [list(pair) for pair in hit.sources]
        item["text"] = hit.text
    return item


def hit_from_dict(item: dict[str, Any], documents: dict[str, Document]) -> Hit:
    sources = tuple((str(doc_id), int(offset)) for doc_id, offset in item.get("sources", ()))
    if sources:
        return Hit(item["doc_id"], item["text"], None, None, item["score"], dict(item["leg_ranks"]), item["reserve"], None, sources)
    doc = documents[item["doc_id"]]
    return Hit(doc.doc_id, doc.text, doc.date, doc.author, item["score"], dict(item["leg_ranks"]), item["reserve"], doc.thread,
               evidence=doc.evidence)


def retrieve(plan: RunPlan, stats: dict[str, Any], calls: ModelCallTally) -> list[QAItem]:
    """Every episode's questions as QA items (records with metrics). A dry run's encoder raises
    WouldEmbed out of here; Ctrl-C becomes RunInterrupted."""
    config, episodes = plan.config, plan.episodes
    progress = tqdm(episodes, desc=f"{config.system.name} on {config.dataset.name}", unit="episode",
                    disable=not config.progress)
    items: list[QAItem] = []
    done = 0
    costs, counter = run_cache(config.store, RETRIEVAL_COSTS), read_counter(config)
    if counter is not None:
        stats["read_tokenizer"] = f"{counter.encoding_name} ({counter.model})"
    LOG.begin("retrieval", len(episodes), "episodes")
    try:
        for done, episode in enumerate(progress):
            items += _episode(plan, episode, stats, calls, costs, counter)
            LOG.tick("retrieval", done + 1, len(episodes), "episodes")
    except KeyboardInterrupt:
        raise RunInterrupted(f"interrupted after {done}/{len(episodes)} episodes; re-run to resume") from None
    finally:
        progress.close()
    return items


def read_counter(config: RunConfig) -> TokenCounter | None:
    """The answerer's own tokenizer (an OpenAI model's, offline); None: no answerer, or not ours to count."""
    model = config.answerer.model if config.answerer is not None else None
    return TokenCounter(model) if model and encoding_name_for(model) else None


def _episode(plan: RunPlan, episode: Episode, stats: dict[str, Any], calls: ModelCallTally, costs: KVStore,
             counter: TokenCounter | None) -> list[QAItem]:
    config, retrievals = plan.config, plan.retrievals
    fingerprint = corpus_fingerprint(episode.documents)
    keys = question_keys(plan, episode, fingerprint=fingerprint)
    size_key = stable_hash({"store_size": plan.identity, "encoder": plan.encoder.identity, "corpus": fingerprint})
    measured = {key: json.loads(value) for key, value in costs.get_many([*keys.values(), size_key]).items()}
    # A deeper ranking for the metrics only (a benchmark scoring sessions widens k), cached apart.
    depth = config.dataset.metric_depth or 0
    deep_keys = (question_keys(plan, episode, lambda q: {"metric_depth": depth}, fingerprint)
                 if depth > config.system.k else {})
    # Where each gold document ranked in every leg (systems that report it), cached apart too.
    explain_depth = explanation_depth(plan.ks, config.dataset.metric_depth)
    diag_keys = (question_keys(plan, episode, lambda q: {"diagnose_depth": explain_depth, "gold": list(q.evidence_ids)},
                               fingerprint) if plan.entry.diagnoses else {})
    wanted = [*keys.values(), *deep_keys.values(), *diag_keys.values()]
    cached = {key: json.loads(value) for key, value in retrievals.get_many(wanted).items()}
    stats["retrieval_cache_hits"] += sum(1 for key in keys.values() if key in cached)
    missing = [q for q in episode.questions
               if any(key not in cached for key in (keys[q.qid], deep_keys.get(q.qid), diag_keys.get(q.qid)) if key)]
    if missing:
        context = RunContext(config.system, plan.encoder, config.cache_dir(), plan.llm_cache(), config.cache_only,
                             config.progress)
        built = plan.entry.build(context)
        system = built.memory
        try:  # close() stops a library's proxy and store (Kuzu, Qdrant) also on an error or Ctrl-C
            before = snapshot(built.client, plan.encoder)
            system.ingest(episode.documents, show_progress=config.progress)
            after = snapshot(built.client, plan.encoder)
            size = store_size(system)
            if size is not None:
                _keep(costs, measured, size_key, asdict(size))
            calls.add_write(before, after, len(episode.documents))
            stats["ingested_documents"] += len(episode.documents)
            many = len(missing) > 50 and config.progress
            for question in tqdm(missing, desc=f"  {episode.episode_id}", unit="q", leave=False, disable=not many):
                _put(retrievals, cached, keys[question.qid], lambda: [hit_to_dict(h) for h in _timed(
                    costs, measured, keys[question.qid], lambda: system.retrieve(question.text, question.as_of, config.system.k))])
                if question.qid in deep_keys:
                    _put(retrievals, cached, deep_keys[question.qid],
                         lambda: ranked_ids(system.retrieve(question.text, question.as_of, depth)))
            calls.add_read(after, snapshot(built.client, plan.encoder), len(missing))
            # After the read-time count: the explanation's own legs are the harness's, not the system's read.
            for question in missing:
                if question.qid in diag_keys:
                    _put(retrievals, cached, diag_keys[question.qid], lambda: system.diagnose(
                        question.text, question.as_of, question.evidence_ids, explain_depth).as_dict())
        finally:
            built.close()
    by_id = {doc.doc_id: doc for doc in episode.documents}
    scorer = plan.benchmark.scorer_for(episode) if plan.sessions else None
    all_hits = [[hit_from_dict(item, by_id) for item in cached[keys[q.qid]]] for q in episode.questions]
    contexts, layouts = contexts_of(plan.entry.context, config.dataset.context_budget, all_hits)
    deeper = [cached[deep_keys[q.qid]] if q.qid in deep_keys else None for q in episode.questions]
    lengths = {doc.doc_id: len(doc.text) for doc in episode.documents}
    metrics = episode_metrics(episode.questions, all_hits, contexts, plan.ks, scorer, deeper, lengths, layouts)
    _add_store_size(stats, measured.get(size_key))
    items = []
    for question, q_hits, q_deeper, context, q_metrics in zip(episode.questions, all_hits, deeper, contexts, metrics):
        diagnosis = cached[diag_keys[question.qid]] if question.qid in diag_keys else None
        golds = gold_docs(question, by_id, q_hits, q_deeper, context, explain_depth,
                          diagnosis["placements"] if diagnosis else None)
        record = build_record(episode, question, q_hits, context, q_metrics, golds, explain_depth,
                              diagnosis["leg_sizes"] if diagnosis else None)
        record["retrieval_seconds"] = (measured.get(keys[question.qid]) or {}).get("seconds")
        if counter is not None:
            record["read_tokens"] = counter.count_text(context.text)
        items.append(QAItem(question, context.text, record, q_hits))
        stats["questions"] += 1
    return items


def _put(retrievals: KVStore, cached: dict[str, Any], key: str, compute) -> None:
    """Compute and cache at once the entry ``key`` unless it is already cached."""
    if key not in cached:
        payload = compute()
        retrievals.put(key, json.dumps(payload).encode("utf-8"))
        cached[key] = payload


def _keep(costs: KVStore, measured: dict[str, Any], key: str, value: dict[str, Any]) -> None:
    costs.put(key, json.dumps(value).encode("utf-8"))
    measured[key] = value


def _timed(costs: KVStore, measured: dict[str, Any], key: str, retrieve_hits: Callable[[], list[Hit]]) -> list[Hit]:
    """``retrieve_hits()``, its wall-clock seconds kept under ``key`` (the ranking's own cache key)."""
    started = time.perf_counter()
    hits = retrieve_hits()
    _keep(costs, measured, key, {"seconds": round(time.perf_counter() - started, 6)})
    return hits


def _add_store_size(stats: dict[str, Any], size: dict[str, Any] | None) -> None:
    """Sum each episode's store size into ``stats`` (store_bytes on disk, store_memory_bytes); one
    episode that cannot say makes the sum None."""
    for field, name in (("disk_bytes", "store_bytes"), ("memory_bytes", "store_memory_bytes")):
        value = (size or {}).get(field)
        total = stats.get(name, 0)
        stats[name] = None if value is None or total is None else total + value


def contexts_of(layout, budget: int | None,
                all_hits: list[list[Hit]]) -> tuple[list[RenderedContext], list[list[BlockLayout]] | None]:
    """Each question's context: the harness's ranked blocks, or the system's own ``layout`` (Mem0,
    Zep) with where each hit's text sits in it."""
    if layout is None:
        return [render(h, budget) for h in all_hits], None
    pairs = [layout(h, budget) for h in all_hits]
    return [context for context, _ in pairs], [
        [BlockLayout(line.start, line.length, tuple(line.sources)) for line in placed] for _, placed in pairs
    ]
