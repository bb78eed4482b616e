"""Every job of every table preset embeds with the paper's encoder (issue 22, item 3).

Expected values come from the transcribed paper, never from a constant here: Mem++ and its variants
from Table 6 (results/paper/table6_settings.csv, per benchmark), the retrieval-based baselines from
results/paper/baseline_settings.csv ("All retrieval-based baselines employ text-embedding-3-small").
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from harness.compose import compose_config
from harness.reports.labels import paper_row
from harness.reports.presets import CONFIG_DIR, TABLE_PRESETS, preset_jobs
from harness.systems import mempp_family

PAPER_DIR = Path(__file__).resolve().parent.parent / "results" / "paper"
PRESETS = sorted(path.stem for path in (CONFIG_DIR / "experiment").glob("*.yaml"))
MEMPP_KINDS = {entry.kind for entry in mempp_family.ENTRIES}


def _settings(name: str) -> pd.DataFrame:
    return pd.read_csv(PAPER_DIR / name, dtype=str, keep_default_na=False)


def _table6(metric: str) -> dict[str, str]:
    part = _settings("table6_settings.csv")
    part = part[part["metric"] == metric]
    return dict(zip(part["category"], part["value"]))


def _baselines() -> dict[tuple[str, str], str]:
    """(benchmark, the paper's row label) -> the encoder the paper's baseline used."""
    part = _settings("baseline_settings.csv")
    part = part[part["metric"] == "embedding_model"]
    return dict(zip(zip(part["category"], part["row"]), part["value"]))


def _expected_model(dataset: str, system: str, kind: str) -> str | None:
    baselines = _baselines()
    labels = {paper_row(system, table) for table in (1, 2, 3, 4)} - {None}
    for label in labels:
        if (dataset, label) in baselines:
            return baselines[(dataset, label)]
    if kind in MEMPP_KINDS:
        return _table6("embedding_model")[dataset]
    return None


def test_the_presets_are_the_tables_presets():
    assert set(PRESETS) == {name for names in TABLE_PRESETS.values() for name in names}


@pytest.mark.parametrize("preset", PRESETS)
def test_every_preset_job_embeds_with_the_papers_encoder(preset: str):
    jobs = preset_jobs(preset)
    sizes = _table6("embedding_size")
    checked, unchecked = 0, set()
    for job in jobs:
        encoder = job.config["encoder"]
        expected = _expected_model(job.dataset, job.system, job.config["system"]["kind"])
        if expected is None:
            unchecked.add(job.system)
            continue
        assert encoder["params"]["model"] == expected, (preset, job.overrides)
        if "dimensions" in encoder["params"]:  # the OpenAI encoder names its width; MiniLM's is fixed
            expected_size = sizes[job.dataset] if expected == _table6("embedding_model")[job.dataset] else "1536"
            assert str(encoder["params"]["dimensions"]) == expected_size, (preset, job.overrides)
        checked += 1
    assert checked == len(jobs) - sum(1 for job in jobs if job.system in unchecked)
    assert unchecked <= {"full_context"}  # reads the whole history: embeds nothing


def test_table1_baselines_use_text_embedding_3_small_while_mempp_keeps_minilm():
    """OrgMemBench is where the baselines' and Mem++'s encoders differ (MiniLM before, for all)."""
    by_system = {(job.system, job.answerer): job.config["encoder"] for job in preset_jobs("table1")}
    baseline = _baselines()[("orgmem", "Mem0")]
    for system in ("rag_4096", "mem0", "zep"):
        for answerer in ("gpt-4.1-mini", "gpt-4o-mini"):
            assert by_system[(system, answerer)]["backend"] == "openai"
            assert by_system[(system, answerer)]["params"]["model"] == baseline
            assert set(by_system[(system, answerer)]["params"]) >= {"dimensions", "api_key_env"}
            assert "device" not in by_system[(system, answerer)]["params"]  # nothing of MiniLM left over
    for system in ("mempp", "mempp_g"):
        assert by_system[(system, "gpt-4.1-mini")]["params"]["model"] == _table6("embedding_model")["orgmem"]


def test_outside_the_presets_every_system_keeps_the_runs_encoder():
    """`python run.py` stays offline: the paper's per-system encoders apply only in the presets."""
    for system in ("mem0", "zep", "rag_4096", "mempp"):
        assert compose_config([f"system={system}"])["encoder"]["model"] == "all-MiniLM-L6-v2"
    assert compose_config([])["encoder"]["backend"] == "local"
    chosen = compose_config(["system=rag_2048", "encoder=minilm_onnx"])["encoder"]
    assert chosen["backend"] == "onnx"
    # in a preset, encoder_rule=run gives a baseline back the run's encoder
    assert compose_config(["+experiment=table1", "system=mem0", "encoder_rule=run"])["encoder"]["backend"] == "local"


@pytest.mark.parametrize("system", ["mem0", "zep", "rag_4096"])
def test_a_dry_run_of_a_table1_job_names_its_encoder_and_sends_nothing(system, tmp_path, monkeypatch, capsys):
    from harness.cli import execute

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # any call would fail without a key
    raw = compose_config(["+experiment=table1", f"system={system}", "answerer=gpt-4.1-mini", "dataset.limit=2",
                          "estimate=true", "progress=false", f"store.cache_dir={tmp_path}/cache",
                          f"store.results_dir={tmp_path}/runs"])
    assert execute(raw, [f"system={system}"]) == 0
    out = capsys.readouterr().out
    assert "Dry run (estimate=true): nothing was sent." in out
    expected = _expected_model("orgmem", system, raw["system"]["kind"])
    assert f"{system} on orgmem: encoder {expected} (" in out
    assert ("openai, 1536-d" in out) == (expected == _baselines()[("orgmem", "Mem0")])
    assert not (tmp_path / "runs").exists()
