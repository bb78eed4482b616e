"""How far a reader travels to follow one run: the files of ours that `harness.runner.run` reaches.

    python scripts/walk.py                       # Mem++ on OrgMemBench, retrieval only, 3 questions
    python scripts/walk.py --answered            # the same, answered and judged by a local stand-in
    python scripts/walk.py -- dataset=locomo     # any run.py overrides after --

The run is traced (sys.setprofile). Each function of ours (repository .py files outside tests/ and
this script) is read once, at its first call, in call order; consecutive functions in one file are
one stay. A reader who follows the run visits `files` files in `stays` stays, and `returns` =
stays - files times comes back to a file already left (issue 33 asks for at most 20 files and 15
returns). ``--read-first FILE`` counts a file (say the shared types of memory_protocol) as read before
the run: the reader's later visits to it are neither stays nor returns, the file still counts.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def first_calls(action) -> list[tuple[str, str]]:
    """(file, function) of every function of ours at its first call while ``action()`` runs."""
    seen: set[tuple[str, str, int]] = set()
    order: list[tuple[str, str]] = []
    tests, this_script = ROOT / "tests", Path(__file__).resolve()

    def profile(frame, event, _arg):
        if event != "call":
            return
        code = frame.f_code
        key = (code.co_filename, code.co_name, code.co_firstlineno)
        if key in seen:
            return
        seen.add(key)
        path = Path(code.co_filename)
        if (path.is_absolute() and path.suffix == ".py" and ROOT in path.parents and tests not in path.parents
                and path != this_script):
            order.append((str(path.relative_to(ROOT)), code.co_name))

    sys.setprofile(profile)
    try:
        action()
    finally:
        sys.setprofile(None)
    return order


def stays(calls: list[tuple[str, str]], read_first: Sequence[str] = ()) -> list[tuple[str, list[str]]]:
    """Consecutive calls in one file grouped: the reader's stays (files in ``read_first`` open them, once)."""
    grouped: list[tuple[str, list[str]]] = [(file, ["(read first)"]) for file in read_first]
    for file, function in calls:
        if file in read_first:
            continue
        if grouped and grouped[-1][0] == file:
            grouped[-1][1].append(function)
        else:
            grouped.append((file, [function]))
    return grouped


def start_stand_in(folder: Path) -> tuple[subprocess.Popen, str]:
    url_file = folder / "url"
    server = subprocess.Popen([sys.executable, str(ROOT / "scripts" / "serve_fake_llm.py"), "--model", "fake-llm",
                               "--url-file", str(url_file)], stdout=subprocess.DEVNULL)
    for _ in range(200):
        if url_file.exists() and url_file.read_text().strip():
            return server, url_file.read_text().strip()
        time.sleep(0.05)
    server.kill()
    raise SystemExit("error: the local stand-in server did not start")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--answered", action="store_true", help="answer and judge with a local stand-in server")
    parser.add_argument("--list", action="store_true", help="print every stay with its functions")
    parser.add_argument("--read-first", action="append", default=[], metavar="FILE",
                        help="a repository file read before the run (e.g. memory_protocol/__init__.py)")
    parser.add_argument("overrides", nargs="*", help="run.py overrides (default: dataset.limit=3)")
    args = parser.parse_args()
    read_first = []  # spelled as the trace names files (``./x.py`` and an absolute path are the same file)
    for name in args.read_first:
        path = (ROOT / name).resolve()
        if not path.is_file() or ROOT not in path.parents:
            parser.error(f"--read-first: {name} is not a file of the repository")
        read_first.append(str(path.relative_to(ROOT)))

    from harness.compose import compose_config
    from harness.config import RunConfig
    from harness.runner import run

    folder = Path(tempfile.mkdtemp(prefix="mempp-walk-"))
    overrides = ["progress=false", f"store.results_dir={folder / 'runs'}", *(args.overrides or ["dataset.limit=3"])]
    server = None
    if args.answered:
        server, url = start_stand_in(folder)
        for role in ("answerer", "judge"):
            overrides += [f"{role}=openai_compatible", f"{role}.model=fake-llm", f"{role}.base_url={url}",
                          f"{role}.api_key_env=null"]
    try:
        config = RunConfig.from_dict(compose_config(overrides))
        calls = first_calls(lambda: run(config))
    finally:
        if server is not None:
            server.kill()
    grouped = stays(calls, read_first)
    files = {file for file, _ in grouped}
    if args.list:
        for file, functions in grouped:
            print(f"{file}: {', '.join(functions)}")
    print(f"run({' '.join(overrides[2:])}): {len(calls)} functions of ours, {len(files)} files, "
          f"{len(grouped)} stays, {len(grouped) - len(files)} returns to a file already left")
    return 0


if __name__ == "__main__":
    sys.exit(main())
