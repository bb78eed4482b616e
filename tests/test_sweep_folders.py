"""One multirun folder per sweep, even for two sweeps started in the same second (issue 23, item 8).

Hydra names the folder after ``${now:...}`` to the second; two sweeps started together used to share
it, and sweep A's end-of-sweep summary listed sweep B's job. The folder now ends in ``${sweep_id:}``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from hydra import compose, initialize_config_dir
from hydra.core.utils import setup_globals
from omegaconf import OmegaConf

from harness.compose import CONFIG_DIR
from harness.compose import register_resolvers

ROOT = Path(__file__).resolve().parents[1]
HANG_GUARD_S = 1800
FROZEN = (2026, 1, 2, 3, 4, 5)  # both sweeps "start" at 03:04:05

# run.py with Hydra's clock stopped at FROZEN: the ${now:...} resolver reads hydra.core.utils.datetime.
FROZEN_RUN = f"""
import datetime, runpy, sys
import hydra.core.utils as hydra_utils

class Frozen(datetime.datetime):
    @classmethod
    def now(cls, tz=None):
        return cls(*{FROZEN})

hydra_utils.datetime = Frozen
sys.path.insert(0, {str(ROOT)!r})
sys.argv = ["run.py", *sys.argv[1:]]
runpy.run_path({str(ROOT / "run.py")!r}, run_name="__main__")
"""


def _sweep_dir(frozen_now: str) -> str:
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        OmegaConf.register_new_resolver("now", lambda pattern: frozen_now, use_cache=True, replace=True)
        try:
            cfg = compose(config_name="config", overrides=[], return_hydra_config=True)
            return str(cfg.hydra.sweep.dir)
        finally:
            setup_globals()  # Hydra's own ${now:...} back


def test_two_sweeps_composed_at_the_same_time_get_two_folders():
    register_resolvers()
    first, second = _sweep_dir("03-04-05"), _sweep_dir("03-04-05")
    assert first != second
    pid = os.getpid()
    for folder in (first, second):
        assert re.fullmatch(rf"outputs/hydra/multirun/03-04-05/03-04-05_{pid}-[0-9a-f]{{6}}", folder), folder


def _start_sweep(k: int, tmp: Path) -> subprocess.Popen:
    env = {**os.environ, "MEMPP_RESULTS_DIR": str(tmp / "runs")}
    return subprocess.Popen(
        [sys.executable, "-c", FROZEN_RUN, "-m", f"system.k={k}", "dataset.limit=3", "progress=false"],
        cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def test_two_sweeps_started_in_the_same_second_each_summarise_their_own_job(tmp_path):
    sweeps = {k: _start_sweep(k, tmp_path) for k in (5, 7)}
    outputs = {k: proc.communicate(timeout=HANG_GUARD_S) for k, proc in sweeps.items()}
    folders = {}
    for k, (stdout, stderr) in outputs.items():
        assert sweeps[k].returncode == 0, stderr[-2000:]
        match = re.search(r"Sweep of (\d+) job\(s\), (\S+):", stdout)
        assert match, stdout[-2000:]
        assert match.group(1) == "1"  # its own job only, not the other sweep's
        folders[k] = Path(match.group(2))
        jobs = [line for line in stdout.splitlines() if line.startswith("| system.k=")]
        assert [line.split()[1] for line in jobs] == [f"system.k={k}"]
    assert folders[5] != folders[7]
    for folder in folders.values():
        assert folder.parent == Path("outputs/hydra/multirun/2026-01-02")
        assert folder.name.startswith("03-04-05_")
        assert (tmp_path / folder / "0" / "sweep_job.json").is_file()
