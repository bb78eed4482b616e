"""The config resolvers run.py's Hydra config uses beyond Hydra's own (registered on import).

``${sweep_id:}`` names one sweep: the process id and a random part (``4182-9f3a1c``). The multirun
folder is ``outputs/hydra/multirun/<date>/<time>_<sweep_id>``, so two sweeps started in the same
second get two folders, and each end-of-sweep summary lists its own jobs only. The value is cached
in the config (as Hydra caches ``${now:...}``) and Hydra copies that cache into every job's config,
so the launcher, the jobs and the end-of-sweep callback all see the same folder.
"""

from __future__ import annotations

import os
import secrets

from omegaconf import OmegaConf

SWEEP_ID = "sweep_id"


def fresh_sweep_id() -> str:
    """``<pid>-<6 hex>``: distinct for two live processes (pid) and across machines (random part)."""
    return f"{os.getpid()}-{secrets.token_hex(3)}"


def register_resolvers() -> None:
    """Register the resolvers once (idempotent: run.py, compose and a launcher's workers call it)."""
    if not OmegaConf.has_resolver(SWEEP_ID):
        OmegaConf.register_new_resolver(SWEEP_ID, fresh_sweep_id, use_cache=True)


register_resolvers()
