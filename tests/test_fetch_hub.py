"""Fetching LongMemEval_S through huggingface_hub from a loopback fake of the hub (issue 20).

The fetch runs as ``scripts/fetch_data.py`` in a subprocess: huggingface_hub reads HF_HUB_OFFLINE
once, at import, and CI exports it, so only a fresh process can be online against the fake.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from loaders import load_dataset
from loaders.reading import JsonListStream
from loaders.fetch import LONGMEMEVAL_REVISION
from tests.data_mirror import DATA, ROOT, MirrorState, serve
from tests.data_paths import needs_data

REBUILD = DATA / "longmemeval" / "longmemeval_s_cleaned_499.json.gz"
HUB_PATH = f"/datasets/xiaowu0162/longmemeval-cleaned/resolve/{LONGMEMEVAL_REVISION}/longmemeval_s_cleaned.json"

pytestmark = needs_data("longmemeval/longmemeval_s_cleaned_499.json.gz")


def three_entries() -> bytes:
    stream = JsonListStream(REBUILD)
    entries = list(itertools.islice(stream, 3))
    stream.close()
    return json.dumps(entries).encode()


def fetch_cli(data: Path, endpoint: str, hf_home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_OFFLINE"))}
    env.update(HF_ENDPOINT=endpoint, HF_HOME=str(hf_home), HF_HUB_DISABLE_TELEMETRY="1")
    command = [sys.executable, "scripts/fetch_data.py", "longmemeval_s", "--data-dir", str(data), "--no-progress"]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_the_hub_file_is_fetched_recorded_reused_and_repaired(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    body = three_entries()
    digest = hashlib.sha256(body).hexdigest()
    data, hf_home = tmp_path / "data", tmp_path / "hf"
    dest = data / "longmemeval" / "longmemeval_s_cleaned.json"
    with serve(tmp_path) as (url, state):
        state.hub_files[HUB_PATH] = body

        first = fetch_cli(data, url, hf_home)
        assert first.returncode == 0, first.stderr
        assert dest.read_bytes() == body and not list(dest.parent.glob("*.part"))
        record = json.loads((dest.parent / "longmemeval_s_cleaned.json.fetched.json").read_text())
        assert record["sha256"] == digest and record["revision"] == LONGMEMEVAL_REVISION
        assert digest in first.stdout and "1 fetched" in first.stdout
        assert state.paths("GET") == [HUB_PATH] and any(hf_home.rglob("snapshots/*/longmemeval_s_cleaned.json"))

        state.clear()
        second = fetch_cli(data, url, hf_home)
        assert second.returncode == 0, second.stderr
        assert state.requests == [] and "0 fetched, 1 already there" in second.stdout

        dest.write_bytes(body[:100])  # corrupted in place (the hub cache's copy may share these bytes)
        third = fetch_cli(data, url, hf_home)
        assert third.returncode == 0, third.stderr
        assert state.paths("GET") == [HUB_PATH] and dest.read_bytes() == body
        assert "1 corrupted, replaced" in third.stdout

    with caplog.at_level(logging.INFO, logger="loaders.longmemeval"):
        episodes = load_dataset("longmemeval_s", data_dir=data)
    assert len(episodes) == 3
    assert any("longmemeval_s_cleaned.json" in r.message and "3 questions" in r.message for r in caplog.records)


def test_an_unreachable_hub_is_one_line_and_exit_2(tmp_path: Path) -> None:
    with serve(tmp_path) as (url, state):  # serves nothing at the hub path: 404
        proc = fetch_cli(tmp_path / "data", url, tmp_path / "hf")
    assert proc.returncode == 2
    err = proc.stderr.strip()
    assert err.startswith("error: longmemeval_s:") and "\n" not in err
    assert not (tmp_path / "data" / "longmemeval" / "longmemeval_s_cleaned.json").exists()


@pytest.mark.parametrize("offline", [True, False])
def test_offline_the_hub_file_fails_at_once_with_one_line(tmp_path: Path, offline: bool) -> None:
    """With HF_HUB_OFFLINE set, or with nothing listening at the endpoint, the fetch stops at once
    (huggingface_hub's retries took about 40 s) with one line and exit 2."""
    import time

    from tests.data_mirror import closed_port_url

    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_OFFLINE"))}
    env.update(HF_ENDPOINT=closed_port_url(), HF_HOME=str(tmp_path / "hf"), HF_HUB_DISABLE_TELEMETRY="1")
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    command = [sys.executable, "scripts/fetch_data.py", "longmemeval_s", "--data-dir", str(tmp_path / "data"),
               "--no-progress"]
    started = time.perf_counter()
    proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    took = time.perf_counter() - started
    err = proc.stderr.strip()
    assert proc.returncode == 2 and err.startswith("error: longmemeval_s:") and "\n" not in err, err
    assert ("HF_HUB_OFFLINE is set" in err) if offline else ("cannot be reached" in err), err
    assert took < 30, took  # the process start and imports; no retries
