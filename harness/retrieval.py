"""The retrieval stage: every question's ranking, cached by (system identity, encoder, corpus
fingerprint, question) and looked up before anything is built, so a repeated run neither embeds
nor ingests; an episode is ingested only when one of its questions misses the cache. Each question
becomes a record: its metrics, and why each gold document was found or lost (``gold_docs``).

What a ranking cost is kept beside it (``retrieval_costs.sqlite``): its ``system.retrieve`` seconds
under the ranking's key and the episode's store size after ingest, so a repeated run reports the
figures measured when they were computed (one missing never forces a retrieval)."""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from typing import Any

from tqdm import tqdm

from harness.config import RunConfig
from harness.errors import RunInterrupted
from harness.plan import RunPlan
from harness.qa import QAItem
from harness.stage_log import LOG
from harness.systems import RunContext
from judges.metrics.ranking import episode_metrics, metric_ranking, ranked_ids
from memory_protocol import Document, Episode, Hit, Question, store_size
from memplusplus.evidence import RenderedContext, render
from model_clients.call_counts import ModelCallTally, snapshot
from model_clients.cost import CHARS_PER_TOKEN
from model_clients.kvstore import KVStore, stable_hash
from model_clients.token_count import TokenCounter, encoding_name_for

# Bump when retrieval code changes in a way that changes results, so old cache entries are ignored.
RETRIEVAL_VERSION = 2
HITS_KEPT = 100  # a record keeps at most this many hits (full context returns the whole history)
GOLD_TEXT_CHARS = 200  # of each gold document in its record: enough to recognise the turn


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


def question_keys(plan: RunPlan, episode: Episode, fingerprint: str | None = None, metric_depth: int | None = None,
                  diagnose_depth: int | None = None) -> dict[str, str]:
    """Each question's cache key; a deeper ranking (``metric_depth``) or a diagnosis is keyed apart."""
    fingerprint = fingerprint or corpus_fingerprint(episode.documents)
    keys = {}
    for question in episode.questions:
        system = dict(plan.identity)
        if metric_depth:
            system["metric_depth"] = metric_depth
        if diagnose_depth:
            system.update(diagnose_depth=diagnose_depth, gold=list(question.evidence_ids))
        keys[question.qid] = retrieval_key(system, plan.encoder_identity, fingerprint, question)
    return keys


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


def retrieve(plan: RunPlan, calls: ModelCallTally) -> list[QAItem]:
    """Every episode's questions as QA items (records with metrics), counted in ``plan.stats``. A dry
    run's encoder raises WouldEmbed out of here; Ctrl-C becomes RunInterrupted."""
    config, episodes = plan.config, plan.episodes
    items: list[QAItem] = []
    done = 0
    counter = read_counter(config)
    if counter is not None:
        plan.stats["read_tokenizer"] = f"{counter.encoding_name} ({counter.model})"
    try:
        for done, episode in enumerate(LOG.each(episodes, "retrieval", "episode", f"{config.system.name} on "
                                                f"{config.dataset.name}", config.progress)):
            items += _episode(plan, episode, calls, counter)
    except KeyboardInterrupt:
        raise RunInterrupted(f"interrupted after {done}/{len(episodes)} episodes; re-run to resume") from None
    return items


def read_counter(config: RunConfig) -> TokenCounter | None:
    """The answerer's own tokenizer (an OpenAI model's, offline); None: no answerer, or not ours to count."""
    model = config.answerer.model if config.answerer is not None else None
    return TokenCounter(model) if model and encoding_name_for(model) else None


