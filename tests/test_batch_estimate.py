"""``estimate=true batch=true`` prices every role's calls at the batch tier, half the live price
(issue 25's acceptance: the same command without ``batch=true`` prints about twice the dollars),
and the top-level ``batch`` reaches the answerer, the judge and a system's write-time model unless
the role sets its own."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness.compose import compose_config
from harness.config import RunConfig
from harness.config import run_identity
from harness.runner import run
from memory_protocol import ConfigError

REPO_ROOT = Path(__file__).resolve().parents[1]
ACCEPTANCE = ["system=mempp", "dataset=orgmem", "answerer=gpt-4.1-mini", "estimate=true"]


def _dry_run_output(tmp_path: Path, *extra: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")}
    env["MEMPP_CACHE_DIR"] = str(tmp_path / "cache")
    done = subprocess.run([sys.executable, str(REPO_ROOT / "run.py"), *ACCEPTANCE, *extra], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _dollars(pattern: str, text: str) -> list[float]:
    return [float(value.replace(",", "")) for value in re.findall(pattern, text)]


def test_the_acceptance_command_with_batch_prints_half_the_dollars(tmp_path: Path) -> None:
    live = _dry_run_output(tmp_path)
    batch = _dry_run_output(tmp_path, "batch=true")
    [live_total] = _dollars(r"total for this configuration: \$([\d,.]+)\n", live)
    totals = re.findall(r"total for this configuration: \$([\d,.]+) with batch=true \(batch tier where set\); "
                        r"all live: \$([\d,.]+)\n", batch)
    [(batch_total, beside)] = [(float(a), float(b)) for a, b in totals]
    assert live_total > 0.1  # a real price, not a local endpoint's 0
    assert batch_total / live_total == pytest.approx(0.5, abs=0.01)  # totals print to the cent
    assert beside == live_total
    # Per role, to the printed 1/100 of a cent: answers by gpt-4.1-mini, grades by gpt-4o-mini.
    live_costs = _dollars(r"\n  cost \$([\d,.]+) \(input", live)
    batch_costs = _dollars(r"\n  cost by batch \$([\d,.]+) \(input", batch)
    assert len(live_costs) == len(batch_costs) == 2
    for full, half in zip(live_costs, batch_costs):
        assert half == pytest.approx(full / 2, abs=0.0001)
    assert _dollars(r"the same calls live: \$([\d,.]+)", batch) == live_costs
    assert batch.count("batch tier (OpenAI Batch API: 50% of standard (help.openai.com/en/articles/9197833") == 2
    assert "o200k_base, gpt-4.1-mini's own tokenizer (offline)" in live and "chars/4 (tiktoken" not in live


def _config(tmp_path: Path, *overrides: str) -> RunConfig:
    base = ["dataset.limit=3", "answerer=gpt-4.1-mini", "estimate=true", "progress=false",
            f"store.cache_dir={tmp_path}/cache", f"store.results_dir={tmp_path}/runs"]
    return RunConfig.from_dict(compose_config([*base, *overrides]))


def test_top_level_batch_reaches_every_role_unless_the_role_sets_its_own(tmp_path: Path) -> None:
    plain = _config(tmp_path, "system=mempp_g")
    assert (plain.batch, plain.answerer.batch, plain.judge.batch, plain.write_time_batch) == (False, False, False, False)
    every = _config(tmp_path, "system=mempp_g", "batch=true")
    assert (every.batch, every.answerer.batch, every.judge.batch, every.write_time_batch) == (True, True, True, True)
    own = _config(tmp_path, "system=mempp_g", "batch=true", "judge.batch=false", "++system.llm.batch=false")
    assert (own.answerer.batch, own.judge.batch, own.write_time_batch) == (True, False, False)
    only_judge = _config(tmp_path, "judge.batch=true")
    assert (only_judge.answerer.batch, only_judge.judge.batch) == (False, True)
    # An execution setting: the run folder's hash does not move.
    assert run_identity(plain.as_dict()) == run_identity(every.as_dict())
    with pytest.raises(ConfigError, match="batch='yes'"):
        _config(tmp_path, "batch=yes")


def test_each_roles_estimate_uses_its_own_tier(tmp_path: Path, monkeypatch) -> None:
    """Answers by batch, the judge live by its own setting, and the write-time calls live whatever
    is asked (made one at a time while ingesting: harness.config), so priced live."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    live = run(_config(tmp_path, "system=mempp_g")).estimates
    mixed = run(_config(tmp_path, "system=mempp_g", "batch=true", "judge.batch=false")).estimates
    (write, answers, grades), (write_b, answers_b, grades_b) = live, mixed
    assert (write_b.cost.model, answers_b.model, grades_b.model) == ("gpt-4o-mini", "gpt-4.1-mini", "gpt-4o-mini")
    assert answers_b.batch and not grades_b.batch and not write_b.batch
    assert write_b.usd == pytest.approx(write.usd) and write_b.cost.price == write.cost.price
    assert answers_b.usd == pytest.approx(answers.usd / 2)
    assert grades_b.usd == pytest.approx(grades.usd) and grades_b.price == grades.price
    assert "write-time calls of mempp_g" in write_b.format() and "cost by batch" not in write_b.format()
