"""What the scripts share: this checkout on ``sys.path`` (after ``$PYTHONPATH``, so a copy named there
is the one measured), a run composed as run.py does, rows as a Markdown table, timings."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
_FIRST = [entry for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry]
if str(ROOT) not in sys.path:
    sys.path.insert(1 + len(_FIRST) if _FIRST else 0, str(ROOT))


def run_config(*overrides: str):
    """The ``RunConfig`` ``python run.py OVERRIDES`` would run."""
    from harness.compose import compose_config
    from harness.config import RunConfig

    return RunConfig.from_dict(compose_config(list(overrides)))


def run_with(*overrides: str, cli: list[str] | None = None):
    """``harness.runner.run`` on the composed config, without progress bars (``cli``: the overrides
    the run records, as run.py passes them)."""
    from harness.runner import run

    return run(run_config(*overrides, "progress=false"), **({"overrides": cli} if cli is not None else {}))


def markdown(header: Sequence[str], rows: Sequence[Sequence[object]], **options: Any) -> str:
    """``rows`` (short ones padded) under ``header`` through the one table writer, ``format_table``
    (``options``: its ``numbers``, ``align``, ``floatfmt``)."""
    import pandas as pd

    from judges.aggregate import format_table

    padded = [[*row, *[""] * (len(header) - len(row))] for row in rows]
    return format_table(pd.DataFrame(padded, columns=list(header)), index=False, **options)


def clocked(calls: Sequence[Callable[[], object]], cpu_of: Callable[[], float] = time.process_time):
    """Each zero-argument call once: (its results, wall seconds, CPU seconds by ``cpu_of``)."""
    results, walls, cpus = [], [], []
    for call in calls:
        c0, w0 = cpu_of(), time.perf_counter()
        results.append(call())
        walls.append(time.perf_counter() - w0)
        cpus.append(cpu_of() - c0)
    return results, walls, cpus


def git_commit() -> str:
    """This checkout's short commit ("" outside git), for the pages the scripts write."""
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
