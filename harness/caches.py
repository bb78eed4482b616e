"""The run's three caches under ``store.cache_dir``, opened with the run's repair setting.

``embeddings.sqlite`` holds float32 vectors (NaN/inf refused at write and read),
``retrieval.sqlite`` rankings and ``llm.sqlite`` replies; every entry is checked against its
digest on read (``model_clients.kvstore``). ``store.repair_cache=true`` drops a bad entry so it is
recomputed; otherwise a bad entry stops the run in one line naming the file and the key.
"""

from __future__ import annotations

from pathlib import Path

from harness.config import RunConfig
from model_clients.kvstore import KVStore, embedding_store

EMBEDDINGS = "embeddings.sqlite"
RETRIEVALS = "retrieval.sqlite"
LLM_REPLIES = "llm.sqlite"


def run_cache(config: RunConfig, name: str) -> KVStore:
    """One of the run's caches (``EMBEDDINGS``, ``RETRIEVALS`` or ``LLM_REPLIES``)."""
    path = Path(config.cache_dir()) / name
    if name == EMBEDDINGS:
        return embedding_store(path, repair=config.store.repair_cache)
    return KVStore(path, repair=config.store.repair_cache)
