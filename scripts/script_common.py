"""What the measurement scripts share: this checkout on ``sys.path`` (after ``$PYTHONPATH``, so a
copy named there is the one measured), a run composed as run.py does, and their Markdown tables."""

from __future__ import annotations

import os
import sys
from collections.abc import Container, Sequence
from pathlib import Path

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


def pipe_table(header: Sequence[str], rows: Sequence[Sequence[object]], right: Container[int] = ()) -> str:
    """A Markdown pipe table, unpadded; the columns numbered in ``right`` are right-aligned (``---:``)."""
    rule = "|" + "".join("---:|" if i in right else "---|" for i in range(len(header)))
    return "\n".join(["| " + " | ".join(header) + " |", rule, *("| " + " | ".join(map(str, row)) + " |" for row in rows)])
