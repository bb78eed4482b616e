"""scripts/fetch_official.py against a loopback mirror of GitHub's raw files (issues 22, 32).

The mirror serves stand-in upstream files built from ``../shared/official/templates.json`` (each
text assigned in its scope, the real LICENSE files; tests/official_texts.py) as
raw.githubusercontent.com would serve the pinned repositories, and the pins are pointed at their
bytes (the real files are not kept in ../shared). The script runs in-process so the pins reach it.
What is asserted is what the server was asked, the bytes on disk, and that the harness's own
readers accept them: the official-wording tests run on such files too.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from judges.official.texts import OFFICIAL_FILES, TEXT_PINS, OfficialTexts
from loaders.fetch import MIRROR_ENV
from memory_protocol import REPO_ROOT, cache_root
from tests.data_mirror import MirrorState, closed_port_url, lay_out_official, serve
from tests.official_texts import pin_stand_ins, stand_in_upstream

SCRIPT = REPO_ROOT / "scripts" / "fetch_official.py"
MEM0_JUDGE = "mem0/evaluation/metrics/llm_judge.py"
AUTHORS = "mem-plus-plus/eval/llm.py"
# What raw.githubusercontent.com is asked for, in the pins' order (judges/official/texts.py).
EXPECTED_PATHS = [f"/{pin.upstream.repo}/{pin.upstream.commit}/{pin.path}" for pin in OFFICIAL_FILES.values()]


@pytest.fixture
def stand_ins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    source = tmp_path / "served"
    pin_stand_ins(monkeypatch, stand_in_upstream(source))
    return source


@pytest.fixture
def mirror(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stand_ins: Path) -> Iterator[tuple[str, MirrorState]]:
    with serve(lay_out_official(tmp_path / "mirror", stand_ins)) as (url, state):
        monkeypatch.setenv(MIRROR_ENV, url)
        yield url, state


def load_cli() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fetch_official", SCRIPT)
    assert spec is not None and spec.loader is not None
    cli = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = cli  # its dataclasses look their module up while being made
    spec.loader.exec_module(cli)
    return cli


def run_script(mirror_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    """The script's ``main`` in-process (so the pins the test set reach it), as a finished process."""
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    old = os.environ.get(MIRROR_ENV)
    os.environ[MIRROR_ENV] = mirror_url
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = load_cli().main(list(args))
    finally:
        if old is None:
            os.environ.pop(MIRROR_ENV, None)
        else:
            os.environ[MIRROR_ENV] = old
    return subprocess.CompletedProcess([str(SCRIPT), *args], code, out.getvalue(), err.getvalue())


def files_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def test_first_fetch_writes_every_pinned_file_and_the_readers_verify_them(
    mirror: tuple[str, MirrorState], tmp_path: Path, stand_ins: Path
) -> None:
    url, state = mirror
    dest = tmp_path / "official"
    done = run_script(url, "--dest", str(dest))
    assert done.returncode == 0, done.stderr
    assert len(OFFICIAL_FILES) == 17 and state.paths() == EXPECTED_PATHS
    reader = OfficialTexts.search(dest)
    for local, pin in OFFICIAL_FILES.items():
        assert (dest / local).read_bytes() == (stand_ins / local).read_bytes()
        read = reader.read(local)  # raises on a wrong sha256
        assert read.path == dest / local
        assert pin.sha256 is None or hashlib.sha256(read.text.encode()).hexdigest() == pin.sha256
    texts = OfficialTexts.search(dest)
    assert all(texts.get(key).via == "upstream" for key in TEXT_PINS)  # each text checked against its pin
    lines = done.stdout.splitlines()
    assert len(lines) == 18 and sum(line.startswith("fetched ") for line in lines) == 17
    authors = next(line for line in lines if "eval/llm.py" in line)
    assert hashlib.sha256((dest / AUTHORS).read_bytes()).hexdigest() in authors and "(its texts checked)" in authors
    assert f"official files: 17 in {dest}: 17 fetched, 0 already there (from {url})" in lines[-1]
    assert not list(dest.rglob("*.part")) and not list(dest.rglob("*.unchecked"))
    note = (dest / "mem0" / "SOURCE.md").read_text()
    assert "mem0ai/mem0" in note and OFFICIAL_FILES[MEM0_JUDGE].sha256 in note and "Apache-2.0" in note
    assert {p.relative_to(dest).as_posix() for p in files_under(dest)} == {
        *OFFICIAL_FILES, "longmemeval/SOURCE.md", "mem0/SOURCE.md", "orgmembench/SOURCE.md", "mem-plus-plus/SOURCE.md"}


def fetch_with(state: MirrorState, local: str, served: bytes, tmp_path: Path) -> Path:
    """Fetch into ``tmp_path/official`` with ``served`` in place of ``local``'s bytes; exit 2 expected."""
    pin = OFFICIAL_FILES[local]
    state.replaced[f"/{pin.upstream.repo}/{pin.upstream.commit}/{pin.path}"] = served
    dest = tmp_path / "official"
    assert load_cli().main(["--dest", str(dest)]) == 2
    return dest


