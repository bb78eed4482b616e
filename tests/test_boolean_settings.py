"""Issue 31, points 1, 10 and 11: a setting that cannot mean what it says stops the run in one line.

``system.conjunctive=no`` ran conjunctive (recall_any@10 0.740 against 0.795 for ``=false``),
``system=bm25 system.respect_as_of=no`` gave the ``=true`` figure and ``estimate=no`` made a dry run:
Hydra's command line reads ``no`` as the text "no", which ``bool()`` takes for true.
"""

from __future__ import annotations

import inspect
import typing
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.cli import execute
from harness.compose import compose_config
from harness.config import RunConfig
from harness.validate import BOOLEAN_KEYS
from memory_protocol import ConfigError

ROOT = Path(__file__).resolve().parents[1]

REFUSED = {
    "conjunctive=no": (["system.conjunctive=no"], "conjunctive='no'"),
    "conjunctive=off": (["system.conjunctive=off"], "conjunctive='off'"),
    "conjunctive=0": (["system.conjunctive=0"], "conjunctive=0"),
    "bm25 respect_as_of=no": (["system=bm25", "system.respect_as_of=no"], "system.respect_as_of='no'"),
    "estimate=no": (["estimate=no"], "estimate='no'"),
    "locomo's conjunctive=no": (["dataset=locomo", "system.conjunctive=no"], "system.conjunctive='no'"),
    "plus packing=yes": (["system=mempp_plus", "system.plus.packing=yes"], "system.plus.packing='yes'"),
    "send_dimensions=off": (["encoder=text-embedding-3-small", "encoder.send_dimensions=off"],
                            "encoder.send_dimensions='off'"),
    "answerer cache_only=yes": (["answerer=gpt-4.1-mini", "+answerer.cache_only=yes"], "answerer.cache_only='yes'"),
    "cache_only=null": (["cache_only=null"], "cache_only=null"),
    "mem0 infer=no": (["system=mem0", "system.infer=no"], "system.infer='no'"),
}


def _refused(overrides: list[str], tmp_path: Path, capsys) -> str:
    store = [f"store.{key}={tmp_path}/{folder}" for key, folder in (("cache_dir", "c"), ("results_dir", "runs"))
             if not any(o.startswith(f"store.{key}=") for o in overrides)]
    code = execute(compose_config([*overrides, *store]))
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err, err
    assert not (tmp_path / "runs").exists(), "nothing is written for a refused setting"
    return err


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_boolean_setting_that_is_not_true_or_false_is_refused_naming_key_and_value(case, tmp_path, capsys):
    overrides, shown = REFUSED[case]
    err = _refused(overrides, tmp_path, capsys)
    assert shown in err and "must be true or false" in err


@pytest.mark.parametrize("spelling", ["false", "False", "FALSE"])
def test_false_in_any_case_is_false(spelling):
    config = RunConfig.from_dict(compose_config([f"system.conjunctive={spelling}", f"estimate={spelling}"]))
    assert config.system.params["conjunctive"] is False and config.estimate is False


def _yaml_booleans(tree: Any, out: set[str]) -> None:
    if isinstance(tree, dict):
        for name, value in tree.items():
            if isinstance(value, bool):
                out.add(str(name))
            _yaml_booleans(value, out)
    elif isinstance(tree, list):
        for item in tree:
            _yaml_booleans(item, out)


def _bool_parameters(owner: Any) -> set[str]:
    """The fields (dataclass) or constructor parameters of ``owner`` annotated ``bool``."""
    if is_dataclass(owner):
        hints = typing.get_type_hints(owner)
        return {f.name for f in fields(owner) if hints.get(f.name) is bool}
    return {name for name, p in inspect.signature(owner.__init__).parameters.items() if p.annotation in (bool, "bool")}


