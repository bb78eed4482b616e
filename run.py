"""Entry point: compose the Hydra config and hand plain dataclasses to the harness.

    python run.py                                   # Mem++ on OrgMemBench, retrieval only
    python run.py dataset=locomo system=rag_4096
    python run.py -m system.k=5,10,15,30,50,70,100  # a k sweep
"""

from __future__ import annotations

import sys

import hydra
from omegaconf import DictConfig, OmegaConf


@hydra.main(version_base="1.3", config_path="configs", config_name="config")
def main(cfg: DictConfig) -> None:
    from hydra.core.hydra_config import HydraConfig

    from harness.cli import execute

    overrides = list(HydraConfig.get().overrides.task)
    code = execute(OmegaConf.to_container(cfg, resolve=True), overrides)
    if code:  # exiting with 0 here would also end a Hydra multirun after its first job
        sys.exit(code)


if __name__ == "__main__":
    main()
