"""Compose a run configuration the way run.py does, for scripts and tests (Hydra's compose API), and
the ``${sweep_id:}`` resolver of configs/config.yaml: ``<pid>-<6 hex>``, so two sweeps started in
the same second get two folders (cached in the config like ``${now:...}``, so the launcher, jobs and
end-of-sweep callback agree)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

CONFIG_DIR = Path(__file__).resolve().parent.parent / "configs"
SWEEP_ID = "sweep_id"


def fresh_sweep_id() -> str:
    return f"{os.getpid()}-{secrets.token_hex(3)}"


def register_resolvers() -> None:
    """Idempotent: run.py, compose and a launcher's workers call it."""
    if not OmegaConf.has_resolver(SWEEP_ID):
        OmegaConf.register_new_resolver(SWEEP_ID, fresh_sweep_id, use_cache=True)


def compose_config(overrides: list[str]) -> dict[str, Any]:
    """The resolved config for ``python run.py <overrides>``, as a plain dict."""
    register_resolvers()
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=overrides)
    raw = OmegaConf.to_container(cfg, resolve=True)
    raw.pop("hydra", None)
    return raw


register_resolvers()
