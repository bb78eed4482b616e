"""The run's caches under ``store.cache_dir``: embeddings (float32, NaN/inf refused), rankings, what
each ranking cost (seconds, store size) and LLM replies, each entry checked against its digest on
read; ``store.repair_cache=true`` drops a bad entry (recomputed), else it stops the run in one line
naming the file and key.
"""

from __future__ import annotations

from pathlib import Path

from harness.config import StoreSpec
from model_clients.kvstore import KVStore, embedding_store

EMBEDDINGS = "embeddings.sqlite"
RETRIEVALS = "retrieval.sqlite"
RETRIEVAL_COSTS = "retrieval_costs.sqlite"
LLM_REPLIES = "llm.sqlite"


def run_cache(store: StoreSpec, name: str) -> KVStore:
    path = Path(store.cache_dir).expanduser() / name
    return (embedding_store if name == EMBEDDINGS else KVStore)(path, repair=store.repair_cache)
