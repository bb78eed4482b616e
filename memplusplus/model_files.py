"""Model files derived once and loaded later (the ONNX export, the static table), sealed: a
``<name>.sha256.json`` record beside each, written before the model is moved into place and checked
at every load; a missing record or file or a changed byte re-derives it, with one stderr line (a
flipped sign bit in an ONNX weight passed ``onnx.checker`` and silently moved a benchmark's recall)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from memory_protocol import file_sha256

RECORD_SUFFIX = ".sha256.json"
FORMAT = "mempp-derived-model-1"
IN_PROGRESS = (".partial-", ".raw-", ".bad-")  # names of files a derivation is writing or has put aside


def record_path(model: Path) -> Path:
    return model.with_name(model.name + RECORD_SUFFIX)


def digests(model: Path) -> dict[str, str]:
    """``{relative path: sha256}`` of a model file (key ``.``) or of every file of a model folder."""
    if model.is_file():
        return {".": file_sha256(model)}
    return {path.relative_to(model).as_posix(): file_sha256(path) for path in sorted(model.rglob("*")) if path.is_file()}


def seal(model: Path, final: Path | None = None) -> None:
    """Record the digests of ``model`` next to ``final`` (where it will be moved; default: where it is)."""
    target = record_path(final or model)
    partial = target.with_name(f"{target.name}.partial-{os.getpid()}")
    partial.write_text(json.dumps({"format": FORMAT, "files": digests(model)}, indent=1, sort_keys=True), encoding="utf-8")
    partial.replace(target)


def problem(model: Path) -> str | None:
    """None when ``model`` matches its record, else what is wrong, in a few words."""
    record = record_path(model)
    try:
        recorded = json.loads(record.read_text(encoding="utf-8"))
        files = recorded["files"] if recorded.get("format") == FORMAT else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        files = None
    if not isinstance(files, dict):
        return f"no readable sha256 record ({record.name})"
    found = digests(model)
    for name in sorted(set(files) | set(found)):
        if name not in found:
            return f"{name} is missing"
        if name not in files:
            return f"{name} is not in its sha256 record"
        if found[name] != files[name]:
            shown = model.name if name == "." else f"{model.name}/{name}"
            return f"{shown}: sha256 {found[name][:12]}... differs from the recorded {str(files[name])[:12]}..."
    return None


def derived_models(folder: Path) -> list[Path]:
    """The derived models (files or folders) directly in ``folder``, records and work files left out."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir()
                  if not p.name.endswith(RECORD_SUFFIX) and not any(mark in p.name for mark in IN_PROGRESS))


def remove(model: Path) -> None:
    if model.is_dir():
        shutil.rmtree(model, ignore_errors=True)
    else:
        model.unlink(missing_ok=True)
    record_path(model).unlink(missing_ok=True)


def checked(model: Path, derive: Callable[[Path], object], what: str) -> Path:
    """``model`` verified against its record, else derived by ``derive(work_path)``, sealed and moved
    into place at once (a killed derivation never leaves half a model behind)."""
    if model.exists():
        wrong = problem(model)
        if wrong is None:
            return model
        print(f"warning: {what} {model}: {wrong}; deriving it again", file=sys.stderr)
        remove(model)
    model.parent.mkdir(parents=True, exist_ok=True)
    partial = model.with_name(f"{model.name}.partial-{os.getpid()}")
    try:
        derive(partial)
        seal(partial, final=model)
        partial.replace(model)
    finally:
        remove(partial)
    return model
