"""What a hostile editor does to a cache file with plain SQL (issue 23, item 1): each returns the
keys it touched. Digests are left as they were, except where the edit copies or forges them."""

from __future__ import annotations

import json
import random
import sqlite3
import struct
from pathlib import Path

from model_clients.kvstore import entry_digest


def _rows(path: Path) -> list[tuple[str, bytes]]:
    with sqlite3.connect(path) as conn:
        return [(key, bytes(value)) for key, value in conn.execute("SELECT key, value FROM kv ORDER BY key")]


def _set_value(path: Path, key: str, value: bytes) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE kv SET value = ? WHERE key = ?", (value, key))


def flip_sign_bits(path: Path, count: int) -> list[str]:
    """The sign bit of every component of ``count`` vectors (float32, little-endian: byte 3 of 4)."""
    keys = []
    for key, value in _rows(path)[:count]:
        flipped = bytearray(value)
        for index in range(3, len(flipped), 4):
            flipped[index] ^= 0x80
        _set_value(path, key, bytes(flipped))
        keys.append(key)
    return keys


def random_bytes(path: Path, count: int, seed: int = 23) -> list[str]:
    """Random bytes of the same length in place of ``count`` values."""
    rng = random.Random(seed)
    keys = []
    for key, value in _rows(path)[:count]:
        _set_value(path, key, bytes(rng.getrandbits(8) for _ in value))
        keys.append(key)
    return keys


def change_doc_id_digit(path: Path) -> list[str]:
    """In every cached ranking, one hit's doc id gets another last digit -- one that names a
    document the same ranking also holds, so the ranking still reads as valid."""
    keys = []
    for key, value in _rows(path):
        hits = json.loads(value)
        ids = {hit["doc_id"] if isinstance(hit, dict) else hit for hit in hits}
        for hit in hits:
            doc_id = hit["doc_id"] if isinstance(hit, dict) else hit
            if not doc_id[-1].isdigit():
                continue
            other = next((doc_id[:-1] + d for d in "0123456789" if d != doc_id[-1] and doc_id[:-1] + d in ids), None)
            if other is not None:
                hit["doc_id"] = other
                _set_value(path, key, json.dumps(hits).encode("utf-8"))
                keys.append(key)
                break
    return keys


def move_value(path: Path) -> list[str]:
    """The first row's value *and digest* copied over the second row (a value under another key)."""
    with sqlite3.connect(path) as conn:
        (src, value, digest), (dst, _, _) = conn.execute("SELECT key, value, digest FROM kv ORDER BY key LIMIT 2").fetchall()
        conn.execute("UPDATE kv SET value = ?, digest = ? WHERE key = ?", (value, digest, dst))
    return [dst]


def nan_vector_with_valid_digest(path: Path) -> list[str]:
    """A vector whose first component is NaN, with a digest that matches (as adopted old code wrote it)."""
    key, value = _rows(path)[0]
    poisoned = struct.pack("<f", float("nan")) + value[4:]
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE kv SET value = ?, digest = ? WHERE key = ?", (poisoned, entry_digest(key, poisoned), key))
    return [key]
