"""Cache integrity (issue 23, item 1): a cached vector, ranking or reply edited on disk never changes a
number silently. A real cache is built by one harness run (OrgMemBench, 5 questions); each hostile
edit of its SQLite files then makes the next run stop in one line naming the file and the key
(exit 2), ``scripts/check_cache.py`` lists the key (exit 1), and ``store.repair_cache=true`` drops
the entry, recomputes it and prints the numbers of a clean run."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from memory_protocol import ConfigError
from model_clients.kvstore import CacheIntegrityError, KVStore, LegacyCacheError, embedding_store
from tests import cache_tampering as tamper

ROOT = Path(__file__).resolve().parent.parent
RUN = ("dataset.limit=5", "progress=false")


def run_cli(cache: Path, *extra: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "run.py", *RUN, f"store.cache_dir={cache}", f"store.results_dir={cache.parent / 'runs'}", *extra]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=1800)  # a hang guard only


def check_cache(cache: Path, *extra: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "scripts/check_cache.py", str(cache), *extra]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)


def numbers(proc: subprocess.CompletedProcess) -> list[str]:
    """The rows of the printed score table (every category and overall)."""
    return [line for line in proc.stdout.splitlines() if line.startswith("| ") and "category" not in line]


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> tuple[Path, list[str]]:
    """A real cache from one cold run, and the numbers a warm run over it prints."""
    folder = tmp_path_factory.mktemp("clean")
    cache = folder / "cache"
    cold = run_cli(cache)
    assert cold.returncode == 0, cold.stderr
    warm = run_cli(cache)
    assert warm.returncode == 0 and "retrieval cache hits 5" in warm.stdout
    assert numbers(warm) == numbers(cold) and len(numbers(warm)) == 2  # C1 and overall
    return cache, numbers(warm)


def copy_cache(clean_cache: Path, folder: Path, keep_rankings: bool) -> Path:
    cache = folder / "cache"
    shutil.copytree(clean_cache, cache)
    if not keep_rankings:  # without cached rankings the run reads the vectors again
        for path in cache.glob("retrieval.sqlite*"):
            path.unlink()
    return cache


Edit = Callable[[Path], list[str]]
CASES: dict[str, tuple[str, Edit]] = {
    "sign bits of 60 vectors flipped": ("embeddings.sqlite", lambda p: tamper.flip_sign_bits(p, 60)),
    "random bytes in place of 5 vectors": ("embeddings.sqlite", lambda p: tamper.random_bytes(p, 5)),
    "a vector moved under another key": ("embeddings.sqlite", tamper.move_value),
    "a NaN vector with a valid digest": ("embeddings.sqlite", tamper.nan_vector_with_valid_digest),
    "one doc-id digit per cached ranking": ("retrieval.sqlite", tamper.change_doc_id_digit),
    "random bytes in a cached ranking": ("retrieval.sqlite", lambda p: tamper.random_bytes(p, 1)),
    "a ranking moved under another key": ("retrieval.sqlite", tamper.move_value),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_tampered_cache_entry_stops_the_run_naming_file_and_key_and_repair_recomputes_it(clean, tmp_path, case):
    clean_cache, clean_numbers = clean
    name, edit = CASES[case]
    cache = copy_cache(clean_cache, tmp_path, keep_rankings=name == "retrieval.sqlite")
    touched = edit(cache / name)
    assert touched

    failed = run_cli(cache)
    assert failed.returncode == 2, failed.stdout[-2000:]
    lines = failed.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), failed.stderr
    assert str(cache / name) in lines[0] and any(key in lines[0] for key in touched)
    assert numbers(failed) == []  # no score was printed

    found = check_cache(cache)
    assert found.returncode == 1
    assert f"{name}: " in found.stdout and all(key in found.stdout for key in touched)
    assert f"{len(touched)} bad" in found.stdout

    repaired = run_cli(cache, "store.repair_cache=true")
    assert repaired.returncode == 0, repaired.stderr
    assert numbers(repaired) == clean_numbers
    assert all(f"dropped cache entry {key}" in repaired.stderr for key in touched)
    assert check_cache(cache).returncode == 0


def test_check_cache_repair_drops_bad_entries_and_the_next_run_recomputes_them(clean, tmp_path):
    cache = copy_cache(clean[0], tmp_path, keep_rankings=True)
    touched = tamper.change_doc_id_digit(cache / "retrieval.sqlite")
    repair = check_cache(cache, "--repair")
    # 5 rankings and 5 records' explanations (Mem++'s diagnose, issue 24); only the rankings hold doc ids to edit
    assert repair.returncode == 0 and f"retrieval.sqlite: 10 entries, {len(touched)} bad, dropped" in repair.stdout
    assert "embeddings.sqlite: 448 entries, 0 bad" in repair.stdout
    rerun = run_cli(cache)
    assert rerun.returncode == 0 and numbers(rerun) == clean[1]
    assert f"retrieval cache hits {5 - len(touched)}" in rerun.stdout


def test_a_cache_from_before_checksums_is_refused_in_one_line_and_adopt_makes_it_readable(clean, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    with sqlite3.connect(clean[0] / "retrieval.sqlite") as source, sqlite3.connect(cache / "retrieval.sqlite") as legacy:
        legacy.execute("CREATE TABLE kv (key TEXT PRIMARY KEY, value BLOB NOT NULL)")  # the schema-1 table
        legacy.executemany("INSERT INTO kv VALUES (?, ?)", source.execute("SELECT key, value FROM kv").fetchall())
    shutil.copy(clean[0] / "embeddings.sqlite", cache / "embeddings.sqlite")
    refused = run_cli(cache)
    assert refused.returncode == 2
    assert refused.stderr.strip() == (
        f"error: {cache / 'retrieval.sqlite'} is a cache written before checksums (10 entries without digests); "
        f"`python scripts/check_cache.py {cache} --adopt` checksums them as they stand, or delete the file to recompute them")
    assert check_cache(cache).returncode == 1
    adopted = check_cache(cache, "--adopt")
    assert adopted.returncode == 0 and "retrieval.sqlite: 10 entries written before checksums, adopted" in adopted.stdout
    again = run_cli(cache)
    assert again.returncode == 0 and numbers(again) == clean[1] and "retrieval cache hits 5" in again.stdout


def test_a_nan_or_inf_vector_is_refused_at_write_naming_file_and_key(tmp_path):
    store = embedding_store(tmp_path / "embeddings.sqlite")
    good = np.ones(4, dtype=np.float32).tobytes()
    for bad in (np.array([0.5, np.nan, 0, 0], dtype=np.float32), np.array([np.inf, 0, 0, 0], dtype=np.float32)):
        with pytest.raises(CacheIntegrityError) as caught:
            store.put_many([("fine", good), ("poisoned", bad.tobytes())])
        assert str(tmp_path / "embeddings.sqlite") in str(caught.value) and "poisoned" in str(caught.value)
        assert "1 NaN/inf component(s) of 4" in str(caught.value)
    assert len(store) == 0  # nothing of the refused batch was written
    store.put("fine", good)
    assert store.get("fine") == good


def test_an_encoder_computing_a_nan_vector_fails_before_caching_it(tmp_path):
    from memplusplus.encoder import CachedEncoder

    class NanEncoder(CachedEncoder):
        dimension = 3
        identity = "nan-test"

        def _compute(self, texts):
            return np.array([[1.0, float("nan"), 0.0]] * len(texts), dtype=np.float32)

    store = embedding_store(tmp_path / "embeddings.sqlite")
    encoder = NanEncoder(store)
    with pytest.raises(CacheIntegrityError, match=encoder.key("hello")):
        encoder.encode(["hello"])
    assert len(store) == 0


def test_a_tampered_llm_reply_is_an_error_and_repair_asks_the_server_again(tmp_path):
    from tests.fake_openai_server import FakeOpenAIServer
    from tests.llm_client_support import expected_text, make_client, req

    path = tmp_path / "llm.sqlite"
    request = req("When did the audit start?")
    with FakeOpenAIServer() as server:
        first = make_client(server, path).complete(request)
        assert first.ok and server.request_count == 1
        key = make_client(server, path).cache_key(request)
        with sqlite3.connect(path) as conn:
            conn.execute("UPDATE kv SET value = replace(value, ?, ?) WHERE key = ?",
                         (first.text.encode(), b"Thursday", key))
        with pytest.raises(CacheIntegrityError) as caught:
            make_client(server, path).complete(request)
        assert str(caught.value).startswith(f"{path}: cache entry {key} fails its checksum")
        repaired = make_client(server, KVStore(path, repair=True)).complete(request)
        assert server.request_count == 2 and repaired.text == expected_text(request) == first.text
        assert make_client(server, path).complete(request).text == first.text and server.request_count == 2


def test_repair_cache_must_be_a_boolean():
    from harness.compose import compose_config
    from harness.config import RunConfig

    with pytest.raises(ConfigError, match="store.repair_cache='yes': must be true or false"):
        RunConfig.from_dict(compose_config(["store.repair_cache=yes"]))
    assert RunConfig.from_dict(compose_config(["store.repair_cache=true"])).store.repair_cache is True


def test_an_empty_old_file_is_upgraded_and_a_full_one_is_refused(tmp_path):
    for rows, ok in ((0, True), (2, False)):
        path = tmp_path / f"old{rows}.sqlite"
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE kv (key TEXT PRIMARY KEY, value BLOB NOT NULL)")
            conn.executemany("INSERT INTO kv VALUES (?, ?)", [(f"k{i}", b"v") for i in range(rows)])
        if ok:
            KVStore(path).put("k", b"v")
            assert KVStore(path).get("k") == b"v"
        else:
            with pytest.raises(LegacyCacheError, match=f"{path} is a cache written before checksums"):
                KVStore(path)


def test_a_tampered_reply_behind_the_proxy_is_raised_as_itself_after_the_library_swallowed_it(tmp_path):
    """mem0 / Zep call the model through the proxy and may swallow a failed call; the caller's
    ``raise_errors`` must then give the one-line integrity error, not a count of failed calls."""
    import openai

    from model_clients.llm_client import LLMClient, LLMConfig
    from model_clients.proxy import LLMProxy
    from tests.fake_openai_server import FakeOpenAIServer

    messages = [{"role": "user", "content": "Where is Oslo?"}]
    with FakeOpenAIServer() as server:
        config = LLMConfig(model="gpt-4o-mini", base_url=server.base_url, api_key_env=None, timeout_s=10, max_retries=0)
        with LLMProxy(LLMClient(config, KVStore(tmp_path / "llm.sqlite"))) as proxy:
            sdk = openai.OpenAI(base_url=proxy.base_url, api_key=proxy.token, max_retries=0, timeout=30)
            sdk.chat.completions.create(model="m", messages=messages, temperature=0)
        tamper.random_bytes(tmp_path / "llm.sqlite", 1)
        with LLMProxy(LLMClient(config, KVStore(tmp_path / "llm.sqlite"))) as proxy:
            sdk = openai.OpenAI(base_url=proxy.base_url, api_key=proxy.token, max_retries=0, timeout=30)
            with pytest.raises(openai.BadRequestError):
                sdk.chat.completions.create(model="m", messages=messages, temperature=0)
            with pytest.raises(CacheIntegrityError, match=f"{tmp_path / 'llm.sqlite'}: cache entry [0-9a-f]{{64}} fails its checksum"):
                proxy.raise_errors()
        assert server.request_count == 1
