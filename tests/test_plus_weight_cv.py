"""scripts/plus_weight_cv.py: a fold's weight is chosen on the other folds only."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

from plus_weight_cv import cross_validated  # noqa: E402


def test_a_weight_better_on_every_question_is_always_chosen_and_scored_held_out():
    qids = [f"q{i}" for i in range(10)]
    scores = {1.0: {q: (0.5, 0.4) for q in qids}, 8.0: {q: (1.0, 0.9) for q in qids}}
    (recall, chars), chosen = cross_validated(scores, folds=2, seed=0)
    assert chosen == [8.0, 8.0] and (recall, chars) == (1.0, 0.9)


def test_a_weight_tuned_to_one_half_is_not_credited_on_that_half():
    # weight 2 is perfect on the first half only, weight 1 is 0.6 everywhere: with the halves as
    # folds, each half gets the weight the other half prefers, so the held-out mean falls below
    # what the best fixed weight scores on all questions (in-sample 0.8 for weight 2).
    first, second = [f"a{i}" for i in range(4)], [f"b{i}" for i in range(4)]
    scores = {
        1.0: {q: (0.6, 0.6) for q in first + second},
        2.0: {**{q: (1.0, 1.0) for q in first}, **{q: (0.6, 0.6) for q in second}},
    }
    held_out, chosen = cross_validated(scores, folds=8, seed=0)  # leave-one-out
    assert set(chosen) == {2.0}  # every training set still prefers 2 (mean 0.8-ish > 0.6)
    assert held_out[0] == 0.8  # each question scored with the weight chosen without it
    two_fold = [cross_validated(scores, folds=2, seed=s)[0][0] for s in range(10)]
    assert min(two_fold) >= 0.6 and max(two_fold) <= 0.8
