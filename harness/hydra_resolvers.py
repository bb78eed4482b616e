"""``${sweep_id:}``: ``<pid>-<6 hex>``, so two sweeps started in the same second get two folders.
Cached in the config like ``${now:...}``, so the launcher, jobs and end-of-sweep callback agree."""

from __future__ import annotations

import os
import secrets

from omegaconf import OmegaConf

SWEEP_ID = "sweep_id"


def fresh_sweep_id() -> str:
    return f"{os.getpid()}-{secrets.token_hex(3)}"


def register_resolvers() -> None:
    """Idempotent: run.py, compose and a launcher's workers call it."""
    if not OmegaConf.has_resolver(SWEEP_ID):
        OmegaConf.register_new_resolver(SWEEP_ID, fresh_sweep_id, use_cache=True)


register_resolvers()
