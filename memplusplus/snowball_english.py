"""The Snowball English ("Porter2") stemmer as nltk 3.9-3.10 computes it, without importing nltk.

Importing ``nltk.stem.snowball`` imports all of nltk and ``scipy.stats``: about 2 s idle, 15 s
under load, paid by every run. This follows the algorithm's published description
(snowballstem.org) in nltk's form, which keeps R1 and R2 as strings that shrink with the word (a
rule replacing a suffix longer than a region empties it, except that R2 becomes "e" after -ational,
-ation, -ator, -iveness, -iviti): why nltk gives 'realize' for "realization" (Postgres 'realiz').
tests/test_snowball_english.py checks it against nltk on every word of the three benchmarks. Input:
a lower-case word of letters.
"""

from __future__ import annotations

from dataclasses import dataclass

VOWELS = frozenset("aeiouy")
DOUBLES = ("bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt")
LI_ENDING = frozenset("cdeghkmnrt")

# Whole words with a fixed stem (the algorithm's exceptional forms), before and after step 1a.
EXCEPTIONS = {
    "skis": "ski", "skies": "sky", "dying": "die", "lying": "lie", "tying": "tie", "idly": "idl",
    "gently": "gentl", "ugly": "ugli", "early": "earli", "only": "onli", "singly": "singl", "sky": "sky",
    "news": "news", "howe": "howe", "atlas": "atlas", "cosmos": "cosmos", "bias": "bias", "andes": "andes",
}
for _stem in ("inning", "outing", "canning", "herring", "earring"):
    EXCEPTIONS.update({_stem: _stem, _stem + "s": _stem})
for _stem in ("proceed", "exceed", "succeed"):
    EXCEPTIONS.update({_stem + ending: _stem for ending in ("", "s", "ed", "ing")})

R1_PREFIXES = ("gener", "commun", "arsen")  # R1 starts right after these


@dataclass
class _Word:
    """The word being stemmed with its regions R1 and R2 (suffixes of it, kept as strings)."""

    text: str
    r1: str
    r2: str

    def cut(self, count: int) -> None:
        """Drop the last ``count`` letters of the word and of both regions."""
        self.text, self.r1, self.r2 = self.text[:-count], self.r1[:-count], self.r2[:-count]

    def swap(self, count: int, new: str, r2_when_short: str = "") -> None:
        """Put ``new`` in place of the last ``count`` letters; a region shorter than ``count``
        becomes empty (R2: ``r2_when_short``)."""
        self.text = self.text[:-count] + new
        self.r1 = self.r1[:-count] + new if len(self.r1) >= count else ""
        self.r2 = self.r2[:-count] + new if len(self.r2) >= count else r2_when_short

    def grow(self, letter: str) -> None:
        """Append ``letter`` to the word and to each region that is not empty."""
        self.text += letter
        self.r1 += letter if self.r1 else ""
        self.r2 += letter if self.r2 else ""


def _after_first_closed_syllable(text: str) -> str:
    """What follows the first non-vowel that follows a vowel ("" when there is none)."""
    for i in range(1, len(text)):
        if text[i] not in VOWELS and text[i - 1] in VOWELS:
            return text[i + 1:]
    return ""


def _regions(text: str) -> tuple[str, str]:
    prefix = next((p for p in R1_PREFIXES if text.startswith(p)), None)
    r1 = text[len(prefix):] if prefix else _after_first_closed_syllable(text)
    return r1, _after_first_closed_syllable(r1)


def _mark_consonant_y(text: str) -> str:
    """An initial y, and a y after a vowel, are consonants: written 'Y' until the end."""
    letters = list(text)
    for i, letter in enumerate(letters):
        if letter == "y" and (i == 0 or letters[i - 1] in VOWELS):
            letters[i] = "Y"
    return "".join(letters)


def _short_ending(text: str) -> bool:
    """Consonant-vowel-consonant at the end (the last not w, x or Y), or vowel-consonant as the whole word."""
    if len(text) >= 3:
        return (text[-1] not in VOWELS and text[-1] not in "wxY" and text[-2] in VOWELS
                and text[-3] not in VOWELS)
    return len(text) == 2 and text[0] in VOWELS and text[1] not in VOWELS


def _step1a(w: _Word) -> None:
    for suffix in ("sses", "ied", "ies", "us", "ss", "s"):
        if not w.text.endswith(suffix):
            continue
        if suffix == "sses":
            w.cut(2)
        elif suffix in ("ied", "ies"):
            w.cut(2 if len(w.text) > 4 else 1)
        elif suffix == "s" and any(letter in VOWELS for letter in w.text[:-2]):
            w.cut(1)
        return


