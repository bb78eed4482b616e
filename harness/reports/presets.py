"""The jobs of a table's preset, composed as ``python run.py +experiment=<preset>`` would run them and
normalised through ``RunConfig`` into the dict a run writes to ``config.json``, so they compare key by key.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from harness.config import RunConfig
from harness.reports.selection import Job

CONFIG_DIR = Path(__file__).resolve().parents[2] / "configs"
# Which preset(s) feed each table; Table 7's Full Context row is Table 1's full_context job.
TABLE_PRESETS: dict[int, tuple[str, ...]] = {1: ("table1",), 2: ("table2",), 3: ("table3",), 4: ("table4",),
                                            7: ("k_sweep", "table1")}


# Our own baselines, shown in Tables 1-3 under the same protocol as the paper's rows (no paper value).
OUR_BASELINES = ("bm25", "vector")


def preset_jobs(preset: str, extra: list[str] | None = None, config_dir: Path = CONFIG_DIR,
                systems: tuple[str, ...] = ()) -> list[Job]:
    """Every job of ``+experiment=<preset>`` (plus ``extra`` overrides), resolved; ``systems``
    adds the same jobs for other systems (e.g. our own baselines)."""
    base = [f"+experiment={preset}", *(extra or [])]
    with initialize_config_dir(config_dir=str(config_dir), version_base="1.3"):
        cfg = compose(config_name="config", overrides=base, return_hydra_config=True)
        params = OmegaConf.to_container(cfg.hydra.sweeper.params, resolve=False) or {}
        axes = [[f"{key}={value.strip()}" for value in str(values).split(",")] for key, values in params.items()]
        if systems and "system" in params:
            axes[list(params).index("system")] += [f"system={name}" for name in systems]
        jobs = []
        for combo in itertools.product(*axes) if axes else [()]:
            overrides = [*base, *combo]
            raw = OmegaConf.to_container(compose(config_name="config", overrides=overrides), resolve=True)
            raw.pop("hydra", None)
            jobs.append(Job(preset, tuple(overrides), RunConfig.from_dict(raw).as_dict()))
    return jobs


def table_jobs(table: int, extra: list[str] | None = None) -> list[Job]:
    jobs: list[Job] = []
    for preset in TABLE_PRESETS.get(table, ()):
        found = preset_jobs(preset, extra, systems=OUR_BASELINES if table in (1, 2, 3) else ())
        if preset == "table1" and table == 7:
            found = [job for job in found if job.system == "full_context"]
        jobs += found
    return jobs
