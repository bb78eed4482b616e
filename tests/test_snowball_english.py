"""Our Snowball English stemmer equals nltk's on every word of the three benchmarks (issue 30, point 6),
so the lexical legs' lexemes, and every result built on them, are what they were with nltk, while a
run no longer imports nltk (and scipy.stats with it) to stem."""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from memplusplus.english_tsearch import stem as tsearch_stem
from memplusplus.snowball_english import stem
from tests.data_paths import require_data

ROOT = Path(__file__).resolve().parents[1]
WORD = re.compile(r"[^\W\d_]+")  # runs of letters, as the tokenizer's words are


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _words(texts) -> set[str]:
    found: set[str] = set()
    for text in texts:
        found.update(WORD.findall(text.lower()))
    return found


def _orgmem() -> set[str]:
    root = require_data("orgmembench/datasets/helix/medium")
    return _words(p.read_text(encoding="utf-8", errors="replace") for p in sorted(root.rglob("*")) if p.is_file())


def _locomo() -> set[str]:
    return _words(_strings(json.loads(require_data("locomo/locomo10.json").read_text(encoding="utf-8"))))


def _longmemeval() -> set[str]:
    path = require_data("longmemeval/longmemeval_s_cleaned_499.json.gz")
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return _words(_strings(json.load(handle)))


@pytest.mark.parametrize("vocabulary", [_orgmem, _locomo, _longmemeval], ids=["orgmem", "locomo", "longmemeval_s"])
def test_the_stems_equal_nltks_snowball_english_on_the_benchmarks_words(vocabulary):
    from nltk.stem.snowball import SnowballStemmer  # the oracle (the stemmer the code used before)

    oracle = SnowballStemmer("english")
    words = vocabulary()
    assert len(words) > 4_000  # OrgMemBench 4,905 distinct words, LoCoMo and LongMemEval_S more
    differ = [(w, oracle.stem(w), stem(w)) for w in sorted(words) if oracle.stem(w) != stem(w)]
    assert differ == []


def test_the_known_cases_and_the_one_correction_to_nltk():
    # nltk's region bookkeeping is kept: 'realize' (Postgres 'realiz'); exceptional forms as listed
    cases = {"realization": "realize", "biologists": "biologist", "internal": "intern", "organize": "organ",
             "generously": "generous", "skies": "sky", "dying": "die", "proceeded": "proceed", "happily": "happili",
             "sayings": "say", "yelling": "yell", "agreed": "agre", "hopping": "hop", "hoping": "hope", "is": "is"}
    assert {w: stem(w) for w in cases} == cases
    # english_tsearch's own correction, as Postgres stems these (nltk: 'ad')
    assert (stem("added"), tsearch_stem("added"), tsearch_stem("adding")) == ("ad", "add", "add")


def test_stemming_imports_neither_nltk_nor_scipy():
    code = ("import sys; from memplusplus.english_tsearch import tsvector_positions; "
            "print(tsvector_positions('The organizers added internal meetings')); "
            "print(sorted(m for m in ('nltk', 'scipy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lexemes, imported = out.stdout.splitlines()
    assert imported == "[]"
    assert "'organ'" in lexemes and "'add'" in lexemes and "'intern'" in lexemes and "'meet'" in lexemes
