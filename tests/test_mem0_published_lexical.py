"""LoCoMo BLEU-1 and token F1 equal mem0's published per-question values, on every graded answer.

mem0 published its LoCoMo evaluation output (``evaluation/results/locomo/exp_data_0-10_2000/
results.json`` at commit 81a0fba5, pull request 3509; our copy ``published/mem0/results_81a0fba.json``,
see its SOURCE.md): 1,540 answers (category 5 left out, as its ``evals.py`` does), each with the
``bleu_score`` and ``f1_score`` its ``evaluation/metrics/utils.py`` computed. Our :func:`bleu1` and
:func:`f1_set` must give exactly those numbers for exactly those (response, answer) pairs.

BLEU-1 depends on nltk's word tokenizer: nltk 3.10.1 and later split a leading apostrophe off a word
(``'sleep'`` became ``'`` + ``sleep``), which changes 5 of the 1,540 values (each holds a quoted
phrase); 3.9.1 to 3.10.0 reproduce all 1,540 (checked with 3.9.1 and 3.10.0; 3.10.1 and 3.10.4 give
the same 5 differences). That is why ``pyproject.toml`` pins ``nltk>=3.9.1,<3.10.1``.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter

import pytest

from judges.metrics.lexical import bleu1, f1_set
from tests.data_paths import require_data

PUBLISHED = "published/mem0/results_81a0fba.json"
SHA256 = "8e9b028d8223499dc8407a281a7816c1f100d78e821eabef2f16e4077700805d"  # published/SHA256SUMS
QUOTED = {  # (response, answer) of the 5 rows a newer nltk changes, with the value mem0 published
    ("'The Lean Startup'", "The Lean Startup"): 0.5,
    ("Album 'Sleep'", "'Sleep'"): 2 / 3,
    ('"Favorite fantasy show is \'That\'"', '"That"'): 0.25,
}


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    path = require_data(PUBLISHED)
    raw = path.read_bytes()
    assert hashlib.sha256(raw).hexdigest() == SHA256, f"{path} is not the published file"
    return [row for conversation in json.loads(raw).values() for row in conversation]


def test_the_file_holds_the_1540_graded_answers(rows):
    assert len(rows) == 1540
    assert Counter(row["category"] for row in rows) == {"4": 841, "2": 321, "1": 282, "3": 96}


def _mismatches(rows: list[dict], metric, field: str) -> list[str]:
    out = []
    for row in rows:
        ours = metric(row["response"], row["answer"])
        if ours != row[field]:
            out.append(f"{row['response']!r} vs {row['answer']!r}: ours {ours!r}, mem0 {row[field]!r}")
    return out


def test_bleu1_equals_mem0s_published_value_on_every_answer(rows):
    import nltk

    wrong = _mismatches(rows, bleu1, "bleu_score")
    assert not wrong, f"{len(wrong)} of 1540 BLEU-1 values differ with nltk {nltk.__version__} " \
                      f"(3.9.1-3.10.0 reproduce them; see pyproject.toml): {wrong[:5]}"


def test_set_f1_equals_mem0s_published_value_on_every_answer(rows):
    wrong = _mismatches(rows, f1_set, "f1_score")
    assert not wrong, f"{len(wrong)} of 1540 F1 values differ: {wrong[:5]}"


@pytest.mark.parametrize(("pair", "published"), list(QUOTED.items()))
def test_a_quoted_phrase_keeps_its_leading_apostrophe(pair, published):
    """The rows a newer nltk tokenizes differently, named one by one (values from the published file)."""
    assert bleu1(*pair) == pytest.approx(published, abs=1e-15)
