"""Lexical answer metrics for LoCoMo as mem0's evaluation computes them: token F1 and BLEU-1.

Source of the rules (read, not copied): ``mem0ai/mem0`` ``evaluation/metrics/utils.py``
(``simple_tokenize``, ``calculate_metrics``, ``calculate_bleu_scores``) as called by
``evaluation/evals.py`` (which turns both answers into ``str`` first and skips category 5).

F1 (``calculate_metrics``)
    * Both texts go through ``str()`` and ``strip()``; if either is empty the score is 0.
    * Normalisation: lower case, then each of ``. , ! ?`` becomes a space, then whitespace split.
      Nothing else is removed: no articles, no other punctuation, no stemming. (This is *not* the
      SQuAD-style normaliser of LoCoMo's own ``task_eval``; numbers differ from that paper's F1.)
    * Tokens are compared as **sets** (duplicates count once):
      P = |S_pred & S_gold| / |S_pred|, R = |S_pred & S_gold| / |S_gold|, F1 = 2PR / (P + R), 0 when
      there is no common token.

BLEU-1 (``calculate_bleu_scores``)
    * mem0 calls ``nltk.translate.bleu_score.sentence_bleu([ref_tokens], pred_tokens,
      weights=(1, 0, 0, 0), smoothing_function=SmoothingFunction().method1)`` with tokens from
      ``nltk.word_tokenize(text.lower())``.
    * For one reference and weights (1, 0, 0, 0) that is exactly
      ``BLEU-1 = BP * m / c`` where ``c`` = number of predicted tokens, ``m`` = clipped unigram
      matches (each predicted token type counts at most as often as it occurs in the reference),
      ``BP = 1 if c > r else exp(1 - r / c)`` with ``r`` = number of reference tokens, and the score
      is 0 when ``m == 0`` (nltk returns 0 before smoothing when no unigram matches) or ``c == 0``.
      Smoothing ``method1`` (epsilon 0.1 added to zero *higher-order* counts) only touches the 2..4-gram
      precisions, whose weight is 0, so it has no effect on BLEU-1; it is listed for completeness.
      No ``auto_reweigh``. These facts are those of nltk's ``corpus_bleu``/``brevity_penalty``/
      ``modified_precision`` (nltk 3.x ``nltk/translate/bleu_score.py``).
    * nltk is not a dependency here. :func:`bleu_tokenize` re-implements ``word_tokenize`` =
      Punkt sentence split + nltk's improved Treebank word tokenizer on each sentence:
      - :func:`treebank_tokenize` applies the rules of ``NLTKWordTokenizer``
        (``nltk/tokenize/destructive.py``: opening quotes, punctuation, brackets, double dashes,
        closing quotes and clitics ``'s 'm 'd 'll 're 've n't``, and the split words ``cannot``,
        ``gonna``, ``gotta``, ...) in the same order;
      - :func:`sentence_split` runs Punkt's algorithm (``nltk/tokenize/punkt.py``: its word
        tokens, candidate ends and their contexts, first/second annotation pass, boundary
        realignment) but with *our* parameters: the trained English model (``punkt_tab``) cannot
        be loaded offline, so abbreviations come from the short list :data:`ABBREVIATIONS` and
        there are no collocations, sentence starters or orthographic statistics.
      Checked against nltk 3.10.4 (Treebank tokenizer + Punkt given the same abbreviation list):
      identical tokens on 11,027 LoCoMo/LongMemEval texts, 20,000 word salads and 20,000 random
      punctuation strings. A difference from mem0's numbers can therefore come only from Punkt's
      trained parameters, i.e. a sentence-internal ``.`` after an abbreviation our list lacks (or
      has in excess) or a collocation: the model would keep ``dept.`` + next word in one sentence
      where we split off the ``.`` as its own token, or the reverse.

All functions accept ``str``, ``int`` or ``float`` answers (LoCoMo has integer answers); they are
converted with ``str()`` as mem0's ``evals.py`` does.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from typing import Union

__all__ = [
    "ABBREVIATIONS",
    "Answer",
    "bleu1",
    "bleu_tokenize",
    "f1_score",
    "normalize_answer",
    "sentence_split",
    "simple_tokenize",
    "treebank_tokenize",
]

Answer = Union[str, int, float]

# ---------------------------------------------------------------------------------------------------
# F1: mem0's simple tokenisation
# ---------------------------------------------------------------------------------------------------

_F1_SEPARATORS = str.maketrans({".": " ", ",": " ", "!": " ", "?": " "})


def simple_tokenize(text: Answer) -> list[str]:
    """Lower-case ``str(text)``, turn ``. , ! ?`` into spaces, split on white space."""
    return str(text).lower().translate(_F1_SEPARATORS).split()


def normalize_answer(text: Answer) -> str:
    """The normalised form F1 compares: :func:`simple_tokenize` tokens joined by single spaces."""
    return " ".join(simple_tokenize(text))


def f1_score(prediction: Answer, ground_truth: Answer) -> float:
    """mem0's set-based token F1 between a predicted and a gold answer (0.0 .. 1.0)."""
    pred = str(prediction).strip()
    gold = str(ground_truth).strip()
    if not pred or not gold:
        return 0.0
    pred_set = set(simple_tokenize(pred))
    gold_set = set(simple_tokenize(gold))
    if not pred_set or not gold_set:
        return 0.0
    common = len(pred_set & gold_set)
    if common == 0:
        return 0.0
    precision = common / len(pred_set)
    recall = common / len(gold_set)
    return 2 * precision * recall / (precision + recall)