def test_an_authors_file_whose_text_is_not_the_pinned_one_is_not_kept(
    mirror: tuple[str, MirrorState], tmp_path: Path, stand_ins: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    served = (stand_ins / AUTHORS).read_text().replace("I don't know", "no idea").encode()
    dest = fetch_with(mirror[1], AUTHORS, served, tmp_path)
    err = capsys.readouterr().err.strip()
    assert err == (f"error: {AUTHORS}: its text ANSWER_PROMPT_TEMPLATE (<module>) is not the pinned one "
                   "(none of it was kept)")
    assert not (dest / AUTHORS).exists() and not list(dest.rglob("*.unchecked"))


def test_a_second_fetch_sends_no_request_and_says_so(mirror: tuple[str, MirrorState], tmp_path: Path) -> None:
    url, state = mirror
    dest = tmp_path / "official"
    assert run_script(url, "--dest", str(dest)).returncode == 0
    state.clear()
    again = run_script(url, "--dest", str(dest))
    assert again.returncode == 0, again.stderr
    assert state.requests == []
    assert sum("already verified, nothing sent" in line for line in again.stdout.splitlines()) == 17
    assert again.stdout.splitlines()[-1].endswith("0 fetched, 17 already there (nothing sent); "
                                                 "each checked against its pinned sha256 (eval/llm.py: its texts' pins)")


def test_force_fetches_every_file_again(mirror: tuple[str, MirrorState], tmp_path: Path) -> None:
    _, state = mirror
    cli = load_cli()
    cli.fetch_official(tmp_path, echo=lambda line: None)
    state.clear()
    report = cli.fetch_official(tmp_path, force=True, echo=lambda line: None)
    assert state.paths() == EXPECTED_PATHS and report.fetched == 17


def test_a_file_with_other_bytes_in_the_folder_is_fetched_again_alone(
    mirror: tuple[str, MirrorState], tmp_path: Path
) -> None:
    _, state = mirror
    cli = load_cli()
    cli.fetch_official(tmp_path, echo=lambda line: None)
    (tmp_path / MEM0_JUDGE).write_text("ACCURACY_PROMPT = 'edited'\n")
    state.clear()
    lines: list[str] = []
    report = cli.fetch_official(tmp_path, echo=lines.append)
    pin = OFFICIAL_FILES[MEM0_JUDGE]
    assert state.paths() == [f"/mem0ai/mem0/{pin.upstream.commit}/evaluation/metrics/llm_judge.py"]
    assert report.fetched == 1 and [line for line in lines if "replaced" in line] == [
        f"fetched {MEM0_JUDGE}: {(tmp_path / MEM0_JUDGE).stat().st_size:,} bytes, sha256 {pin.sha256[:12]}... "
        "(other bytes were there, replaced)"]
    assert OfficialTexts.search(tmp_path).read(MEM0_JUDGE).path == tmp_path / MEM0_JUDGE


def test_a_served_file_with_one_flipped_byte_is_one_line_exit_2_and_nothing_in_place(
    mirror: tuple[str, MirrorState], tmp_path: Path, stand_ins: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pin = OFFICIAL_FILES[MEM0_JUDGE]
    good = (stand_ins / MEM0_JUDGE).read_bytes()
    middle = len(good) // 2
    flipped = good[:middle] + bytes([good[middle] ^ 0x01]) + good[middle + 1:]
    dest = fetch_with(mirror[1], MEM0_JUDGE, flipped, tmp_path)
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith(f"error: {MEM0_JUDGE}: ")
    assert pin.sha256 in err and hashlib.sha256(flipped).hexdigest() in err
    assert not (dest / MEM0_JUDGE).exists() and not list(dest.rglob("*.part"))
    assert not (dest / "mem0" / "SOURCE.md").exists(), "no note claims a folder that is not complete"


def test_offline_the_script_stops_in_one_line_and_writes_nothing(tmp_path: Path, stand_ins: Path) -> None:
    dest = tmp_path / "official"
    done = run_script(closed_port_url(), "--dest", str(dest))
    assert done.returncode == 2 and done.stdout == ""
    err = done.stderr.strip()
    first = next(iter(OFFICIAL_FILES))
    assert err.count("\n") == 0 and err.startswith(f"error: {first}: cannot download ")
    assert "cannot connect" in err and MIRROR_ENV in err and "Traceback" not in err
    assert files_under(dest) == []


def test_the_default_destination_is_in_the_cache_root_and_searched_by_runs() -> None:
    cli = load_cli()
    assert cli.DEFAULT_DEST == cache_root() / "official"
    assert cli.DEFAULT_DEST in OfficialTexts.search().directories
    assert REPO_ROOT / "official" in OfficialTexts.search().directories
    assert "/official/" in (REPO_ROOT / ".gitignore").read_text().splitlines()
