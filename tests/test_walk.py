"""scripts/walk.py counts a reader's stays and returns as issue 33 defines them."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _walk():
    spec = importlib.util.spec_from_file_location("walk", ROOT / "scripts" / "walk.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CALLS = [("a.py", "f"), ("b.py", "g"), ("types.py", "check"), ("b.py", "h"), ("c.py", "i"), ("types.py", "ids"),
         ("c.py", "j"), ("a.py", "k")]


def test_consecutive_calls_in_one_file_are_one_stay_and_coming_back_is_a_return():
    grouped = _walk().stays(CALLS)
    assert [file for file, _ in grouped] == ["a.py", "b.py", "types.py", "b.py", "c.py", "types.py", "c.py", "a.py"]
    assert len(grouped) - len({file for file, _ in grouped}) == 4


def test_a_file_read_first_opens_the_walk_and_its_later_visits_are_no_stays():
    grouped = _walk().stays(CALLS, read_first=["types.py"])
    assert grouped == [("types.py", ["(read first)"]), ("a.py", ["f"]), ("b.py", ["g", "h"]), ("c.py", ["i", "j"]),
                       ("a.py", ["k"])]
    assert len(grouped) - len({file for file, _ in grouped}) == 1
