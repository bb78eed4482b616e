"""The held-out part of the LongMemEval_S ablation: questions after the ones the settings were tuned on."""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

from plus_ablation import LME_TUNED, held_out_means  # noqa: E402


def test_held_out_means_skip_the_tuned_questions_by_id_and_the_unscored_ones():
    tuned = [{"qid": f"a{i:03d}", "metrics": {"recall_all@10": 0.0}} for i in range(LME_TUNED)]
    rest = [
        {"qid": "z1", "metrics": {"recall_all@10": 1.0}},
        {"qid": "z2", "metrics": {"recall_all@10": None}},          # abstention: not scored
        {"qid": "z3", "metrics": {"recall_all@10": math.nan}},
        {"qid": "z4", "metrics": {"recall_all@10": 0.5}},
    ]
    means = held_out_means(rest[::-1] + tuned, ["recall_all@10"])  # order of records does not matter
    assert means["recall_all@10"] == 0.75
    assert means["n_questions"] == 4 and means["n_scored"] == 2