# ---------------------------------------------------------------------------------------------------
# BLEU-1: nltk.word_tokenize look-alike
# ---------------------------------------------------------------------------------------------------

# Abbreviations after which a "." does not end a sentence (lower case, without the final period).
ABBREVIATIONS: frozenset[str] = frozenset({
    "mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "mt", "ft", "vs", "etc", "inc", "ltd", "co",
    "corp", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
    "e.g", "i.e", "u.s", "u.k", "a.m", "p.m", "no", "gen", "gov", "sen", "rep", "rev", "capt", "lt",
    "col", "sgt",
})

# --- Punkt (sentence splitting) -------------------------------------------------------------------
_NON_WORD = r"[)\";}\]*:@'({[\u2018\u2019\u201c\u201d\u00ab\u00bb?!]"
_MULTI_PUNCT = r"(?:-{2,}|\.{2,}|(?:\.\s){2,}\.)"
_WORD_START = r"[^(\"`{\[:;&#*@)}\]\-,]"
# Punkt's word tokens: multi-character punctuation, a word (ends before white space, a non-word
# character, multi-character punctuation or a word-final comma), or any single other character.
_PUNKT_WORD_RE = re.compile(
    rf"{_MULTI_PUNCT}"
    rf"|(?={_WORD_START})\S+?(?=\s|$|{_NON_WORD}|{_MULTI_PUNCT}|,(?=$|\s|{_NON_WORD}|{_MULTI_PUNCT}))"
    r"|\S"
)
# A possible sentence end: one end mark followed by a non-word character, or by space and a chunk.
_END_CONTEXT_RE = re.compile(rf"[.?!](?=(?P<after>{_NON_WORD}|\s+(?P<next>\S+)))")
# Closing quotes/brackets that open the next piece but belong to the sentence before.
_REALIGN_RE = re.compile(r"[\"')\]}\u2018\u2019\u201c\u201d\u00ab\u00bb]+?(?:\s+|(?=--)|$)", re.MULTILINE)
_NUMBER_RE = re.compile(r"^-?[.,]?\d[\d,.\-]*\.?$")
_INITIAL_RE = re.compile(r"[^\W\d]\.$")
_ELLIPSIS_RE = re.compile(r"\.\.+$")


