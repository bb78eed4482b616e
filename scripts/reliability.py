"""The reliability suite: kills, faults, bad inputs and key leaks, measured and printed as tables.

    python scripts/reliability.py                 # prints the tables (a few minutes on 2 cores)
    python scripts/reliability.py --write         # also writes its part of results/RELIABILITY.md
    python scripts/reliability.py --data-dir D    # the benchmark data (default: as run.py finds it,
                                                  # $MEMPP_DATA_DIR first)

Each stage's table is printed as soon as it is measured, and with ``--write`` stored at once, so a
crash in a later stage loses nothing measured before it; a stage that fails becomes one row saying
so. ``--write`` replaces only the part of RESULTS between this script's markers (the sections other
scripts measured stay). The scratch folder is removed however the script ends.

Everything runs against a local fault-injecting OpenAI-compatible server (tests/fake_openai_server.py)
on OrgMemBench with a throwaway cache, never a real endpoint; its answers are fixtures, not scores.

* Kills: ``python run.py`` is killed with SIGKILL during embedding (halfway through a cold run's
  embedding phase, timed from its first stored slice), retrieval, answering and judging, then re-run; the table gives what was kept and the
  requests sent again on resume against those in flight at the kill.
* Faults: one bad reply of each kind (malformed JSON, empty choices, null content, 429 with
  Retry-After, 500, a timeout, a connection reset) and one question whose reply is always broken.
* Bad inputs: each meaningless setting and each broken data file; exit code and the one line shown.
* Key leaks: a fake key is sent to the server; run folders, caches, logs and console output are
  searched for it.
* Issue 23's hostile cases: cache bit-rot and hostile data files (the tests that run the harness on
  each), the embedded Postgres probe (root), and history, full disk, tables, sweeps, proxy and keys
  (``scripts/hostile_cases.py``).
* Issue 31's integrity cases: run folders on a full disk and under kills, keys without a known
  prefix, the proxy's body bound and a full disk under the cache (``scripts/integrity_cases.py``),
  beside what the same script measured before the fix.

Each stage lives in its own module of ``scripts/reliability_suite``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from harness.safe_write import atomic_write  # noqa: E402
from loaders import resolve_data_dir  # noqa: E402

from scripts.reliability_suite.faults import faults, key_leaks  # noqa: E402
from scripts.reliability_suite.inputs import bad_inputs  # noqa: E402
from scripts.reliability_suite.kills import kills  # noqa: E402
from scripts.reliability_suite.pinned import hostile_cases, integrity_cases, pinned_by_tests, postgres_cases  # noqa: E402
from scripts.reliability_suite.suite import Suite  # noqa: E402
from scripts.reliability_suite.tables import markdown, stage, with_section  # noqa: E402
from tests.fake_openai_server import FakeOpenAIServer  # noqa: E402

RELIABILITY_MD = ROOT / "results" / "RELIABILITY.md"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write this script's part of results/RELIABILITY.md")
    parser.add_argument("--data-dir", default=None, help="benchmark data (default: as run.py finds it)")
    args = parser.parse_args()
    started = time.monotonic()
    data_dir = resolve_data_dir(args.data_dir)
    root = Path(tempfile.mkdtemp(prefix="mempp-reliability-"))
    sections: list[tuple[str, list[str], list[list[str]]]] = []

    def report(section: tuple[str, list[str], list[list[str]]]) -> None:
        sections.append(section)
        title, header, body = section
        print(f"### {title}\n\n{markdown(header, body)}\n", flush=True)
        if args.write:
            text = "\n\n".join(f"### {t}\n\n{markdown(h, b)}" for t, h, b in sections)
            note = (f"Measured by `python scripts/reliability.py --write` on {time.strftime('%Y-%m-%d')}, "
                    f"{time.monotonic() - started:.0f} s so far, data from {data_dir}.")
            current = RELIABILITY_MD.read_text(encoding="utf-8") if RELIABILITY_MD.exists() else "# Reliability\n"
            atomic_write(RELIABILITY_MD, with_section(current, f"{note}\n\n{text}"))

    try:
        with FakeOpenAIServer() as server:
            suite = Suite(root, server, data_dir)
            warm: list[Path] = []

            def kill_stage() -> list[list[str]]:
                kill_rows, cache = kills(suite)
                warm.append(cache)
                return kill_rows

            report(stage("Kills (SIGKILL) and resume", ["stage", "kept at the kill", "on resume", "bound", "resumed run"],
                         kill_stage))
            def fault_stage() -> list[list[str]]:
                if not warm:
                    raise RuntimeError("no warm cache: the kill stage failed")
                return faults(suite, warm[0])

            report(stage("Faults injected (one bad reply each, 3 questions answered and judged)",
                         ["fault", "requests sent", "outcome"], fault_stage))
            report(stage("Bad inputs", ["input", "exit code", "verdict", "what the user sees"], lambda: bad_inputs(suite)))
            report(stage("Key leaks", ["key sent", "searched", "found"], lambda: key_leaks(suite)))
        report(stage("Cache bit-rot and hostile data (issue 23, items 1-3): each case a test that runs the harness on it",
                     ["case (test)", "outcome"], lambda: pinned_by_tests(data_dir)))
        report(stage("Embedded Postgres (issue 23, items 4-5; scripts/pg_lockdown_probe.py)", ["case", "outcome"],
                     lambda: postgres_cases(data_dir)))
        report(stage("History, disk, tables, sweeps, proxy, keys (issue 23, items 6-10; scripts/hostile_cases.py)",
                     ["case", "outcome"], lambda: hostile_cases(data_dir)))
        report(stage("Run folders, keys, the proxy's body, a full cache disk (issue 31, items 4 and 6-8; "
                     "scripts/integrity_cases.py)", ["case", "before the fix", "now"], lambda: integrity_cases(data_dir)))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"{time.monotonic() - started:.0f} s; data {data_dir}; scratch folder {root} removed")
    failed = sum(1 for _, _, body in sections for row in body if row and row[0].startswith("stage failed"))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
