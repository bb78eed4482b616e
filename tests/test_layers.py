"""The layer arrows hold: no package imports one above it, and no two packages import each other."""

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_no_package_imports_against_the_layer_arrows():
    proc = subprocess.run([sys.executable, "scripts/check_layers.py"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout
    assert "memory_protocol  -> (nothing of ours)" in proc.stdout
    baselines = next(line for line in proc.stdout.splitlines() if line.startswith("baselines"))
    assert "harness" not in baselines


def _check_layers():
    spec = importlib.util.spec_from_file_location("check_layers", ROOT / "scripts" / "check_layers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_an_import_circle_between_modules_is_found_even_inside_a_function(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("def lazy():\n    from pkg.sub import leaf\n")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "leaf.py").write_text("from pkg import a\n")
    (package / "a.py").write_text("def late():\n    from pkg.b import thing\n")
    (package / "b.py").write_text("from pkg.a import late\nthing = 1\n")
    check = _check_layers()
    # a package's lazy import of its own submodule, and `from pkg import a`, are no circle; a <-> b is
    assert check.module_circles(check.module_graph(tmp_path, ("pkg",))) == [["pkg.a", "pkg.b"]]


def test_the_tree_has_no_import_circle():
    check = _check_layers()
    assert check.module_circles(check.module_graph(ROOT)) == []
