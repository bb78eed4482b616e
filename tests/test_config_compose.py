"""Every dataset x system config composes into a RunConfig, and Mem++ on each built-in dataset has
the paper's Table 6 settings (results/paper/table6_settings.csv), read from configs/system/."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from harness.compose import compose_config
from harness.config import RunConfig

ROOT = Path(__file__).resolve().parent.parent
DATASETS = sorted(path.stem for path in (ROOT / "configs" / "dataset").glob("*.yaml"))
SYSTEMS = sorted(path.stem for path in (ROOT / "configs" / "system").glob("*.yaml"))


def _table6() -> dict[tuple[str, str], str]:
    frame = pd.read_csv(ROOT / "results" / "paper" / "table6_settings.csv", dtype=str)
    return {(row.category, row.metric): row.value for row in frame.itertuples()}


@pytest.mark.parametrize("dataset", DATASETS)
def test_every_system_composes_on_the_dataset(dataset: str):
    for system in SYSTEMS:
        config = RunConfig.from_dict(compose_config([f"dataset={dataset}", f"system={system}"]))
        assert config.dataset.name == dataset and config.system.name == system


@pytest.mark.parametrize("dataset", DATASETS)
def test_mempp_has_the_papers_table6_settings(dataset: str):
    paper = _table6()
    params = RunConfig.from_dict(compose_config([f"dataset={dataset}", "system=mempp"])).system
    weights = params.params["weights"]
    shown = "({:g}, {:g}, {:g})".format(weights["lexical"], weights["tag"], weights["vector"])
    assert shown == paper[(dataset, "weights")]
    assert params.params["candidates"] == int(paper[(dataset, "candidates")])
    assert params.k == int(paper[(dataset, "k")])
    matching = "conjunctive" if params.params["conjunctive"] else "disjunctive"
    assert matching == paper[(dataset, "lexical_matching")]
