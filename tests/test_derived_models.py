"""Issue 31, point 2: a derived model file (ONNX export, static table) is checked against its sha256.

Flipping the sign bits of 12 weight tensors of the cached ONNX export (``onnx.checker`` still passes)
moved LoCoMo recall_any@10 from 0.938 to 0.875 with exit code 0, and ``scripts/check_cache.py``
reported nothing. Now every load checks the bytes against the record written with the export.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from memory_protocol import file_sha256
from memplusplus.model_files import checked, problem, record_path, seal
from scripts.reliability_suite.silent import flip_sign_bits  # the hostile case's tampering: 12 tensors' sign bits

ROOT = Path(__file__).resolve().parents[1]


def _derive_folder(target: Path) -> None:
    target.mkdir()
    (target / "model.safetensors").write_bytes(b"\x00\x01" * 100)
    (target / "tokenizer.json").write_text("{}")


def test_a_changed_missing_or_added_file_of_a_sealed_folder_is_named(tmp_path):
    model = checked(tmp_path / "table", _derive_folder, "the static table")
    assert problem(model) is None
    (model / "model.safetensors").write_bytes(b"\x00\x81" + b"\x00\x01" * 99)  # one sign bit, same size
    assert "model.safetensors: sha256" in problem(model)
    checked(tmp_path / "other", _derive_folder, "the static table")
    (tmp_path / "other" / "tokenizer.json").unlink()
    assert problem(tmp_path / "other") == "tokenizer.json is missing"
    (tmp_path / "other" / "tokenizer.json").write_text("{}")
    (tmp_path / "other" / "extra.bin").write_bytes(b"x")
    assert problem(tmp_path / "other") == "extra.bin is not in its sha256 record"


def test_a_model_without_a_record_is_derived_again_with_one_line(tmp_path, capsys):
    (tmp_path / "table").mkdir()
    (tmp_path / "table" / "model.safetensors").write_bytes(b"old")
    checked(tmp_path / "table", _derive_folder, "the static table")
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "no readable sha256 record" in err and "deriving it again" in err
    assert (tmp_path / "table" / "model.safetensors").read_bytes() == b"\x00\x01" * 100


@pytest.fixture(scope="module")
def export(tmp_path_factory):
    """One real ONNX export of the bundled MiniLM, and a copy of its good bytes."""
    pytest.importorskip("onnxruntime")
    from memplusplus.onnx_encoder import OnnxEncoder, OnnxEncoderConfig

    folder = tmp_path_factory.mktemp("onnx")
    encoder = OnnxEncoder(OnnxEncoderConfig(model_dir=str(folder)))
    vectors = encoder.encode(["the export is sealed", "and checked at every load"])
    good = folder.parent / "good.onnx"
    shutil.copyfile(encoder.model_path, good)
    return encoder, vectors, good


def test_a_tampered_export_is_exported_again_not_run(export, capsys, monkeypatch):
    from memplusplus import onnx_encoder
    from memplusplus.onnx_encoder import OnnxEncoder

    encoder, vectors, good = export
    flip_sign_bits(encoder.model_path)
    assert "sha256" in problem(encoder.model_path)
    exports = []

    def export_again(model: str, target: Path) -> dict[str, int]:  # the real export's bytes, without its minute
        exports.append(target)
        shutil.copyfile(good, target)
        return {}

    monkeypatch.setattr(onnx_encoder, "export_onnx", export_again)
    capsys.readouterr()
    again = OnnxEncoder(encoder.config).encode(["the export is sealed", "and checked at every load"])
    err = capsys.readouterr().err.strip()
    assert [path.parent for path in exports] == [encoder.model_path.parent]
    assert exports[0].name.startswith(encoder.model_path.name + ".partial-")  # sealed there, then moved into place
    assert err.count("\n") == 0 and "the ONNX export" in err and "differs from the recorded" in err
    assert np.array_equal(again, vectors)
    assert json.loads(record_path(encoder.model_path).read_text())["files"]["."] == file_sha256(good)


def test_check_cache_reports_and_repairs_a_tampered_export(export, tmp_path):
    encoder, _, good = export
    cache = tmp_path / "cache"
    (cache / "onnx").mkdir(parents=True)
    model = cache / "onnx" / encoder.model_path.name
    shutil.copyfile(good, model)
    seal(model)
    script = [sys.executable, str(ROOT / "scripts" / "check_cache.py"), str(cache)]
    ok = subprocess.run(script, capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0 and f"onnx/{model.name}: derived model, sha256 as recorded" in ok.stdout
    flip_sign_bits(model)
    bad = subprocess.run(script, capture_output=True, text=True, timeout=300)
    assert bad.returncode == 1 and f"onnx/{model.name}: derived model, bad (" in bad.stdout, bad.stdout
    repaired = subprocess.run([*script, "--repair"], capture_output=True, text=True, timeout=300)
    assert repaired.returncode == 0 and "deleted" in repaired.stdout
    assert not model.exists() and not record_path(model).exists()
