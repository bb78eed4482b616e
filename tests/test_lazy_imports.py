"""A cached run should not pay for libraries only some stages use (issue 12, warm paths)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_run_entry_points_leave_the_heavy_optional_libraries_unimported():
    probe = (
        "import sys, run, harness.cli, harness.runner, harness.systems\n"
        "print(sorted(m for m in ('openai', 'bm25s', 'scipy', 'networkx', 'torch') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_the_stop_words_are_bm25s_english_plus_list():
    from bm25s.stopwords import STOPWORDS_EN_PLUS

    from memplusplus.text import STOP_WORDS

    assert STOP_WORDS == frozenset(STOPWORDS_EN_PLUS)
    assert {"the", "and", "of"} <= STOP_WORDS and "helix" not in STOP_WORDS