def _breaks_after(tokens: list[str]) -> list[bool]:
    """Punkt's break annotation of each token, with our abbreviation list and no trained statistics.

    First pass: ``.``/``?``/``!`` break; an ellipsis does not; a word ending in ``.`` breaks unless
    it is a listed abbreviation. Second pass: an initial or a number with a period does not break
    when the next token is one of ``; : , . ! ?`` or starts with a lower-case letter (what Punkt's
    orthographic test answers for such tokens when it has no statistics for them).
    """
    breaks = []
    for tok in tokens:
        if tok in (".", "?", "!"):
            breaks.append(True)
        elif _ELLIPSIS_RE.match(tok):
            breaks.append(False)
        elif tok.endswith(".") and not tok.endswith(".."):
            stem = tok[:-1].lower()
            breaks.append(not (stem in ABBREVIATIONS or stem.split("-")[-1] in ABBREVIATIONS))
        else:
            breaks.append(False)
    for i in range(len(tokens) - 1):
        tok, nxt = tokens[i], tokens[i + 1]
        if not tok.endswith("."):
            continue
        if _INITIAL_RE.match(tok) or _NUMBER_RE.match(tok):
            if nxt in (";", ":", ",", ".", "!", "?") or nxt[0].islower():
                breaks[i] = False
    return breaks


def _context_has_break(context: str) -> bool:
    """True when some token of ``context`` other than its last one ends a sentence."""
    tokens = _PUNKT_WORD_RE.findall(context)
    return any(breaks for breaks in _breaks_after(tokens)[:-1])


def _end_candidates(text: str) -> list[tuple[re.Match[str], str]]:
    """Possible sentence ends with their context (word before + mark + what follows).

    As in Punkt, of several marks within one white-space-free stretch only the last one is kept.
    """
    found: list[tuple[re.Match[str], int]] = []
    prev_stop = 0
    for match in _END_CONTEXT_RE.finditer(text):
        between = text[prev_stop:match.start()]
        space_at = max((i for i, c in enumerate(between) if c in string.whitespace), default=0)
        if space_at:  # (white space at index 0 counts as none, as in Punkt)
            word_start = prev_stop + space_at + 1
        else:
            word_start = found[-1][1] if found else 0
        if found and found[-1][0].start() > word_start:
            found.pop()  # overlaps this one: the earlier mark is part of this word
        found.append((match, word_start))
        prev_stop = match.start()
    return [(m, text[start:m.start()] + m.group() + m.group("after")) for m, start in found]


def sentence_split(text: str) -> list[str]:
    """Split ``text`` into sentences like Punkt (see the module docstring for what is approximated)."""
    bounds: list[tuple[int, int]] = []
    start = 0
    for match, context in _end_candidates(text):
        if _context_has_break(context):
            bounds.append((start, match.end()))
            start = match.start("next") if match.group("next") else match.end()
    bounds.append((start, len(text.rstrip())))
    sentences: list[str] = []
    carry = 0  # characters moved from the start of this piece to the end of the previous one
    for i, (lo, hi) in enumerate(bounds):
        lo += carry
        carry = 0
        if i + 1 < len(bounds):
            nxt_lo, nxt_hi = bounds[i + 1]
            moved = _REALIGN_RE.match(text, nxt_lo, nxt_hi)
            if moved:
                hi = nxt_lo + len(moved.group(0).rstrip())
                carry = moved.end() - nxt_lo
        piece = text[lo:hi].strip()
        if piece:
            sentences.append(piece)
    return sentences


def _sub(pattern: str, repl: str, flags: int = 0) -> tuple[re.Pattern[str], str]:
    return re.compile(pattern, flags), repl


