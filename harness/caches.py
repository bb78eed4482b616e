"""The run's three caches under ``store.cache_dir``: embeddings (float32, NaN/inf refused), rankings
and LLM replies, each entry checked against its digest on read; ``store.repair_cache=true`` drops a
bad entry (recomputed), else it stops the run in one line naming the file and key.
"""

from __future__ import annotations

from pathlib import Path

from harness.config import RunConfig
from model_clients.kvstore import KVStore, embedding_store

EMBEDDINGS = "embeddings.sqlite"
RETRIEVALS = "retrieval.sqlite"
LLM_REPLIES = "llm.sqlite"


def run_cache(config: RunConfig, name: str) -> KVStore:
    path = Path(config.cache_dir()) / name
    if name == EMBEDDINGS:
        return embedding_store(path, repair=config.store.repair_cache)
    return KVStore(path, repair=config.store.repair_cache)