def _episode(plan: RunPlan, episode: Episode, calls: ModelCallTally, counter: TokenCounter | None) -> list[QAItem]:
    config, retrievals, costs, stats = plan.config, plan.retrievals, plan.retrieval_costs, plan.stats
    fingerprint = corpus_fingerprint(episode.documents)
    keys = question_keys(plan, episode, fingerprint)
    size_key = stable_hash({"store_size": plan.identity, "encoder": plan.encoder_identity, "corpus": fingerprint})
    # A deeper ranking for the metrics only (a benchmark scoring sessions widens k), cached apart.
    depth = config.dataset.metric_depth or 0
    deep_keys = question_keys(plan, episode, fingerprint, metric_depth=depth) if depth > config.system.k else {}
    # Where each gold document ranked in every leg (systems that report it), cached apart too;
    # the explanation reaches as deep as the deepest metric cut-off.
    explain_depth = max([*plan.ks, depth])
    diag_keys = question_keys(plan, episode, fingerprint, diagnose_depth=explain_depth) if plan.entry.diagnoses else {}
    stored_costs = costs.get_many([*keys.values(), size_key])
    stored = retrievals.get_many([*keys.values(), *deep_keys.values(), *diag_keys.values()])
    measured = {key: json.loads(value) for key, value in stored_costs.items()}
    cached = {key: json.loads(value) for key, value in stored.items()}
    stats["retrieval_cache_hits"] += sum(1 for key in keys.values() if key in cached)
    missing = [q for q in episode.questions
               if any(key not in cached for key in (keys[q.qid], deep_keys.get(q.qid), diag_keys.get(q.qid)) if key)]
    if missing:
        context = RunContext(config.system, plan.encoder, config.cache_dir(), plan.llm_cache, config.cache_only,
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
    deeper = [cached[deep_keys[q.qid]] if q.qid in deep_keys else None for q in episode.questions]
    lengths = {doc.doc_id: len(doc.text) for doc in episode.documents}
    all_hits = [[hit_from_dict(item, by_id) for item in cached[keys[q.qid]]] for q in episode.questions]
    contexts = contexts_of(plan.entry.context, config.dataset.context_budget, all_hits)
    metrics = episode_metrics(episode.questions, all_hits, contexts, plan.ks, scorer, deeper, lengths)
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


def contexts_of(layout, budget: int | None, all_hits: list[list[Hit]]) -> list[RenderedContext]:
    """Each question's context: the harness's ranked blocks, or the system's own ``layout`` (Mem0, Zep)."""
    return [render(hits, budget) if layout is None else layout(hits, budget)[0] for hits in all_hits]


def _rank_in(ids: Sequence[str], doc_id: str, depth: int) -> int | None:
    rank = ids.index(doc_id) + 1 if doc_id in ids else None
    return rank if rank is not None and rank <= depth else None


def gold_docs(question: Question, documents: Mapping[str, Document], hits: list[Hit], deeper: list[str] | None,
              context: RenderedContext, depth: int,
              placements: Mapping[str, Mapping[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Why each gold document was found or lost: its rank down to ``depth``, its rank among the hits,
    whether the answerer read the start of its block (as ``in_budget_recall`` counts) or the budget cut
    it, and with ``placements`` (Mem++ ``diagnose``) whether it was stored and in scope, its rank in
    every leg and in the fusion."""
    ranking, returned = metric_ranking(hits, deeper), ranked_ids(hits)
    entries = []
    for doc_id in dict.fromkeys(question.evidence_ids):
        doc = documents.get(doc_id)
        returned_rank = _rank_in(returned, doc_id, len(returned))
        start = context.block_starts.get(doc_id)
        read = start is not None and (context.budget is None or start < context.budget)
        entry: dict[str, Any] = {"doc_id": doc_id, "text": None if doc is None else doc.text[:GOLD_TEXT_CHARS],
                                 "rank": _rank_in(ranking, doc_id, depth), "returned_rank": returned_rank,
                                 "read": read, "budget_cut": returned_rank is not None and not read}
        placement = (placements or {}).get(doc_id)
        if placement is not None:
            entry.update(stored=placement["stored"], in_scope=placement["in_scope"],
                         legs=dict(placement["legs"]), fused_rank=placement["fused"])
        entries.append(entry)
    return entries


def hits_per_leg(hits: Sequence[Hit]) -> dict[str, int]:
    """How many hits each leg ranked (Mem++ legs, ``mem0:<speaker>``, ``zep:fact`` / ``zep:entity``)."""
    counts: dict[str, int] = {}
    for hit in hits:
        for leg in hit.leg_ranks:
            counts[leg] = counts.get(leg, 0) + 1
    return dict(sorted(counts.items()))


def build_record(episode: Episode, question: Question, hits: list[Hit], context: RenderedContext,
                 metrics: dict[str, float], golds: list[dict[str, Any]] | None = None,
                 explain_depth: int | None = None, leg_sizes: dict[str, int] | None = None) -> dict[str, Any]:
    """One question's record; ``golds``: :func:`gold_docs`; ``leg_sizes``: rows per leg (Mem++)."""
    gold = set(question.evidence_ids)
    return {
        "episode": episode.episode_id,
        "qid": question.qid,
        "category": question.category,
        "question": question.text,
        "as_of": question.as_of.isoformat() if question.as_of else None,
        "gold": list(question.evidence_ids),
        "reference": question.answer,
        "explain_depth": explain_depth,
        "gold_docs": golds or [],
        **({"leg_sizes": leg_sizes} if leg_sizes is not None else {}),
        "n_hits": len(hits),
        "hits_per_leg": hits_per_leg(hits),
        "retrieved_chars": len(context.full_text),
        "read_chars": len(context.text),
        "read_tokens_est": math.ceil(len(context.text) / CHARS_PER_TOKEN),
        "metrics": {key: (None if isinstance(value, float) and math.isnan(value) else value) for key, value in metrics.items()},
        "hits": [{"doc_id": hit.doc_id, "score": round(hit.score, 8), "date": hit.date.isoformat() if hit.date else None,
                  "author": hit.author, "leg_ranks": hit.leg_ranks, "reserve": hit.reserve,
                  "gold": bool(set(hit.source_ids) & gold), **({"sources": list(hit.source_ids)} if hit.sources else {})}
                 for hit in hits[:HITS_KEPT]],
    }
