"""The reliability suite: kills, faults, bad inputs, key leaks and the hostile cases, as tables.

    python scripts/reliability.py                  # every stage (a few minutes on 2 cores)
    python scripts/reliability.py --write          # also writes its part of results/RELIABILITY.md
    python scripts/reliability.py --data-dir D     # the benchmark data (default: as run.py finds it)
    python scripts/reliability.py --cases hostile --code /tmp/old-clone   # one group of cases on a checkout
    python scripts/reliability.py --cases silent|integrity|postgres [--only WORDS]

The live stages run ``run.py`` on OrgMemBench against the fault-injecting server of
tests/fake_openai_server.py (fixture answers: plumbing, never scores): SIGKILLs then a resume, one bad
reply of each kind, each bad setting or data file, a search for the fake key. The case groups run in
subprocesses on ``--code`` (the before column of a fix); full-disk cases and the Postgres probe need
root. Each table is printed (``--write``: stored) as soon as measured; a failing stage is one row.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from script_common import ROOT, markdown

from harness.safe_write import atomic_write
from scripts.reliability_suite.common import GUARD_S, Suite, measure, stage, with_section

RELIABILITY_MD = ROOT / "results" / "RELIABILITY.md"


def case_groups() -> dict:
    from scripts.reliability_suite import hostile, integrity, silent

    return {"hostile": {**hostile.CASES, **silent.CASES}, "silent": silent.CASES, "integrity": integrity.CASES}


def pinned_by_tests(data_dir: Path) -> list[list[str]]:
    """The cache bit-rot and hostile-data cases, each a test that runs the harness on the bad input."""
    files = ["tests/test_cache_integrity.py", "tests/test_loaders_hostile.py"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MEMPP_DATA_DIR": str(data_dir)}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", *files], cwd=ROOT,
                          env=env, text=True, capture_output=True, timeout=GUARD_S)
    rows = [[line.split(" ", 1)[1].split(" - ")[0], line.split(" ", 1)[0].lower()] for line in proc.stdout.splitlines()
            if line.split(" ", 1)[0] in ("PASSED", "FAILED", "ERROR", "SKIPPED")]
    if not rows:
        raise RuntimeError(f"pytest gave no results (exit {proc.returncode}): {proc.stdout.strip()[-200:]}")
    return rows


def integrity_rows() -> list[list[str]]:
    from scripts.reliability_suite.integrity import BEFORE_ISSUE_31, CASES

    return [[name, BEFORE_ISSUE_31.get(name, "not measured"), outcome]
            for name, outcome in measure(CASES, ROOT, prefix="mempp-integrity-")]


def suite(write: bool, data_dir: Path) -> int:
    from scripts.reliability_suite.live import bad_inputs, faults, key_leaks, kills
    from scripts.reliability_suite.postgres import postgres_cases
    from tests.fake_openai_server import FakeOpenAIServer

    started = time.monotonic()
    root = Path(tempfile.mkdtemp(prefix="mempp-reliability-"))
    sections: list[tuple[str, list[str], list[list[str]]]] = []

    def report(title: str, header: list[str], measure_rows) -> None:
        sections.append(stage(title, header, measure_rows))
        print(f"### {title}\n\n{markdown(header, sections[-1][2], numbers=False)}\n", flush=True)
        if write:
            text = "\n\n".join(f"### {t}\n\n{markdown(h, b, numbers=False)}" for t, h, b in sections)
            note = (f"Measured by `python scripts/reliability.py --write` on {time.strftime('%Y-%m-%d')}, "
                    f"{time.monotonic() - started:.0f} s so far, data from {data_dir}.")
            current = RELIABILITY_MD.read_text(encoding="utf-8") if RELIABILITY_MD.exists() else "# Reliability\n"
            atomic_write(RELIABILITY_MD, with_section(current, f"{note}\n\n{text}"))

    try:
        with FakeOpenAIServer() as server:
            live = Suite(root, server, data_dir)
            report("Kills (SIGKILL) and resume", ["stage", "kept at the kill", "on resume", "bound", "resumed run"],
                   lambda: kills(live))
            report("Faults injected (one bad reply each, 3 questions answered and judged)",
                   ["fault", "requests sent", "outcome"], lambda: faults(live))
            report("Bad inputs", ["input", "exit code", "verdict", "what the user sees"], lambda: bad_inputs(live))
            report("Key leaks", ["key sent", "searched", "found"], lambda: key_leaks(live))
        report("Cache bit-rot and hostile data (issue 23, items 1-3): each case a test that runs the harness on it",
               ["case (test)", "outcome"], lambda: pinned_by_tests(data_dir))
        report("Embedded Postgres (issue 23, items 4-5; reliability.py --cases postgres)", ["case", "outcome"],
               postgres_cases)
        report("History, disk, tables, sweeps, proxy, keys (issue 23, items 6-10; reliability.py --cases hostile)",
               ["case", "outcome"], lambda: measure(case_groups()["hostile"], ROOT))
        report("Run folders, keys, the proxy's body, a full cache disk (issue 31, items 4 and 6-8; "
               "reliability.py --cases integrity)", ["case", "before the fix", "now"], integrity_rows)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"{time.monotonic() - started:.0f} s; data {data_dir}; scratch folder {root} removed")
    return 1 if any(row and row[0].startswith("stage failed") for _, _, body in sections for row in body) else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="write this script's part of results/RELIABILITY.md")
    parser.add_argument("--data-dir", default=None, help="benchmark data (default: as run.py finds it)")
    parser.add_argument("--cases", choices=["hostile", "silent", "integrity", "postgres"], help="only this group")
    parser.add_argument("--code", type=Path, default=ROOT, help="--cases: the checkout to measure (default: this one)")
    parser.add_argument("--only", default="", help="--cases: words of the case names to run, comma-separated")
    args = parser.parse_args(argv)
    from loaders import resolve_data_dir

    data_dir = resolve_data_dir(args.data_dir)
    os.environ["MEMPP_DATA_DIR"] = str(data_dir)  # the cases' subprocesses read the same data
    if args.cases is None:
        return suite(args.write, data_dir)
    if args.cases == "postgres":
        from scripts.reliability_suite.postgres import postgres_cases

        rows = postgres_cases()
    else:
        rows = measure(case_groups()[args.cases], args.code, args.only, prefix=f"mempp-{args.cases}-")
    print(markdown(["case", "outcome"], rows, numbers=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
