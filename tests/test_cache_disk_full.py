"""A full disk under the cache is one line naming the file, exit code 2 (issue 31, item 8).

It was ``sqlite3.OperationalError: database or disk is full`` with no file named, or, when the
WAL index could not grow, ``disk I/O error``. The disk here is a real tmpfs filled to a given page
count (root only); the earlier entries of the cache must stay readable once space is freed.
"""

from __future__ import annotations

import os
import sqlite3

import pytest

from model_clients.batch.journal import BatchJob, BatchJournal
from model_clients.kvstore import CacheDiskFull, KVStore
from tests.data_paths import require_data
from tests.small_disk import small_disk  # noqa: F401  (fixture)


@pytest.mark.parametrize("pages", [0, 2, 5, 9, 20])
def test_a_cache_on_a_full_disk_names_its_file_and_keeps_its_entries(small_disk, pages):
    path = small_disk.path / "cache" / "llm.sqlite"
    small_disk.leave(pages)
    stored = 0
    with pytest.raises(CacheDiskFull) as caught:
        store = KVStore(path)
        for stored in range(1, 10_000):
            store.put(f"k{stored}", os.urandom(3000))
    message = str(caught.value)
    assert caught.value.errno == 28 and caught.value.filename == str(path)
    assert "\n" not in message and message.startswith(f"the disk under the cache {path} is full (")
    assert isinstance(caught.value.__cause__, sqlite3.Error)
    small_disk.free()
    reopened = KVStore(path)
    assert len(reopened) == max(stored - 1, 0)  # every put before the failing one
    assert all(reopened.get(f"k{i}") is not None for i in range(1, stored))


def test_the_batch_journal_names_its_file_too(small_disk):
    path = small_disk.path / "llm.sqlite"
    journal = BatchJournal(path)
    small_disk.leave(0)
    job = BatchJob("b1", "openai", "chat", "m", 1, 0, "2026-01-01T00:00:00Z", "open")
    with pytest.raises(CacheDiskFull, match="the disk under the cache .*llm.sqlite is full"):
        for index in range(2000):
            journal.record(job.__class__(**{**job.__dict__, "batch_id": f"b{index}"}), [])


def test_a_run_whose_cache_disk_fills_is_one_line_exit_2(small_disk, capsys):
    from harness.cli import execute
    from harness.compose import compose_config

    require_data("orgmembench")
    config = compose_config(["dataset.limit=3", "progress=false", f"store.cache_dir={small_disk.path / 'cache'}",
                             f"store.results_dir={small_disk.path.parent / 'runs'}"])
    small_disk.leave(40)  # room for the first cache files, not for every embedding of the corpus
    assert execute(config) == 2
    err = [line for line in capsys.readouterr().err.strip().splitlines() if line.strip()]
    assert len(err) == 1 and "Traceback" not in err[0], err
    assert err[0].startswith(f"error: no space left on the device writing {small_disk.path / 'cache'}/")
    assert ".sqlite (" in err[0] and "free some space and re-run" in err[0]
