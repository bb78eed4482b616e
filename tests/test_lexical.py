"""mem0-style LoCoMo lexical metrics: set-based token F1 and nltk-equivalent BLEU-1.

Expected values are computed by hand below (and agree with nltk 3.10.4's sentence_bleu with
weights (1, 0, 0, 0) and SmoothingFunction().method1 on word_tokenize output).
"""

import math

import pytest

from judges.metrics.lexical import (
    bleu1,
    bleu_tokenize,
    f1_score,
    normalize_answer,
    sentence_split,
    simple_tokenize,
    treebank_tokenize,
)


# ------------------------------------------------------------------------------------------ F1


def test_normalize_answer_only_lowercases_and_drops_four_marks():
    # mem0 turns . , ! ? into spaces; every other character (apostrophes, semicolons) is kept
    assert normalize_answer("Hello, World! It's 7.5?") == "hello world it's 7 5"
    assert normalize_answer("  Paris;  France ") == "paris; france"
    assert simple_tokenize(2022) == ["2022"]


def test_f1_paraphrase_with_article():
    # pred {the, shell, necklace}, gold {a, shell, necklace}: common 2
    # P = 2/3, R = 2/3, F1 = 2 * (2/3)(2/3) / (4/3) = 2/3
    assert f1_score("The shell necklace.", "A shell necklace") == pytest.approx(2 / 3)


def test_f1_uses_sets_not_multisets():
    # sets {yes} and {yes}: P = R = 1 -> F1 = 1 (a multiset F1 would give P = 1/3, F1 = 0.5)
    assert f1_score("yes yes yes", "yes") == pytest.approx(1.0)


def test_f1_integer_answers_are_stringified():
    assert f1_score(2022, "2022") == pytest.approx(1.0)
    # pred {in, 2022}, gold {2022}: P = 1/2, R = 1, F1 = 2 * 0.5 * 1 / 1.5 = 2/3
    assert f1_score("in 2022", 2022) == pytest.approx(2 / 3)


def test_f1_keeps_other_punctuation_attached():
    # "paris;" != "paris": no common token -> 0 (a SQuAD normaliser would strip ';' and give 1)
    assert f1_score("Paris;", "Paris") == 0.0
    # '.' is removed: "paris" == "paris"
    assert f1_score("Paris.", "paris") == pytest.approx(1.0)


def test_f1_partial_overlap():
    # pred {she, went, to, paris, in, may}, gold {paris, in, may}: common 3
    # P = 3/6, R = 3/3 -> F1 = 2 * 0.5 * 1 / 1.5 = 2/3
    assert f1_score("She went to Paris in May", "Paris, in May") == pytest.approx(2 / 3)
    # pred {june}, gold {may}: nothing in common
    assert f1_score("June", "May") == 0.0


def test_f1_empty_inputs_score_zero():
    assert f1_score("", "Paris") == 0.0
    assert f1_score("Paris", "   ") == 0.0
    assert f1_score("...", "Paris") == 0.0  # no token left after normalisation


# ------------------------------------------------------------------------------------ BLEU-1


def test_bleu1_long_prediction_no_brevity_penalty():
    # hyp [she, went, to, paris] c = 4, ref [paris] r = 1, matches m = 1
    # c > r -> BP = 1; BLEU-1 = 1 * 1/4
    assert bleu1("she went to paris", "paris") == pytest.approx(0.25)


def test_bleu1_short_prediction_brevity_penalty():
    # hyp [paris] c = 1, ref [she, went, to, paris] r = 4, m = 1
    # BP = exp(1 - 4/1) = exp(-3); BLEU-1 = exp(-3) * 1/1 = 0.0497870...
    assert bleu1("paris", "she went to paris") == pytest.approx(math.exp(-3))
    assert bleu1("paris", "she went to paris") == pytest.approx(0.049787068367863944)


def test_bleu1_equal_length_bp_is_one():
    # c = r = 3 -> BP = exp(1 - 1) = 1; m = 2 (a, sat) -> 2/3
    assert bleu1("a cat sat", "a dog sat") == pytest.approx(2 / 3)


def test_bleu1_clips_repeated_tokens():
    # hyp the x3, ref has 'the' once -> m = min(3, 1) = 1; c = 3 > r = 2 -> BP = 1; 1/3
    assert bleu1("the the the", "the cat") == pytest.approx(1 / 3)


def test_bleu1_counts_punctuation_tokens():
    # hyp [paris, .] c = 2, ref [paris] r = 1, m = 1, BP = 1 -> 1/2 (F1 would give 1.0)
    assert bleu1("Paris.", "paris") == pytest.approx(0.5)


def test_bleu1_contractions_split_like_treebank():
    # hyp [i, do, n't, know] c = 4, ref [do, n't] r = 2, m = 2, BP = 1 -> 2/4
    assert bleu1("I don't know", "don't") == pytest.approx(0.5)


def test_bleu1_integers_and_sentences():
    assert bleu1(7, "7") == pytest.approx(1.0)
    # hyp [7, may] c = 2, ref [7] r = 1, m = 1 -> 1/2
    assert bleu1("7 May", 7) == pytest.approx(0.5)
    # two sentences, each final '.' split: hyp [i, went, home, ., it, rained, .] c = 7,
    # ref [it, rained] r = 2, m = 2 -> 2/7
    assert bleu1("I went home. It rained.", "it rained") == pytest.approx(2 / 7)


def test_bleu1_zero_cases():
    assert bleu1("June", "May") == 0.0
    assert bleu1("", "May") == 0.0
    assert bleu1("May", "") == 0.0


def test_bleu_tokenize_matches_nltk_word_tokenize_examples():
    # outputs of nltk.word_tokenize(text.lower()) for these texts
    assert bleu_tokenize("Dr. Smith arrived at 10:30, with 3,000 people.") == [
        "dr.", "smith", "arrived", "at", "10:30", ",", "with", "3,000", "people", "."]
    assert bleu_tokenize('She said "hi" (twice).') == [
        "she", "said", "``", "hi", "''", "(", "twice", ")", "."]
    assert bleu_tokenize("I cannot go... gonna stay") == [
        "i", "can", "not", "go", "...", "gon", "na", "stay"]


def test_sentence_split_rules():
    assert sentence_split("i went home. it rained.") == ["i went home.", "it rained."]
    # abbreviation: no break; number followed by a lower-case word: no break
    assert sentence_split("dr. smith came in 2023. then left") == ["dr. smith came in 2023. then left"]
    # question mark always breaks; a closing quote stays with its sentence
    assert sentence_split('he asked "why?" she left') == ['he asked "why?"', "she left"]


def test_treebank_tokenize_final_period_only():
    # only the sentence-final period is split off; inner ones stay on their word
    assert treebank_tokenize("see u.s. rules. ok.") == ["see", "u.s.", "rules.", "ok", "."]
