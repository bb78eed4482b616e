"""Retrieval results on disk, keyed by system config + encoder + corpus fingerprint + question.

A hit is stored without its text when it is one stored document (the text is looked up again
from the episode's documents); a chunk hit keeps its text, which no single document holds.
"""

from __future__ import annotations

import hashlib
from typing import Any

from model_clients.kvstore import stable_hash
from memory_protocol import Question
from memory_protocol.documents import Document, Hit

# Bump when retrieval code changes in a way that changes results, so old cache entries are ignored.
RETRIEVAL_VERSION = 2


def corpus_fingerprint(documents: tuple[Document, ...] | list[Document]) -> str:
    digest = hashlib.sha256()
    for doc in documents:
        for part in (doc.doc_id, doc.text, doc.author or "", doc.date.isoformat() if doc.date else "", doc.thread or ""):
            digest.update(part.encode("utf-8"))
            digest.update(b"\x1f")
        digest.update(b"\x1e")
    return digest.hexdigest()


def retrieval_key(system: dict[str, Any], encoder_identity: str, fingerprint: str, question: Question) -> str:
    return stable_hash(
        {
            "version": RETRIEVAL_VERSION,
            "system": system,
            "encoder": encoder_identity,
            "corpus": fingerprint,
            "question": [question.qid, question.text, question.as_of.isoformat() if question.as_of else None],
        }
    )


def hit_to_dict(hit: Hit) -> dict[str, Any]:
    item: dict[str, Any] = {
        "doc_id": hit.doc_id,
        "score": hit.score,
        "leg_ranks": hit.leg_ranks,
        "reserve": hit.reserve,
    }
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

