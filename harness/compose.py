"""Compose a run configuration the way run.py does, for scripts and tests (Hydra's compose API)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from harness.hydra_resolvers import register_resolvers

CONFIG_DIR = Path(__file__).resolve().parent.parent / "configs"


def compose_config(overrides: list[str]) -> dict[str, Any]:
    """The resolved config for ``python run.py <overrides>``, as a plain dict."""
    register_resolvers()
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=overrides)
    raw = OmegaConf.to_container(cfg, resolve=True)
    raw.pop("hydra", None)
    return raw
