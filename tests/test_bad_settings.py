"""Settings and data that cannot mean anything are refused in one line naming the key, exit code 2."""

import shutil

import pytest

from harness.cli import execute
from harness.compose import compose_config
from loaders.locomo import parse_locomo_datetime
from loaders.longmemeval import parse_longmemeval_datetime
from tests.data_paths import require_data


BAD_SETTINGS = {
    "gamma zero": (["system.gamma=0"], "system.gamma=0", "> 0"),
    "gamma negative": (["system.gamma=-0.5"], "system.gamma=-0.5", "> 0"),
    "all weights zero": (["system.weights={lexical:0,tag:0,vector:0}"], "system.weights", "weight > 0"),
    "only weighted leg dropped": (["system=mempp_no_vector", "system.weights={lexical:0,tag:0,vector:4}"], "system.weights", "weight > 0"),
    "unknown leg": (["system.weights={lexical:1,tag:1,vectr:4}"], "vectr", "legs are ['lexical', 'tag', 'vector']"),
    "no model": (["answerer=openai_compatible"], "answerer.model is not set", "answerer.model=<"),
    "no base url": (["answerer=openai_compatible", "answerer.model=m"], "answerer.base_url is not set", "http://host"),
    "missing prompt": (["answerer=gpt-4.1-mini", "answerer.prompt_file=/no/such/prompt.txt"], "answerer.prompt_file", "not found"),
    "k not a number": (["system.k=abc"], "system.k='abc'", "integer >= 1"),
    "reserve within k is fine": (["system.k=5"], "system.recency_reserve=3", None),
    "reserve over k": (["system.k=5", "system.recency_reserve=6"], "system.recency_reserve=6", "from 0 to 5"),
    "negative limit": (["dataset.limit=-1"], "dataset.limit=-1", "or null"),
    "zero limit": (["dataset.limit=0"], "dataset.limit=0", "integer >= 1"),
    "bad judge runs": (["answerer=gpt-4.1-mini", "judge.runs=0"], "judge.runs=0", ">= 1"),
    "null dimensions": (["encoder=text-embedding-3-small", "encoder.dimensions=null", "estimate=true"],
                        "dimensions=null", "a number >= 1"),
    "true for a concurrency": (["answerer=gpt-4.1-mini", "answerer.concurrency=true", "estimate=true"],
                               "answerer.concurrency=true", "an integer >= 1"),
}


@pytest.mark.parametrize("case", sorted(BAD_SETTINGS))
def test_a_bad_setting_is_refused_in_one_line(case, capsys, tmp_path):
    overrides, key, allowed = BAD_SETTINGS[case]
    if allowed is None:  # a valid neighbour of the bad case: it is not refused at the edge
        from harness.config import RunConfig

        RunConfig.from_dict(compose_config(overrides))
        return
    code = execute(compose_config([*overrides, f"store.cache_dir={tmp_path}", f"store.results_dir={tmp_path}/runs"]))
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err
    assert key in err and allowed in err
    assert "None" not in err, "Hydra values are spelled null"


def test_limit_zero_stops_before_anything_is_written(capsys, tmp_path):
    # Issue 24: dataset.limit=0 printed a row of NaN and wrote an empty run folder.
    code = execute(compose_config(["dataset.limit=0", f"store.cache_dir={tmp_path}/c", f"store.results_dir={tmp_path}/runs"]))
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.count("\n") == 0 and "dataset.limit=0" in err
    assert not (tmp_path / "runs").exists() and not (tmp_path / "c").exists()


@pytest.mark.parametrize("name", ["benchmark_v0.0.jsonl", "corpus_index.jsonl"])
def test_an_empty_data_file_is_an_error_not_a_nan_summary(name, capsys, tmp_path):
    source = require_data("orgmembench")  # found as the harness finds it ($MEMPP_DATA_DIR, ...)
    shutil.copytree(source, tmp_path / "orgmembench")
    (tmp_path / "orgmembench" / "datasets" / "helix" / "medium" / name).write_text("")
    code = execute(compose_config([f"dataset.data_dir={tmp_path}", f"store.cache_dir={tmp_path}/c",
                                   f"store.results_dir={tmp_path}/runs"]))
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 2
    assert ("no questions" if name.startswith("benchmark") else f"{name}: the corpus index lists no artefacts") in err
    assert not (tmp_path / "runs").exists(), "nothing is written for an empty dataset"


@pytest.mark.parametrize("parse", [parse_locomo_datetime, parse_longmemeval_datetime])
def test_an_error_quotes_at_most_about_200_characters_of_a_bad_value(parse):
    with pytest.raises(ValueError) as caught:
        parse("7" * 5_000_000)
    message = str(caught.value)
    assert len(message) < 320 and "5,000,002 characters" in message
