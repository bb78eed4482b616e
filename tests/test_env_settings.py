"""A key given by mistake in an *_env setting is refused in one line before anything is written (issue 23, item 10).

``answerer.api_key_env=sk-...`` used to be copied into config.json, metrics.json, history.jsonl and
Hydra's .hydra/*.yaml. The end-to-end tests run run.py in a scratch folder and search every file
under it (Hydra's outputs/, the results store, the cache) for the fake key.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.compose import compose_config
from harness.config import RunConfig
from harness.validate import check_env_overrides, check_env_settings, problem
from memory_protocol import ConfigError

ROOT = Path(__file__).resolve().parents[1]
FAKE_KEY = "sk-proj-h9FakeKeyDoNotUse0123456789abcdef"


def _run_py(args: list[str], folder: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "MEMPP_RESULTS_DIR": str(folder / "runs"), "MEMPP_CACHE_DIR": str(folder / "cache")}
    return subprocess.run([sys.executable, str(ROOT / "run.py"), *args], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=600)


def _files_holding(folder: Path, text: str) -> list[str]:
    return [str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and text.encode() in p.read_bytes()]


@pytest.mark.parametrize("args", [
    ["answerer=gpt-4o-mini", f"answerer.api_key_env={FAKE_KEY}"],
    ["-m", "answerer=gpt-4o-mini", f"judge.api_key_env=OPENAI_API_KEY,{FAKE_KEY}"],  # a sweep's second value
    ["system=mem0", f"system.llm.api_key_env={FAKE_KEY}"],
], ids=["run", "sweep", "system.llm"])
def test_a_key_in_an_env_setting_is_refused_before_anything_is_written(args, tmp_path):
    proc = _run_py([*args, "dataset.limit=1", "progress=false"], tmp_path)
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "_env='sk-…'" in lines[0], proc.stderr
    assert FAKE_KEY[3:8] not in proc.stdout + proc.stderr  # only the prefix is shown
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no outputs/hydra, no run folder, no cache
    assert _files_holding(tmp_path, FAKE_KEY) == []


def test_the_run_config_refuses_it_too(tmp_path):
    """Scripts that compose a run without run.py (check_regression, plus_ablation) meet the same check."""
    raw = compose_config(["answerer=gpt-4o-mini", f"answerer.api_key_env={FAKE_KEY}", f"store.results_dir={tmp_path}"])
    with pytest.raises(ConfigError, match=r"answerer\.api_key_env='sk-…' \(\d+ characters\) looks like a key") as caught:
        RunConfig.from_dict(raw)
    assert FAKE_KEY[3:] not in str(caught.value)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("value, refused", [
    ("OPENAI_API_KEY", False), ("ANTHROPIC_API_KEY", False), ("my_key_2", False), (None, False),
    ("sk-abc", True), ("sk_live_abc", True), ("AIzaSyA1b2C3", True), ("hf_abcdef", True),
    ("OPENAI-API-KEY", True), ("1KEY", True), ("a b", True), ("", True),
    ("Xy7Qm2Lp9Rt4Vw8Zk3Nb6Hd1", True),  # 24 characters of mixed case and digits: a token
])
def test_what_counts_as_a_variable_name(value, refused):
    assert (problem(value) is not None) == refused


def test_the_shipped_configs_name_variables():
    for choice in ("answerer=gpt-4o-mini", "answerer=claude-sonnet-4-6", "answerer=openai_compatible",
                   "system=mem0", "system=zep", "encoder=text-embedding-3-small"):
        check_env_settings(compose_config([choice]))
    check_env_overrides(["answerer.api_key_env=null", "judge.api_key_env=MY_KEY,OTHER_KEY", "system.k=5,10"])


# Issue 31, item 6: keys without a known prefix passed the guard and were written to four files.
HEX_KEY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"  # 64 hex digits, a letter first
AWS_KEY = "AKIAZ7QX4M2N6PLRT3VW"


@pytest.mark.parametrize("key", [HEX_KEY, AWS_KEY], ids=["64-hex", "AKIA"])
def test_a_key_without_a_known_prefix_is_refused_before_anything_is_written(key, tmp_path):
    proc = _run_py(["answerer=gpt-4o-mini", f"answerer.api_key_env={key}", "dataset.limit=1", "progress=false"], tmp_path)
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: answerer.api_key_env='{key[:3]}…' ({len(key)} characters) ")
    assert key[3:9] not in proc.stdout + proc.stderr  # never echoed beyond its first characters
    assert sorted(p.name for p in tmp_path.iterdir()) == [] and _files_holding(tmp_path, key) == []


@pytest.mark.parametrize("value, refused", [
    (HEX_KEY, True), (AWS_KEY, True), ("ASIAJ2K4L6M8N0P2Q4R6", True),
    ("f0e1d2c3b4a5968778695a4b3c2d1e0f", True),  # 32 hex digits
    ("MY_LONG_PROJECT_OPENAI_API_KEY_FOR_TESTING", False), ("AZURE_OPENAI_API_KEY_2", False),
    ("QWEN2_5_72B_INSTRUCT_KEY", False), ("DEEPSEEK_V3_0324_API_KEY", False), ("AKIA_KEY_FOR_ME", False),
])
def test_long_random_names_are_keys_unless_such_a_variable_is_set(value, refused):
    assert (problem(value, environ={}) is not None) == refused
    if refused and value not in (AWS_KEY, "ASIAJ2K4L6M8N0P2Q4R6"):  # a set variable of that name: a name after all
        assert problem(value, environ={value: "the key"}) is None


def test_the_override_check_refuses_them_too():
    for value in (HEX_KEY, AWS_KEY):
        with pytest.raises(ConfigError, match=r"judge\.api_key_env='...…'") as caught:
            check_env_overrides([f"judge.api_key_env=OPENAI_API_KEY,{value}"])
        assert value[3:] not in str(caught.value)
