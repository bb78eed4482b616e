"""Fetching OrgMemBench and LoCoMo from a loopback mirror of GitHub's raw files (issue 20).

The real fetch code runs end to end against tests/data_mirror.py; what is asserted is on disk
(bytes equal to the reference copy, no leftover .part files) and what the server was asked.
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

from loaders import load_dataset, prepare_data_dir
from loaders.fetch import (
    LOCOMO_COMMIT, LOCOMO_SHA256, MIRROR_ENV, ORGMEM_COMMIT, ORGMEM_MANIFEST, ChecksumMismatch, SourceUnreachable,
    fetch_benchmark,
)
from memory_protocol import DatasetError
from tests.data_paths import needs_data
from tests.data_mirror import DATA, MirrorState, closed_port_url, lay_out_github, serve

pytestmark = needs_data("orgmembench", "locomo/locomo10.json")

LOCOMO_PATH = f"/snap-research/locomo/{LOCOMO_COMMIT}/data/locomo10.json"
LOCAL_LOCOMO = Path("locomo") / "locomo10.json"


@pytest.fixture
def mirror(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[MirrorState]:
    with serve(lay_out_github(tmp_path / "mirror")) as (url, state):
        monkeypatch.setenv(MIRROR_ENV, url)
        yield state


def manifest() -> dict[str, str]:
    """local path under orgmembench/ -> pinned sha256, as committed."""
    rows = (line.split("  ", 1) for line in ORGMEM_MANIFEST.read_text().splitlines() if line)
    return {name: digest for digest, name in rows}


def leftovers(root: Path) -> list[Path]:
    return sorted(root.rglob("*.part"))


def test_orgmem_is_fetched_whole_then_a_second_fetch_sends_nothing(mirror: MirrorState, tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = fetch_benchmark("orgmem", data, progress=False)
    pinned = manifest()
    assert len(pinned) == 448 and len(mirror.paths()) == 448
    for name, digest in pinned.items():
        local = data / "orgmembench" / name
        assert hashlib.sha256(local.read_bytes()).hexdigest() == digest
        assert local.read_bytes() == (DATA / "orgmembench" / name).read_bytes()
    assert first.fetched == 448 and not leftovers(data)
    assert first.digest == hashlib.sha256(ORGMEM_MANIFEST.read_bytes()).hexdigest()
    assert f"448 file(s), {first.total_bytes:,} bytes" in first.line() and first.digest in first.line()

    mirror.clear()
    again = fetch_benchmark("orgmem", data, progress=False)
    assert mirror.requests == [] and again.fetched == 0
    episodes = load_dataset("orgmem", data_dir=data)
    assert len(episodes[0].documents) == 443 and len(episodes[0].questions) == 73


def test_the_files_a_run_checks_for_are_written_last(mirror: MirrorState, tmp_path: Path) -> None:
    fetch_benchmark("orgmem", tmp_path / "data", progress=False)
    last_three = [p.rsplit("/", 1)[-1] for p in mirror.paths()[-3:]]
    assert sorted(last_three) == ["benchmark_v0.0.jsonl", "corpus_index.jsonl", "events.jsonl"]


def test_locomo_fetch_reports_its_pinned_hash(mirror: MirrorState, tmp_path: Path) -> None:
    report = fetch_benchmark("locomo", tmp_path, progress=False)
    assert (tmp_path / LOCAL_LOCOMO).read_bytes() == (DATA / LOCAL_LOCOMO).read_bytes()
    assert mirror.paths() == [LOCOMO_PATH]
    assert LOCOMO_SHA256 in report.line() and "1 fetched" in report.line()


def test_wrong_bytes_on_the_server_are_refused_in_one_line_and_nothing_is_left(
    mirror: MirrorState, tmp_path: Path
) -> None:
    mirror.replaced[LOCOMO_PATH] = b"[]"
    with pytest.raises(ChecksumMismatch) as caught:
        fetch_benchmark("locomo", tmp_path, progress=False)
    message = str(caught.value)
    assert "\n" not in message and "locomo10.json" in message
    assert LOCOMO_SHA256 in message and hashlib.sha256(b"[]").hexdigest() in message
    assert not (tmp_path / LOCAL_LOCOMO).exists() and not leftovers(tmp_path)


def test_a_folder_that_cannot_be_written_is_one_line_not_a_traceback(mirror: MirrorState, tmp_path: Path) -> None:
    # A file where the benchmark's folder should be: writing fails with an OSError, as on a full disk.
    (tmp_path / "locomo").write_text("not a folder")
    with pytest.raises(DatasetError) as caught:
        fetch_benchmark("locomo", tmp_path, progress=False)
    message = str(caught.value)
    assert "\n" not in message and "locomo10.json" in message and "cannot write the download" in message
    assert not leftovers(tmp_path)


def test_the_cli_prints_a_mismatch_as_one_line_and_exits_2(
    mirror: MirrorState, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mirror.replaced[LOCOMO_PATH] = b"[]"
    spec = importlib.util.spec_from_file_location("fetch_data", Path(__file__).parents[1] / "scripts" / "fetch_data.py")
    assert spec is not None and spec.loader is not None
    cli = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cli)
    assert cli.main(["locomo", "--data-dir", str(tmp_path), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("error: locomo:") and LOCOMO_SHA256 in err


def test_a_corrupted_file_in_the_cache_is_fetched_again_alone(mirror: MirrorState, tmp_path: Path) -> None:
    fetch_benchmark("orgmem", tmp_path, progress=False)
    victim = "datasets/helix/medium/corpus/EV-2023-002/ART-EV-2023-002-001.md"
    (tmp_path / "orgmembench" / victim).write_text("tampered")
    mirror.clear()
    report = fetch_benchmark("orgmem", tmp_path, progress=False)
    assert mirror.paths() == [f"/PandelisZ/OrgMemBench/{ORGMEM_COMMIT}/{victim}"]
    assert report.fetched == 1 and report.repaired == 1 and "1 corrupted, replaced" in report.line()
    assert (tmp_path / "orgmembench" / victim).read_bytes() == (DATA / "orgmembench" / victim).read_bytes()


def test_a_download_cut_halfway_leaves_nothing_and_the_next_fetch_completes(
    mirror: MirrorState, tmp_path: Path
) -> None:
    mirror.cut_halfway.add(LOCOMO_PATH)
    with pytest.raises(SourceUnreachable):
        fetch_benchmark("locomo", tmp_path, progress=False)
    assert not (tmp_path / LOCAL_LOCOMO).exists() and not leftovers(tmp_path)
    mirror.cut_halfway.clear()
    fetch_benchmark("locomo", tmp_path, progress=False)
    assert hashlib.sha256((tmp_path / LOCAL_LOCOMO).read_bytes()).hexdigest() == LOCOMO_SHA256


def test_a_leftover_part_file_from_a_killed_fetch_is_redone(mirror: MirrorState, tmp_path: Path) -> None:
    part = tmp_path / "locomo" / "locomo10.json.part"
    part.parent.mkdir(parents=True)
    part.write_bytes((DATA / LOCAL_LOCOMO).read_bytes()[:1000])
    report = fetch_benchmark("locomo", tmp_path, progress=False)
    assert report.fetched == 1 and not part.exists()
    assert hashlib.sha256((tmp_path / LOCAL_LOCOMO).read_bytes()).hexdigest() == LOCOMO_SHA256


def test_a_named_directory_without_the_benchmark_is_fetched_into(mirror: MirrorState, tmp_path: Path) -> None:
    assert prepare_data_dir("locomo", tmp_path, progress=False) == tmp_path.resolve()
    assert mirror.paths() == [LOCOMO_PATH]
    mirror.clear()
    assert prepare_data_dir("locomo", tmp_path, progress=False) == tmp_path.resolve()
    assert mirror.requests == [], "a directory that holds the benchmark is used as it is"


def test_offline_the_run_stops_in_one_line_naming_files_command_and_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(MIRROR_ENV, closed_port_url())
    with pytest.raises(DatasetError) as caught:
        prepare_data_dir("orgmem", tmp_path, progress=False)
    message = str(caught.value)
    assert "\n" not in message
    assert "python scripts/fetch_data.py orgmem" in message and str(tmp_path) in message
    assert "448 data file(s) missing" in message and "cannot connect" in message
    assert not any(tmp_path.rglob("*.md")), "nothing was fetched"


def test_a_named_directory_that_does_not_exist_is_an_error_not_a_fetch(mirror: MirrorState, tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="does not exist"):
        prepare_data_dir("locomo", tmp_path / "typo", progress=False)
    assert mirror.requests == [] and not (tmp_path / "typo").exists()
