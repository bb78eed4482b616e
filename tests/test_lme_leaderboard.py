"""results/LONGMEMEVAL_LEADERBOARD.md: our LongMemEval_S figures from a run folder, held out by id as
PLUS.md splits them, scored by judges/metrics/longmemeval.py, beside the published figures and their
sources (issue 24)."""

from __future__ import annotations

import csv
import json
import math
import sys
from pathlib import Path

import pytest

from harness.reports import lme_figures as F
from harness.reports import lme_leaderboard as L
from harness.reports.format import read_markdown
from harness.reports.lme_figures import LME_TUNED
from judges.metrics.longmemeval import Turn, official_corpus, official_metrics

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import lme_leaderboard as script  # noqa: E402
import plus_ablation  # noqa: E402

# One haystack per question, ids as the loader writes them (``<session>#<turn>``): an answer session
# (gold user turn #0, a non-gold user turn #1, an assistant turn #2), a session s1 of five user turns,
# and sessions s2..s6 of one user turn each.
A = "answer_a"
TURNS = ([Turn(f"{A}#0", A, "user", True), Turn(f"{A}#1", A, "user", False), Turn(f"{A}#2", A, "assistant", False)]
         + [Turn(f"s1#{i}", "s1", "user") for i in range(5)]
         + [Turn(f"s{n}#0", f"s{n}", "user") for n in range(2, 7)])
ROLE = {t.doc_id: t.role for t in TURNS}
NO_GOLD_TURNS = [Turn(t.doc_id, t.session_id, t.role, False if t.has_answer else t.has_answer) for t in TURNS]
OTHERS = ["s2#0", "s3#0", "s4#0", "s5#0"]
# Rankings chosen so that the official session recall_any@5 differs from turn recall_any@5, and from
# the published rule ("an answer session among the first five sessions"):
RANKINGS = [
    [f"{A}#0", *OTHERS],                                 # hit at rank 1 on every reading
    [f"{A}#1", *OTHERS, f"{A}#0"],                       # official: a relabelled turn, no hit; published: a hit
    ["s1#0", "s1#1", "s1#2", "s1#3", "s1#4", f"{A}#0"],  # k widens past s1's five turns: a session hit at turn 6
    [f"{A}#2", "s1#0", *OTHERS],                         # an assistant turn: out officially, a hit if every turn counts
]


def question_records(n: int = LME_TUNED + 24) -> list[dict]:
    """Records as the runner writes them (NaN as null, the kept hits with their roles), in no
    particular order; a few abstention questions and questions without a gold user turn, in the
    tuned part and in the held-out part."""
    records = []
    for i in range(n):
        qid = f"q{i:03d}" + ("_abs" if i % 17 == 5 else "")
        corpus = official_corpus(NO_GOLD_TURNS if i % 23 == 7 else TURNS)
        ranking = RANKINGS[(i * 7) % 4] + ["s6#0"]
        metrics = official_metrics(qid, ranking, corpus, ks=(1, 5, 10))
        records.append({"qid": qid, "category": "multi-session",
                        "metrics": {k: None if math.isnan(v) else v for k, v in metrics.items()},
                        "hits": [{"doc_id": d, "author": ROLE[d]} for d in ranking]})
    return records[::-1]


