"""Entry point: compose the Hydra config and hand plain dataclasses to the harness.

    python run.py                                   # Mem++ on OrgMemBench, retrieval only
    python run.py dataset=locomo system=rag_4096
    python run.py -m system.k=5,10,15,30,50,70,100  # a k sweep
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import hydra
from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

from harness.compose import register_resolvers  # ${sweep_id:} in configs/config.yaml

# Under hydra/launcher=ray, Ray folds alike lines of different jobs into "[repeated Nx across cluster]", garbling
# every job's table; the driver (this process) reads RAY_DEDUP_LOGS once, on import (ray/_private/ray_constants.py),
# so it is set before any import of Ray. A user's own value is kept.
os.environ.setdefault("RAY_DEDUP_LOGS", "0")


class RefuseKeysInEnvSettings(Callback):
    """Before Hydra writes anything: an ``*_env`` setting holding a key (``answerer.api_key_env=sk-...``)
    ends the command in one line, exit code 2."""

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        from memory_protocol import ConfigError

        from harness.validate import check_env_overrides, check_env_settings

        try:
            check_env_overrides(list(config.hydra.overrides.task))  # a sweep's values are only here
            check_env_settings(OmegaConf.to_container(config, resolve=False))
        except ConfigError as exc:
            print(f"error: {exc}", file=sys.stderr)
            sys.exit(2)

    on_multirun_start = on_run_start


class SweepSummary(Callback):
    """End of a ``-m`` sweep: one table over the jobs' run folders, and a dry run's grand total."""

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        from harness.sweep_summary import sweep_report

        report = sweep_report(str(config.hydra.sweep.dir), str(config.get("print", "headline")))
        if report:
            print(f"\n{report}")


@hydra.main(version_base="1.3", config_path="configs", config_name="config")
def main(cfg: DictConfig) -> None:
    from hydra.core.hydra_config import HydraConfig

    from harness.cli import execute

    register_resolvers()  # a launcher's worker process unpickles main and, with it, this module

    from harness.sweep_summary import POINTER_NAME

    hydra_config = HydraConfig.get()
    overrides = list(hydra_config.overrides.task)
    pointer = Path(hydra_config.runtime.output_dir) / POINTER_NAME
    code = execute(OmegaConf.to_container(cfg, resolve=True), overrides, pointer)
    if code:  # exiting with 0 here would also end a Hydra multirun after its first job
        sys.exit(code)


if __name__ == "__main__":
    main()