_CLOSERS = "\\]\\)}>\"'\u00bb\u201d\u2019"
# Each stage is a list of (regex, replacement) applied in order; spaces mark token boundaries.
_OPENING_QUOTE_RULES = [
    _sub(r"([\u00ab\u201c\u2018\u201e]|`+)", r" \1 "),
    _sub(r'^"', r"``"),
    _sub(r"(``)", r" \1 "),
    _sub(r"([ (\[{<])(\"|'')", r"\1 `` "),
    _sub(r"(?<!\w)(')(?!(?:re|ve|ll|m|t|s|d|n)\b)(?=\w)", r"\1 ", re.IGNORECASE),
]
_PUNCTUATION_RULES = [
    _sub(r"([^.])(\.)([" + _CLOSERS + r" ]*+)\s*$", r"\1 \2 \3 "),  # final period
    _sub(r"([:,])([^\d])", r" \1 \2"),  # , and : unless a digit follows (3,000  10:30)
    _sub(r"([:,])$", r" \1 "),
    _sub(r"\.{2,}", r" \g<0> "),  # ellipsis
    _sub(r"[;@#$%&]", r" \g<0> "),
    _sub(r"[\u2012-\u2015]", r" \g<0> "),  # figure/en/em dashes, horizontal bar
    _sub(r"([^.])(\.)([\]\)}>\"']*)\s*$", r"\1 \2\3 "),  # final period (older form, kept by nltk)
    _sub(r"[?!]", r" \g<0> "),
    _sub(r"([^'])' ", r"\1 ' "),
    _sub(r"\*", r" \g<0> "),
]
_BRACKET_RULE = _sub(r"[\]\[(){}<>]", r" \g<0> ")
_DOUBLE_DASH_RULE = _sub(r"--", r" -- ")
_CLOSING_QUOTE_RULES = [
    _sub(r"([\u00bb\u201d\u2019])", r" \1 "),
    _sub(r"''", r" '' "),
    _sub(r'"', r" '' "),
    _sub(r"\s+", " "),
    _sub(r"([^' ])('[sS]|'[mM]|'[dD]|') ", r"\1 \2 "),
    _sub(r"([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ", r"\1 \2 "),
]
# Words split in two without an apostrophe (cannot -> can not, gonna -> gon na, ...).
_FUSED_WORD_RULES = [
    _sub(r"\b(can)(not)\b", r" \1 \2 ", re.IGNORECASE),
    _sub(r"\b(d)('ye)\b", r" \1 \2 ", re.IGNORECASE),
    _sub(r"\b(gim)(me)\b", r" \1 \2 ", re.IGNORECASE),
    _sub(r"\b(gon)(na)\b", r" \1 \2 ", re.IGNORECASE),
    _sub(r"\b(got)(ta)\b", r" \1 \2 ", re.IGNORECASE),
    _sub(r"\b(lem)(me)\b", r" \1 \2 ", re.IGNORECASE),
    _sub(r"\b(more)('n)\b", r" \1 \2 ", re.IGNORECASE),
    _sub(r"\b(wan)(na)(?=\s)", r" \1 \2 ", re.IGNORECASE),
    _sub(r" ('t)(is)\b", r" \1 \2 ", re.IGNORECASE),
    _sub(r" ('t)(was)\b", r" \1 \2 ", re.IGNORECASE),
]


def treebank_tokenize(sentence: str) -> list[str]:
    """Tokenise one sentence with the rules of nltk's ``NLTKWordTokenizer`` (no parenthesis conversion)."""
    text = sentence
    for pattern, repl in _OPENING_QUOTE_RULES:
        text = pattern.sub(repl, text)
    for pattern, repl in _PUNCTUATION_RULES:
        text = pattern.sub(repl, text)
    for pattern, repl in (_BRACKET_RULE, _DOUBLE_DASH_RULE):
        text = pattern.sub(repl, text)
    text = f" {text} "
    for pattern, repl in _CLOSING_QUOTE_RULES:
        text = pattern.sub(repl, text)
    for pattern, repl in _FUSED_WORD_RULES:
        text = pattern.sub(repl, text)
    return text.split()


def bleu_tokenize(text: Answer) -> list[str]:
    """``nltk.word_tokenize(str(text).lower())`` look-alike: sentence split, then Treebank rules."""
    lowered = str(text).lower()
    return [token for sentence in sentence_split(lowered) for token in treebank_tokenize(sentence)]


def bleu1(prediction: Answer, ground_truth: Answer) -> float:
    """Sentence BLEU-1 of ``prediction`` against the single reference ``ground_truth`` (0.0 .. 1.0).

    ``BP * clipped_unigram_matches / len(prediction_tokens)``; see the module docstring.
    """
    hyp = bleu_tokenize(prediction)
    ref = bleu_tokenize(ground_truth)
    c, r = len(hyp), len(ref)
    if c == 0 or r == 0:
        return 0.0
    ref_counts = Counter(ref)
    matches = sum(min(count, ref_counts[token]) for token, count in Counter(hyp).items())
    if matches == 0:
        return 0.0
    brevity = 1.0 if c > r else math.exp(1 - r / c)
    return brevity * matches / c
