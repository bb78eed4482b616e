"""Our answer and retrieval metrics against the upstream functions themselves.

mem0's ``metrics/utils.py`` (F1 over token sets, BLEU-1) and LongMemEval's
``src/retrieval/eval_utils.py`` (recall_any, recall_all, nDCG; turn and session level) are taken out
of the pinned files and run as they are, in a namespace holding only the libraries they call (the
modules' top levels load BERTScore, ROUGE and a sentence model, which the metrics do not use).
LongMemEval's ``dcg`` calls ``np.asfarray``, which NumPy 2 removed; the namespace gives it the
same conversion, ``np.asarray(x, dtype=float)``.
"""

from __future__ import annotations

import random
import types
from typing import Dict

import nltk
import numpy as np
import pytest
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

from judges.metrics.lexical import bleu1, f1_set
from judges.metrics.longmemeval import OfficialCorpus, session_scores, turn_scores
from judges.metrics.punkt_data import ensure_punkt_data
from judges.official.extract import function
from judges.official.locate import OfficialReader
from loaders import load_dataset

MEM0_UTILS = "mem0/evaluation/metrics/utils.py"
LME_EVAL_UTILS = "longmemeval/src/retrieval/eval_utils.py"


@pytest.fixture(scope="module")
def mem0_metrics():
    ensure_punkt_data()
    text = OfficialReader.search().read(MEM0_UTILS)
    scope = {"nltk": nltk, "SmoothingFunction": SmoothingFunction, "sentence_bleu": sentence_bleu, "Dict": Dict}
    scope["simple_tokenize"] = function(text, "simple_tokenize", scope)
    scope["calculate_bleu_scores"] = function(text, "calculate_bleu_scores", scope)
    return function(text, "calculate_metrics", scope)


def _answer_pairs() -> list[tuple[str, str]]:
    """Real LoCoMo gold answers, each paired with a near answer, a longer one and an unrelated one."""
    golds = [str(q.answer) for episode in load_dataset("locomo", limit=120) for q in episode.questions
             if str(q.answer).strip()]
    rng = random.Random(7)
    pairs = []
    for gold in golds:
        words = gold.split()
        pairs.append((gold, gold))
        pairs.append((" ".join(rng.sample(words, len(words))) + ", I think.", gold))
        pairs.append((f"They said: {gold}! On 7 May 2023, again: {gold}.", gold))
        pairs.append(("Unrelated words only", gold))
    return pairs


def test_f1_set_and_bleu1_equal_mem0s_calculate_metrics_on_locomo_answers(mem0_metrics):
    pairs = _answer_pairs()
    assert len(pairs) >= 400
    for prediction, gold in pairs:
        theirs = mem0_metrics(prediction, gold)
        assert f1_set(prediction, gold) == pytest.approx(theirs["f1"], abs=1e-12), (prediction, gold)
        assert bleu1(prediction, gold) == pytest.approx(theirs["bleu1"], abs=1e-12), (prediction, gold)


@pytest.fixture(scope="module")
def lme_eval_utils():
    numpy_2 = types.SimpleNamespace(**{name: getattr(np, name) for name in ("sum", "log2", "arange")},
                                    asfarray=lambda values: np.asarray(values, dtype=float))
    text = OfficialReader.search().read(LME_EVAL_UTILS)
    scope = {"np": numpy_2}
    for name in ("dcg", "ndcg", "evaluate_retrieval", "evaluate_retrieval_turn2session"):
        scope[name] = function(text, name, scope)
    return scope


def test_turn_and_session_scores_equal_longmemevals_eval_utils(lme_eval_utils):
    rng = random.Random(11)
    for case in range(300):
        sessions = [f"s{i}" for i in range(rng.randint(2, 9))]
        corpus_ids = [f"{rng.choice(sessions)}_{turn}" for turn in range(rng.randint(4, 40))]
        gold = rng.sample(corpus_ids, rng.randint(1, min(3, len(corpus_ids))))
        rankings = list(range(len(corpus_ids)))
        rng.shuffle(rankings)
        corpus = OfficialCorpus({doc: doc.rsplit("_", 1)[0] for doc in corpus_ids}, frozenset(gold))
        ranked = [corpus_ids[i] for i in rankings]
        for k in (1, 3, 5, 10, 30, 50):
            theirs = lme_eval_utils["evaluate_retrieval"](rankings, gold, corpus_ids, k=k)
            assert turn_scores(ranked, corpus, k) == pytest.approx(theirs, abs=1e-12), (case, k)
            theirs = lme_eval_utils["evaluate_retrieval_turn2session"](rankings, gold, corpus_ids, k=k)
            assert session_scores(ranked, corpus, k) == pytest.approx(theirs, abs=1e-12), (case, k)
