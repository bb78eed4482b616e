"""What the measurement scripts share: this checkout on ``sys.path`` and a run composed as run.py does."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


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