def write_run(runs: Path, system: str, records: list[dict], limit: int | None = None, name: str | None = None) -> Path:
    folder = runs / "longmemeval_s" / (name or f"{system}__dataset=longmemeval_s-0123456789")
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"dataset": {"name": "longmemeval_s", "limit": limit},
                                                    "system": {"name": system}}))
    (folder / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return folder


def mean_of(records: list[dict], key: str) -> tuple[float, int]:
    values = [r["metrics"][key] for r in records if r["metrics"][key] is not None]
    return sum(values) / len(values), len(values)


def test_the_page_reads_the_run_folder_splits_by_id_and_scores_official_session_recall(tmp_path, capsys):
    records = question_records()
    folder = write_run(tmp_path / "runs", "mempp_plus", records)
    out = tmp_path / "page.md"
    assert script.main(["--runs-dir", str(tmp_path / "runs"), "--plus-page", str(tmp_path / "absent.md"),
                        "--out", str(out)]) == 0

    held_out = sorted(records, key=lambda r: r["qid"])[LME_TUNED:]  # the PLUS.md split: after the first 100 by id
    expected_all, n_all = mean_of(records, "session_recall_any@5")
    expected_held, n_held = mean_of(held_out, "session_recall_any@5")
    turn_held, _ = mean_of(held_out, "recall_all@10")
    # The fixture tells the official metric apart from its look-alikes.
    assert abs(mean_of(held_out, "recall_any@5")[0] - expected_held) > 0.1
    assert n_held < len(held_out) and n_all < len(records)  # abstention / no-gold questions are not scored

    table = read_markdown(out.read_text().splitlines())
    cells = table[table["system"] == "mempp_plus"].iloc[0].tolist()
    assert cells[1:7] == [str(n_all), f"{expected_all:.3f}", f"{mean_of(records, 'recall_all@10')[0]:.3f}",
                          str(n_held), f"**{expected_held:.3f}**", f"{turn_held:.3f}"]
    assert cells[7] == f"`{folder}`"
    # The same split and means as plus_ablation.py prints in PLUS.md's held-out table.
    ablation = plus_ablation.held_out_means(records, ["session_recall_any@5", "recall_all@10"])
    assert f"{ablation['session_recall_any@5']:.3f}" == f"{expected_held:.3f}" and ablation["n_scored"] == n_held

    printed = capsys.readouterr().out.splitlines()
    assert all(len(line) <= 120 for line in printed)
    published = L.read_published(script.PUBLISHED)
    for entry in published:
        assert f"  {entry.system:20s} {entry.figure:13s} {entry.value:.3f} (n={entry.n_questions})" in printed
        assert f"    {entry.url}" in printed
    assert f"mempp_plus   {expected_all:.3f}" in "\n".join(printed)


def test_published_rows_carry_the_issue_figures_each_with_a_source_url():
    rows = {(r.system, r.figure): r for r in L.read_published(script.PUBLISHED)}
    stated = {("memweave", "held-out 450"): (0.980, 450, True), ("MemPalace raw", "all 500"): (0.966, 500, False),
              ("Awareness", "all 500"): (0.956, 500, False), ("agentmemory hybrid", "all 500"): (0.952, 500, False)}
    for key, (value, n, held_out) in stated.items():
        assert (rows[key].value, rows[key].n_questions, rows[key].held_out) == (value, n, held_out)
        assert rows[key].url.startswith("https://") and rows[key].status.startswith("found")
        assert all(rows[key].protocol[field] for field in L.PROTOCOL_FIELDS)
    with script.PUBLISHED.open(newline="") as handle:
        assert all(line["source"].startswith("https://") for line in csv.DictReader(handle))


def test_a_published_row_without_its_source_is_refused(tmp_path):
    lines = script.PUBLISHED.read_text().splitlines()
    broken = [lines[0]] + [line.replace("https://", "see ", 1) if ",memweave," in line else line for line in lines[1:]]
    path = tmp_path / "published.csv"
    path.write_text("\n".join(broken) + "\n")
    with pytest.raises(ValueError, match="memweave .*source"):
        L.read_published(path)


def test_only_a_full_default_run_is_read_and_plus_md_fills_in_for_a_missing_one(tmp_path):
    runs = tmp_path / "runs"
    write_run(runs, "mempp_plus", question_records(20), limit=20,
              name="mempp_plus__dataset=longmemeval_s,dataset.limit=20-aaaaaaaaaa")
    write_run(runs, "mempp_plus", question_records(), name="mempp_plus__dataset=longmemeval_s,system.k=3-bbbbbbbbbb")
    assert F.find_run_folder(runs, "mempp_plus") is None

    rows = {row.system: row for row in F.our_rows(runs, ROOT / "results" / "PLUS.md")}
    # results/PLUS.md, generated from full run folders: mempp_plus held out 0.971 (340 scored), mempp 0.897.
    plus = rows["mempp_plus"]
    assert plus.source.startswith("PLUS.md (git ")
    assert (plus.held_out.n_scored, plus.held_out.session_any5, plus.held_out.turn_all10) == (340, 0.971, 0.879)
    assert (plus.every.n_scored, plus.every.session_any5, plus.every.turn_all10) == (418, 0.969, 0.880)
    assert rows["mempp"].held_out.session_any5 == 0.897 and "rag" not in rows


def test_a_limited_plus_page_is_not_read(tmp_path):
    text = (ROOT / "results" / "PLUS.md").read_text()
    text = text.replace("## longmemeval_s\n", "## longmemeval_s (first 20 questions)\n")
    page = tmp_path / "PLUS.md"
    page.write_text(text)
    assert F.rows_from_plus_page(page, ["mempp_plus"]) == {}


def plus_cells() -> list:
    """PLUS.md's LongMemEval_S tables back as plus_ablation Cells."""
    lines = (ROOT / "results" / "PLUS.md").read_text().splitlines()
    start = lines.index("## longmemeval_s")
    section = lines[start:]
    every = {r["system"]: r for r in read_markdown(section).to_dict("records")}
    marker = next(i for i, line in enumerate(section) if line.startswith("Held out:"))
    held = {r["system"]: r for r in read_markdown(section[marker:]).to_dict("records")}
    return [plus_ablation.Cell(system, {k: float(v) for k, v in row.items() if k != "system"}, "?",
                               {k: float(v) for k, v in held[system].items() if k != "system"})
            for system, row in every.items()]


def test_the_longmemeval_target_is_session_recall_any_at_5_held_out_with_turn_recall_all_beside():
    (target,) = plus_ablation.TARGETS["longmemeval_s"]
    assert (target.metric, target.threshold, target.held_out, target.beside) == \
        ("session_recall_any@5", 0.98, True, ("recall_all@10",))
    cells = plus_cells()
    lines = plus_ablation.target_lines("longmemeval_s", cells)
    assert lines == ["- session_recall_any@5 on the held-out questions 0.971, target >= 0.98: NOT met; "
                     "recall_all@10 beside it: 0.879"]
    # PLUS.md prints exactly what its generator prints now, and so does the leaderboard's target line.
    text = (ROOT / "results" / "PLUS.md").read_text()
    section = text[text.index("## longmemeval_s"):]
    assert section[section.index("Targets:"):].split("\n\n")[1].splitlines() == lines
    assert plus_ablation.lever_effects("longmemeval_s", cells)[0].startswith(
        "- without any-term BM25 lexical leg: session_recall_any@5 0.969 -> 0.957 (-0.012), recall_all@10")


def test_a_limited_run_given_by_hand_is_labelled_as_such(tmp_path):
    folder = write_run(tmp_path / "runs", "mempp_plus", question_records(20), limit=20,
                       name="mempp_plus__dataset=longmemeval_s,dataset.limit=20-aaaaaaaaaa")
    (row,) = F.our_rows(tmp_path / "runs", None, systems=["mempp_plus"], explicit={"mempp_plus": folder})
    assert row.limit == 20 and row.held_out is None and row.label == "mempp_plus (first 20 questions)"
    assert read_markdown(L.our_table([row]))["system"].tolist() == ["mempp_plus (first 20 questions)"]
    published = L.read_published(script.PUBLISHED)
    assert all(gap.ours_label.startswith("first 20 questions, their rule") for gap in L.gaps([row], published))


@pytest.mark.parametrize("dataset", ["orgmem", "locomo"])
def test_the_other_targets_print_as_before(dataset):
    """Restating LongMemEval_S's target leaves OrgMemBench's and LoCoMo's lines as PLUS.md prints them."""
    lines = (ROOT / "results" / "PLUS.md").read_text().splitlines()
    section = lines[lines.index(f"## {dataset}"):]
    cells = [plus_ablation.Cell(r["system"], {k: float(v) for k, v in r.items() if k != "system"}, "?")
             for r in read_markdown(section).to_dict("records")]
    body = "\n".join(section)
    assert plus_ablation.target_lines(dataset, cells) == body[body.index("Targets:"):].split("\n\n")[1].splitlines()


def test_the_published_rule_counts_every_question_and_whole_answer_sessions():
    records = question_records()
    rule = F.published_rule(records)
    held = sorted(records, key=lambda r: r["qid"])[LME_TUNED:]
    # Every ranking puts the answer session among its first five sessions when assistant turns count;
    # with user turns only, the pattern led by the assistant turn misses.
    user_only = [0.0 if r["hits"][0]["author"] == "assistant" else 1.0 for r in records]
    user_held = [0.0 if r["hits"][0]["author"] == "assistant" else 1.0 for r in held]
    assert (rule.n_every, rule.every_all_turns) == (len(records), 1.0)
    assert rule.every_user_turns == sum(user_only) / len(records) < 1.0
    assert (rule.n_held_out, rule.held_all_turns, rule.held_user_turns) == (len(held), 1.0, sum(user_held) / len(held))
    assert F.hit_session("answer_a@2#3") == "answer_a" and F.published_rule_hit([{"doc_id": "s1#0"}]) == 0.0


def test_with_a_run_folder_the_verdict_is_like_for_like(tmp_path):
    records = question_records()
    write_run(tmp_path / "runs", "mempp_plus", records)
    (row,) = F.our_rows(tmp_path / "runs", None, systems=["mempp_plus"])
    published = {(r.system, r.figure): r for r in L.read_published(script.PUBLISHED)}
    assert published[("memweave", "held-out 450")].turns == "user"
    assert published[("agentmemory hybrid", "all 500")].turns == "all"
    found = {gap.published.system: gap for gap in L.gaps([row], list(published.values()))}
    assert found["memweave"].ours_label == "held out, their rule, user turns"
    assert found["memweave"].ours == row.published_rule.held_user_turns
    assert found["agentmemory hybrid"].ours_label == "all, their rule, every turn"
    assert found["agentmemory hybrid"].ours == row.published_rule.every_all_turns == 1.0
    text = script.page([row], list(published.values()), "abc")
    lines = text.splitlines()
    rule = read_markdown(lines[next(i for i, line in enumerate(lines) if line.startswith("Our rankings scored")):])
    assert "Like for like" in text and rule.iloc[0].tolist()[:3] == ["mempp_plus", "124", "1.000"]


def test_a_limited_run_shows_how_far_the_rule_moves_a_figure(tmp_path):
    records = question_records(20)
    write_run(tmp_path / "runs", "mempp_plus", records, limit=20,
              name="mempp_plus__dataset=longmemeval_s,dataset.limit=20-aaaaaaaaaa")
    line = L.rule_sensitivity(tmp_path / "runs")
    official, n = mean_of(records, "session_recall_any@5")
    assert f"the official rule gives {official:.3f} over {n} scored questions, the published rule 1.000 over all 20" \
        in line
    assert "`python run.py dataset=longmemeval_s system=mempp_plus dataset.limit=20`" in line