def _step1b(w: _Word) -> None:
    for suffix in ("eedly", "ingly", "edly", "eed", "ing", "ed"):
        if not w.text.endswith(suffix):
            continue
        n = len(suffix)
        if suffix in ("eed", "eedly"):
            if w.r1.endswith(suffix):
                w.swap(n, "ee")
            return
        if not any(letter in VOWELS for letter in w.text[:-n]):
            return
        w.cut(n)
        if w.text.endswith(("at", "bl", "iz")):
            w.text += "e"
            w.r1 += "e"
            if len(w.text) > 5 or len(w.r1) >= 3:
                w.r2 += "e"
        elif w.text.endswith(DOUBLES):
            w.cut(1)
        elif w.r1 == "" and _short_ending(w.text):
            w.grow("e")
        return


def _step1c(w: _Word) -> None:
    if len(w.text) > 2 and w.text[-1] in "yY" and w.text[-2] not in VOWELS:
        w.swap(1, "i")


# Step 2: suffix -> (letters replaced, replacement, R2 when shorter than them); None: a special rule.
STEP2 = {
    "ization": (7, "ize", ""), "ational": (7, "ate", "e"), "fulness": (4, "", None), "ousness": (7, "ous", ""),
    "iveness": (7, "ive", "e"), "tional": (2, "", None), "biliti": (6, "ble", ""), "lessli": (2, "", None),
    "entli": (2, "", None), "ation": (5, "ate", "e"), "alism": (5, "al", ""), "aliti": (5, "al", ""),
    "ousli": (5, "ous", ""), "iviti": (5, "ive", "e"), "fulli": (2, "", None), "enci": (1, "e", ""),
    "anci": (1, "e", ""), "abli": (1, "e", ""), "izer": (4, "ize", ""), "ator": (4, "ate", "e"),
    "alli": (4, "al", ""), "bli": (3, "ble", ""), "ogi": (1, "", None), "li": (2, "", None),
}
STEP3 = {
    "ational": (7, "ate", ""), "tional": (2, "", None), "alize": (3, "", None), "icate": (5, "ic", ""),
    "iciti": (5, "ic", ""), "ative": (5, "", None), "ical": (4, "ic", ""), "ness": (4, "", None),
    "ful": (3, "", None),
}
STEP4 = ("ement", "ance", "ence", "able", "ible", "ment", "ant", "ent", "ism", "ate", "iti", "ous", "ive",
         "ize", "ion", "al", "er", "ic")


def _apply(w: _Word, count: int, new: str, r2_when_short: str | None) -> None:
    if r2_when_short is None:  # a plain cut of ``count`` letters
        w.cut(count)
    else:
        w.swap(count, new, r2_when_short)


def _step2(w: _Word) -> None:
    for suffix, (count, new, short) in STEP2.items():
        if not w.text.endswith(suffix):
            continue
        if not w.r1.endswith(suffix):
            return
        if suffix == "ogi" and w.text[-4] != "l":
            return
        if suffix == "li" and w.text[-3] not in LI_ENDING:
            return
        _apply(w, count, new, short)
        return


def _step3(w: _Word) -> None:
    for suffix, (count, new, short) in STEP3.items():
        if not w.text.endswith(suffix):
            continue
        if w.r1.endswith(suffix) and (suffix != "ative" or w.r2.endswith(suffix)):
            _apply(w, count, new, short)
        return


def _step4(w: _Word) -> None:
    for suffix in STEP4:
        if not w.text.endswith(suffix):
            continue
        if w.r2.endswith(suffix):
            if suffix != "ion":
                w.cut(len(suffix))
            elif w.text[-4] in "st":
                w.cut(3)
        return


def _step5(w: _Word) -> None:
    text = w.text
    if w.r2.endswith("l") and text[-2] == "l":
        w.text = text[:-1]
    elif w.r2.endswith("e"):
        w.text = text[:-1]
    elif w.r1.endswith("e") and len(text) >= 4 and (
            text[-2] in VOWELS or text[-2] in "wxY" or text[-3] not in VOWELS or text[-4] in VOWELS):
        w.text = text[:-1]


def stem(word: str) -> str:
    """The Snowball English stem of a lower-case word of letters, as nltk's stemmer gives it."""
    if len(word) <= 2:
        return word
    if word in EXCEPTIONS:
        return EXCEPTIONS[word]
    text = _mark_consonant_y(word)
    w = _Word(text, *_regions(text))
    for step in (_step1a, _step1b, _step1c, _step2, _step3, _step4, _step5):
        step(w)
    return w.text.replace("Y", "y")
