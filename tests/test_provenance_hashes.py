"""Issue 31, point 5: provenance records the sha256 of the bytes read, not of a remembered stamp.

Digests were remembered by (size, mtime): after a same-size edit with the mtime put back, history
and metrics.json recorded the old sha256. Now the stamp holds device, inode, size, mtime and ctime
(a restored mtime sets the ctime), and a file changed within two seconds of its hashing is hashed again.
"""

from __future__ import annotations

import hashlib
import json
import os
import time

from harness.provenance import SETTLE_NS, file_hashes


def test_a_same_size_edit_with_its_mtime_put_back_records_the_new_bytes(tmp_path):
    data, memo = tmp_path / "locomo10.json", tmp_path / "hashes.json"
    data.write_bytes(b'{"answer": 2}')
    before = os.stat(data)
    time.sleep(SETTLE_NS / 1e9 + 0.2)  # settled: the digest is remembered, as on a warm run
    assert file_hashes({str(data)}, tmp_path, memo) == {"locomo10.json": hashlib.sha256(b'{"answer": 2}').hexdigest()}
    assert next(iter(json.loads(memo.read_text()).values()))["settled"] is True
    data.write_bytes(b'{"answer": 3}')
    os.utime(data, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(data)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)
    assert file_hashes({str(data)}, tmp_path, memo) == {"locomo10.json": hashlib.sha256(b'{"answer": 3}').hexdigest()}


def test_an_unchanged_settled_file_is_not_read_again(tmp_path, monkeypatch):
    data, memo = tmp_path / "d.json", tmp_path / "hashes.json"
    data.write_bytes(b"[]")
    time.sleep(SETTLE_NS / 1e9 + 0.2)
    first = file_hashes({str(data)}, tmp_path, memo)
    opened: list[str] = []
    real_open = open
    monkeypatch.setattr("builtins.open", lambda path, *a, **k: opened.append(str(path)) or real_open(path, *a, **k))
    assert file_hashes({str(data)}, tmp_path, memo) == first
    assert str(data) not in opened


def test_a_file_hashed_right_after_a_change_is_hashed_again_next_time(tmp_path):
    data, memo = tmp_path / "d.json", tmp_path / "hashes.json"
    data.write_bytes(b"[1]")
    file_hashes({str(data)}, tmp_path, memo)
    assert next(iter(json.loads(memo.read_text()).values()))["settled"] is False
