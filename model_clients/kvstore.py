"""A content-addressed key-value store on disk (SQLite, one committed transaction per put), safe for
concurrent writers: every expensive stage keeps its outputs here, so a killed run resumes. Each row
carries a sha256 of its key and bytes, checked on every read: a value edited on disk or moved under
another key is an error naming the file and the key (``repair=True`` drops it to be recomputed).
``PRAGMA user_version`` 2 marks digests; an older file is refused unless empty, or adopted as it stands.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from memory_protocol import ConfigError

SQLITE_IOERR, SQLITE_FULL = 10, 13  # sqlite3's primary result codes: "disk I/O error", "database or disk is full"
NEARLY_FULL_BYTES = 1 << 20  # an I/O error with less free than this under the file: the disk is full
SCHEMA_VERSION = 2  # PRAGMA user_version of a store whose rows carry digests; 0 = older (no digests)
CHECKSUM_PROBLEM = "fails its checksum (its bytes were changed, or it was moved from another key)"
REPAIR_HINT = "re-run with store.repair_cache=true to drop and recompute it (scripts/check_cache.py checks a whole cache)"

# The run's caches under ``store.cache_dir`` (:func:`run_cache`).
EMBEDDINGS, RETRIEVALS, RETRIEVAL_COSTS, LLM_REPLIES = "embeddings.sqlite", "retrieval.sqlite", "retrieval_costs.sqlite", "llm.sqlite"

ValueCheck = Callable[[list[bytes]], list["str | None"]]  # per value: what is wrong with it, or None

logger = logging.getLogger(__name__)


def stable_hash(obj: Any) -> str:
    """sha256 of the canonical JSON form of ``obj`` (sorted keys, no whitespace)."""
    payload = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def entry_digest(key: str, value: bytes) -> bytes:
    """sha256 of a domain tag, the key (length-prefixed) and the value: a value under another key
    fails. (sha256 over BLAKE2b: hardware-accelerated on common CPUs, the faster of the two here.)"""
    key_bytes = key.encode("utf-8")
    return hashlib.sha256(b"mempp-kv-v2\x00" + len(key_bytes).to_bytes(8, "little") + key_bytes + value).digest()


def finite_float32_vectors(values: list[bytes]) -> list[str | None]:
    """The embedding store's value check: float32 bytes, every component finite. One numpy pass
    over the whole batch when all is well (the common case); per value only to say what is wrong."""
    import numpy as np

    if all(value and len(value) % 4 == 0 for value in values) and np.isfinite(np.frombuffer(b"".join(values), dtype=np.float32)).all():
        return [None] * len(values)
    problems: list[str | None] = []
    for value in values:
        if not value or len(value) % 4:
            problems.append(f"{len(value)} bytes, not a float32 vector")
            continue
        vector = np.frombuffer(value, dtype=np.float32)
        bad = int(np.count_nonzero(~np.isfinite(vector)))
        problems.append(f"a vector with {bad} NaN/inf component(s) of {vector.size}" if bad else None)
    return problems


class CacheIntegrityError(ConfigError):
    """A cache entry that fails its checksum or its value check; names the file and the key."""

    def __init__(self, path: Path, key: str, problem: str, hint: str = REPAIR_HINT):
        super().__init__(f"{path}: cache entry {key} {problem}; {hint}")
        self.path, self.key, self.problem = path, key, problem


class CacheDiskFull(OSError):
    """SQLite could not write a cache file, its disk (or the temporary folder) full: one line naming the
    file; an ``OSError`` with ``ENOSPC`` (exit 2). The transaction was rolled back: earlier entries stay."""

    def __init__(self, path: Path, cause: sqlite3.Error) -> None:
        message = (f"the disk under the cache {path} is full ({cause}); its earlier entries are intact: free "
                   f"some space there (or point store.cache_dir at a disk with room) and re-run")
        super().__init__(errno.ENOSPC, str(cause), str(path))
        self.message = message

    def __str__(self) -> str:
        return self.message


class CacheIOError(ConfigError):
    """SQLite could not read or write a cache file (an I/O error with room on the disk): one line."""


def disk_full(exc: BaseException, path: Path) -> bool:
    """True for SQLite's 'database or disk is full' (SQLITE_FULL), and for an I/O error
    (SQLITE_IOERR_*: the WAL index could not grow, say) while the disk under ``path`` is full."""
    code = getattr(exc, "sqlite_errorcode", None)
    if not isinstance(code, int):
        return isinstance(exc, sqlite3.OperationalError) and "disk is full" in str(exc)
    if code & 0xFF != SQLITE_IOERR:
        return code & 0xFF == SQLITE_FULL
    try:
        stats = os.statvfs(path.parent)
    except OSError:
        return False
    return stats.f_bavail * stats.f_frsize < NEARLY_FULL_BYTES


@contextmanager
def naming_full_disk(path: Path) -> Iterator[None]:
    """Turn SQLite's full-disk error on ``path`` into :class:`CacheDiskFull` (and another I/O
    error into :class:`CacheIOError`), each one line naming the file."""
    try:
        yield
    except sqlite3.Error as exc:
        if disk_full(exc, path):
            raise CacheDiskFull(path, exc) from exc
        if (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF == SQLITE_IOERR:
            raise CacheIOError(f"{path}: {exc} ({getattr(exc, 'sqlite_errorname', 'SQLITE_IOERR')}); "
                               "check the disk under it, or point store.cache_dir elsewhere") from exc
        raise


class LegacyCacheError(ConfigError):
    """A cache file written before digests existed, holding entries (refused, never read unchecked)."""


@dataclass(frozen=True)
class EntryReport:
    """One bad entry found by ``KVStore.scan``."""

    key: str
    problem: str


class KVStore:
    """Bytes values under string keys, in one SQLite file per namespace, each checked on read."""

    def __init__(self, path: str | Path, *, repair: bool = False, value_check: ValueCheck | None = None):
        self.path = Path(path)
        self.repair = repair
        self.value_check = value_check
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with naming_full_disk(self.path):
            self._prepare(self._connect())

    def _connect(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=60.0)
            self._local.conn = conn
        return conn

    def _prepare(self, conn: sqlite3.Connection) -> None:
        """Create the table (schema 2), or refuse a file this code cannot check, in one transaction."""
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("BEGIN IMMEDIATE")
        try:
            legacy = _legacy_count(conn)
            if legacy:
                raise LegacyCacheError(
                    f"{self.path} is a cache written before checksums ({legacy} entries without digests); "
                    f"`python scripts/check_cache.py {self.path.parent} --adopt` checksums them as they stand, "
                    "or delete the file to recompute them")
            if legacy == 0:
                conn.execute("DROP TABLE kv")  # empty: nothing to lose
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            if version == 0:
                conn.execute("CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value BLOB NOT NULL, digest BLOB NOT NULL)")
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            elif version != SCHEMA_VERSION:
                raise ConfigError(f"{self.path}: cache schema {version}, this code reads schema {SCHEMA_VERSION} only")
            conn.commit()
        except BaseException:
            conn.rollback()
            raise

    def problems(self, rows: Iterable[tuple[str, Any, Any]]) -> list[tuple[str, bytes, bytes | None, str | None]]:
        """Each stored row (key, value, digest) with why it cannot be trusted, or None."""
        checked: list[tuple[str, bytes, bytes | None, str | None]] = []
        for key, value, digest in rows:
            value, digest = _as_bytes(value), None if digest is None else _as_bytes(digest)
            matches = digest is not None and digest == entry_digest(key, value)
            checked.append((key, value, digest, None if matches else CHECKSUM_PROBLEM))
        if self.value_check is not None:
            verified = [index for index, row in enumerate(checked) if row[3] is None]
            for index, wrong in zip(verified, self.value_check([checked[index][1] for index in verified])):
                if wrong:
                    key, value, digest, _ = checked[index]
                    checked[index] = (key, value, digest, f"holds {wrong}")
        return checked

    def _checked(self, rows: Iterable[tuple[str, Any, Any]]) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        bad: list[tuple[str, bytes | None]] = []
        for key, value, digest, wrong in self.problems(rows):
            if wrong is None:
                found[key] = value
            elif not self.repair:
                raise CacheIntegrityError(self.path, key, wrong)
            else:
                logger.warning("%s: dropped cache entry %s, which %s; it is recomputed", self.path, key, wrong)
                bad.append((key, digest))
        if bad:
            self._drop_rows(bad)
        return found

    def _drop_rows(self, rows: list[tuple[str, bytes | None]]) -> None:
        conn = self._connect()
        with naming_full_disk(self.path), conn:  # only the row as read: a good value written meanwhile stays
            conn.executemany("DELETE FROM kv WHERE key = ? AND digest IS ?", rows)

    # ------------------------------------------------------------------ reads
    def get(self, key: str) -> bytes | None:
        return self.get_many([key]).get(key)

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes]:
        keys = list(dict.fromkeys(keys))
        found: dict[str, bytes] = {}
        conn = self._connect()
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            with naming_full_disk(self.path):  # a WAL read may need to grow the -shm file
                rows = conn.execute(f"SELECT key, value, digest FROM kv WHERE key IN ({marks})", chunk).fetchall()
            found.update(self._checked(rows))
        return found

    def scan(self) -> Iterator[EntryReport]:
        """Every bad entry of the whole file (nothing dropped; see ``drop``)."""
        cursor = self._connect().execute("SELECT key, value, digest FROM kv")
        while rows := cursor.fetchmany(1000):
            for key, _, _, wrong in self.problems(rows):
                if wrong is not None:
                    yield EntryReport(key, wrong)

    def drop(self, keys: Iterable[str]) -> None:
        conn = self._connect()
        with naming_full_disk(self.path), conn:
            conn.executemany("DELETE FROM kv WHERE key = ?", [(key,) for key in keys])

    # ------------------------------------------------------------------ writes
    def put(self, key: str, value: bytes) -> None:
        self.put_many([(key, value)])

    def put_many(self, items: Iterable[tuple[str, bytes]]) -> None:
        pairs = [(key, bytes(value)) for key, value in items]
        if self.value_check is not None:
            for (key, _), wrong in zip(pairs, self.value_check([value for _, value in pairs])):
                if wrong:
                    raise CacheIntegrityError(self.path, key, f"was refused at write: {wrong}",
                                              "the code that computed it produced a bad value")
        rows = [(key, value, entry_digest(key, value)) for key, value in pairs]
        conn = self._connect()
        with naming_full_disk(self.path), conn:
            conn.executemany("INSERT OR REPLACE INTO kv (key, value, digest) VALUES (?, ?, ?)", rows)

    def put_json(self, key: str, value: Any) -> None:
        self.put(key, json.dumps(value, ensure_ascii=False, sort_keys=True).encode("utf-8"))

    def __len__(self) -> int:
        return int(self._connect().execute("SELECT COUNT(*) FROM kv").fetchone()[0])


def _as_bytes(stored: Any) -> bytes:
    """A column as bytes: an edit through the sqlite3 shell may have left TEXT (or a number) there."""
    if isinstance(stored, str):
        return stored.encode("utf-8")
    if isinstance(stored, (int, float)):
        return str(stored).encode("ascii")
    return bytes(stored)


def embedding_store(path: str | Path, *, repair: bool = False) -> KVStore:
    """The store of embedding vectors: float32 bytes, NaN/inf refused at write and at read."""
    return KVStore(path, repair=repair, value_check=finite_float32_vectors)


class CacheSettings(Protocol):
    cache_dir: str
    repair_cache: bool


def run_cache(store: CacheSettings, name: str) -> KVStore:
    """One of the run's caches (a config's ``store``): embeddings (float32, NaN/inf refused), rankings,
    what each ranking cost (seconds, store size), LLM replies; ``repair_cache`` drops a bad entry."""
    path = Path(store.cache_dir).expanduser() / name
    return (embedding_store if name == EMBEDDINGS else KVStore)(path, repair=store.repair_cache)


def _legacy_count(conn: sqlite3.Connection) -> int | None:
    """The entries of a ``kv`` table written before digests (None: no such table)."""
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    columns = [row[1] for row in conn.execute("PRAGMA table_info(kv)")]
    if version != 0 or not columns or "digest" in columns:
        return None
    return int(conn.execute("SELECT COUNT(*) FROM kv").fetchone()[0])


def legacy_entries(path: Path) -> int | None:
    """How many entries a pre-checksum file holds (None: not such a file)."""
    with closing(sqlite3.connect(path, timeout=60.0)) as conn:
        return _legacy_count(conn)


def adopt_legacy(path: Path, value_check: ValueCheck | None = None) -> list[EntryReport]:
    """Give a pre-checksum file digests for its entries as they stand (trusting them); entries
    failing ``value_check`` are dropped and returned. One transaction: a crash or a full disk
    (:class:`CacheDiskFull`) leaves the old file."""
    dropped: list[EntryReport] = []
    with naming_full_disk(path), closing(sqlite3.connect(path, timeout=60.0)) as conn:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("CREATE TABLE kv_checked (key TEXT PRIMARY KEY, value BLOB NOT NULL, digest BLOB NOT NULL)")
        rows = [(key, _as_bytes(value)) for key, value in conn.execute("SELECT key, value FROM kv").fetchall()]
        wrongs = value_check([value for _, value in rows]) if value_check is not None else [None] * len(rows)
        for (key, value), wrong in zip(rows, wrongs):
            if wrong:
                dropped.append(EntryReport(key, f"holds {wrong}"))
            else:
                conn.execute("INSERT INTO kv_checked VALUES (?, ?, ?)", (key, value, entry_digest(key, value)))
        conn.execute("DROP TABLE kv")
        conn.execute("ALTER TABLE kv_checked RENAME TO kv")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.commit()  # not reached on an error: closing the connection rolls the transaction back
    return dropped
