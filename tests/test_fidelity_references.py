"""Every code and test reference in results/paper/FIDELITY.md names something that exists.

Refactors rename and move what the page's `module:function` and test columns name, so this reads
its tables and checks each reference with `ast` (nothing is imported). Rules:
- `path.py:A, B` names A and B in path.py; a bare `C` continues the previous reference's file and,
  after `Class.member`, may be a member of that class. A parenthesised note is not checked.
- A path resolves from the repository root; else against the folder of the row's previous file and
  its parents (`pg/memory.py` after `memplusplus/memory.py`); else to the one tracked file ending
  with it (several: ambiguous). Other files (`configs/dataset/*.yaml`) must exist.
- `tests/x.py::test_a` is test_a in tests/x.py; a bare `test_b` is in the file named earlier in its
  row, else the section's default (a line "Tests (are) in `tests/x.py`", else tests/test_mempp.py);
  `::test_c` is in the file named last in its row, else in its table.
"""
import ast
import functools
import glob
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "results" / "paper" / "FIDELITY.md"
FILE = re.compile(r"^(?P<path>[\w./*-]+\.(?:py|yaml|csv|html|json|txt))(?::(?P<names>.+))?$")
NAME = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?$")
TEST = re.compile(r"^(?P<path>tests/[\w/]+\.py)?(?:(?:::)?(?P<name>test_\w+))?$")
DEFAULT_TESTS = "tests/test_mempp.py"


def _targets(node):
    """What an assignment binds, tuples unpacked (`A, B = 1, 2`)."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
    return [e for t in targets for e in (t.elts if isinstance(t, ast.Tuple) else [t])]


def _names(node):
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    return [t.id for t in _targets(node) if isinstance(t, ast.Name)]


@functools.lru_cache(maxsize=None)
def defined(path):
    """Module-level defs, classes and assignments, and `Class.member` for a class's methods, class
    attributes and the `self.x` it assigns."""
    names = set()
    for node in ast.parse((ROOT / path).read_text()).body:
        names.update(_names(node))
        if isinstance(node, ast.ClassDef):
            members = [name for child in node.body for name in _names(child)]
            members += [t.attr for sub in ast.walk(node) for t in _targets(sub)
                        if isinstance(t, ast.Attribute) and getattr(t.value, "id", "") == "self"]
            names.update(f"{node.name}.{member}" for member in members)
    return names


def resolve(path, previous):
    """The repository path `path` names (rules above), else the list of candidates."""
    if (ROOT / path).is_file():
        return path
    for folder in [*Path(previous).parents][:-1] if previous else []:
        if (ROOT / folder / path).is_file():
            return str(folder / path)
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    ends = [f for f in out.split() if f.endswith("/" + path)]
    return ends[0] if len(ends) == 1 else ends


def stale_references():
    stale, header, section_tests, table_tests = [], None, DEFAULT_TESTS, None
    for number, line in enumerate(PAGE.read_text().splitlines(), 1):
        where = f"line {number}:"
        if line.startswith("## "):
            section_tests = DEFAULT_TESTS
        elif m := re.search(r"Tests (?:are )?in `(tests/\w+\.py)`", line):
            section_tests = m.group(1)
        cells = [re.sub(r" \([^()]*\)", "", c.strip()) for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or header is None:
            header = {k: cells.index(k) for k in ("module:function", "test") if k in cells} if line[:1] == "|" else None
            table_tests = None
            continue
        if set(line) <= set("|-: ") or len(header) < 2:
            continue
        code_file, member_of = None, None
        for token in re.findall(r"`([^`]+)`", cells[header["module:function"]]):
            if m := FILE.match(token):
                if "*" in m["path"]:
                    stale += [] if glob.glob(str(ROOT / m["path"])) else [f"{where} no file matches {token}"]
                    continue
                code_file, member_of = resolve(m["path"], code_file), None
                if isinstance(code_file, list):
                    stale.append(f"{where} {m['path']} is " + (" or ".join(code_file) or "no file"))
                    code_file = None
                names = [n.strip() for n in (m["names"] or "").split(",") if n.strip()]
            else:
                names = [token] if NAME.match(token) else []
            for name in names if code_file and code_file.endswith(".py") else []:
                if name not in defined(code_file) and f"{member_of}.{name}" not in defined(code_file):
                    stale.append(f"{where} {code_file} defines no {name}")
                member_of = name.split(".")[0] if "." in name else member_of
        row_tests = None
        for m in filter(None, map(TEST.match, re.findall(r"`([^`]+)`", cells[header["test"]]))):
            if m["path"] or m["name"]:
                path = m["path"] or row_tests or (table_tests if m.group().startswith("::") else None) or section_tests
                row_tests = table_tests = path
                if not (ROOT / path).is_file() or m["name"] and m["name"] not in defined(path):
                    stale.append(f"{where} no test {path}" + (f"::{m['name']}" if m["name"] else ""))
    return stale


def test_every_reference_in_fidelity_md_exists():
    stale = stale_references()
    assert not stale, f"{len(stale)} stale references in {PAGE.relative_to(ROOT)}:\n" + "\n".join(stale)
