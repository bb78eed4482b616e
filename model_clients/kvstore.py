"""A content-addressed key-value store on disk (SQLite), safe for concurrent writers.

Every expensive stage (embeddings, retrieval, LLM calls) keys its output by a hash of its inputs
and keeps it here, so a killed run resumes and a repeated run recomputes nothing. Each put is its
own committed transaction: a crash loses at most the write in flight, never earlier ones.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any, Iterable


def stable_hash(obj: Any) -> str:
    """sha256 of the canonical JSON form of ``obj`` (sorted keys, no whitespace)."""
    payload = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class KVStore:
    """Bytes values under string keys, in one SQLite file per namespace."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self._connect() as conn:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value BLOB NOT NULL)")

    def _connect(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=60.0)
            self._local.conn = conn
        return conn

    def get(self, key: str) -> bytes | None:
        row = self._connect().execute("SELECT value FROM kv WHERE key = ?", (key,)).fetchone()
        return None if row is None else bytes(row[0])

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes]:
        keys = list(dict.fromkeys(keys))
        found: dict[str, bytes] = {}
        conn = self._connect()
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for key, value in conn.execute(f"SELECT key, value FROM kv WHERE key IN ({marks})", chunk):
                found[key] = bytes(value)
        return found

    def put(self, key: str, value: bytes) -> None:
        self.put_many([(key, value)])

    def put_many(self, items: Iterable[tuple[str, bytes]]) -> None:
        conn = self._connect()
        with conn:
            conn.executemany("INSERT OR REPLACE INTO kv (key, value) VALUES (?, ?)", list(items))

    def get_json(self, key: str) -> Any | None:
        raw = self.get(key)
        return None if raw is None else json.loads(raw)

    def put_json(self, key: str, value: Any) -> None:
        self.put(key, json.dumps(value, ensure_ascii=False, sort_keys=True).encode("utf-8"))

    def __len__(self) -> int:
        return int(self._connect().execute("SELECT COUNT(*) FROM kv").fetchone()[0])