def test_every_boolean_setting_is_among_the_checked_keys():
    from baselines.documents import BM25Memory, FullContextMemory, VectorMemory
    from harness.config import ModelSpec, StoreSpec
    from memplusplus.encoder import EncoderConfig
    from memplusplus.graph import GraphMemPP
    from memplusplus.onnx_encoder import OnnxEncoderConfig
    from memplusplus.openai_encoder import OpenAIEncoderConfig
    from memplusplus.plus import PlusOptions
    from memplusplus.settings import MemPPConfig
    from memplusplus.static_encoder import StaticEncoderConfig

    names: set[str] = set()
    for path in (ROOT / "configs").rglob("*.yaml"):
        _yaml_booleans(yaml.safe_load(path.read_text(encoding="utf-8")), names)
    owners = (RunConfig, StoreSpec, ModelSpec, MemPPConfig, PlusOptions, EncoderConfig, OnnxEncoderConfig,
              OpenAIEncoderConfig, StaticEncoderConfig, BM25Memory, VectorMemory, FullContextMemory, GraphMemPP)
    for owner in owners:
        names |= _bool_parameters(owner)
    for source in ("baselines/thirdparty/mem0.py", "baselines/thirdparty/zep.py"):  # their libraries are optional
        names |= {line.split(":")[0].strip() for line in (ROOT / source).read_text().splitlines()
                  if line.strip().endswith((": bool = True,", ": bool = False,"))}
    # batch also takes status or null (harness.config); write_time_batch is derived; chdir is Hydra's own
    assert names - BOOLEAN_KEYS == {"batch", "write_time_batch", "chdir"}


# ------------------------------------------------------------------ points 10 and 11
@pytest.mark.parametrize("overrides, shown", [
    (["encoder.max_tokens=0"], "encoder.max_tokens=0"),
    (["encoder.max_tokens=1000"], "encoder.max_tokens=1000: must be an integer from 1 to 512"),
    (["encoder=minilm_onnx", "encoder.batch_size=0"], "encoder.batch_size=0"),
    (["store.results_dir=/proc"], "store.results_dir='/proc'"),
    (["store.results_dir=/proc/self/status"], "store.results_dir='/proc/self/status'"),
    (["dataset.categories=[]"], "dataset.categories=[]"),
])
def test_a_setting_that_failed_with_a_traceback_is_one_line(overrides, shown, tmp_path, capsys):
    err = _refused(overrides, tmp_path, capsys)
    assert shown in err


@pytest.mark.parametrize("key", ["cache_dir", "results_dir"])
def test_an_empty_store_folder_is_refused_not_the_working_folder(key, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    overrides = [f"store.{key}="] + ([f"store.results_dir={tmp_path}/runs"] if key == "cache_dir" else
                                     [f"store.cache_dir={tmp_path}/c"])
    code = execute(compose_config(overrides))
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err and f"store.{key}=''" in err and "working folder" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == [], "nothing was written into the working folder"


def test_two_runs_in_the_same_second_get_two_hydra_folders():
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from harness.compose import CONFIG_DIR

    def folder() -> str:
        with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
            cfg = compose(config_name="config", return_hydra_config=True)
        return OmegaConf.select(cfg, "hydra.run.dir").rsplit("/", 1)[1]

    # Two composes can straddle a second on a loaded machine: try until a pair shares its second.
    for _ in range(20):
        first, second = folder(), folder()
        if first.split("_")[0] == second.split("_")[0]:
            break
    assert first.split("_")[0] == second.split("_")[0], "no two composes fell in the same second"
    assert first != second  # same second, own suffix


def test_a_gold_turn_dated_after_its_question_is_named_in_the_run_notes(tmp_path):
    import json

    from harness.runner import run
    from loaders import dataset_notes, load_dataset
    from tests.test_loaders_synthetic import lme_entry, write_lme

    late = lme_entry("late")
    late["haystack_dates"][1] = "2023/06/02 (Fri) 10:00"  # the answer session, after the 2023/05/30 question
    write_lme(tmp_path / "data", [lme_entry("fine"), late])
    notes = dataset_notes(load_dataset("longmemeval_s", data_dir=str(tmp_path / "data")))
    assert notes.gold_dated_after_question == ("late",) and notes.dated_before_documents == ()
    result = run(RunConfig.from_dict(compose_config([
        "dataset=longmemeval_s", f"dataset.data_dir={tmp_path / 'data'}", "system=bm25", "system.respect_as_of=true",
        "progress=false", f"store.cache_dir={tmp_path / 'cache'}", f"store.results_dir={tmp_path / 'runs'}",
    ])))
    metrics = json.loads(result.paths.metrics.read_text())
    assert metrics["stats"]["dataset_notes"] == {"gold_dated_after_question": {"count": 1, "questions": ["late"]}}
    records = {json.loads(line)["qid"]: json.loads(line) for line in result.paths.records.read_text().splitlines()}
    assert records["late"]["metrics"]["recall_any@10"] == 0.0  # what the note explains
