"""Find our LoCoMo questions for outside records keyed by (conversation index, question, gold).

Published results and the errata name questions in their own way (``locomo_0_qa1``, a list
position); what they share with ours is the conversation, the question's text and its gold answer.
Both are compared after collapsing whitespace. Where one text and gold occur twice in a
conversation, the records take our questions in file order. Anything left unmatched is refused in
one line, so a file made on another version of ``locomo10.json`` never scores silently.
"""

from __future__ import annotations

from collections.abc import Sequence
from memory_protocol import DatasetError, Episode, Question

ADVERSARIAL_ID = 5
Key = tuple[int, str, str]


def normalise(text: object) -> str:
    return " ".join(str(text).split())


def question_key(conversation: int, question: Question) -> Key:
    return conversation, normalise(question.text), normalise(question.answer)


def graded_questions(episodes: Sequence[Episode]) -> dict[Key, list[Question]]:
    """Our graded questions (adversarial left out) by key, each list in file order."""
    table: dict[Key, list[Question]] = {}
    for index, episode in enumerate(episodes):
        for question in episode.questions:
            if question.meta.get("category_id") != ADVERSARIAL_ID:
                table.setdefault(question_key(index, question), []).append(question)
    return table


def match_keys(keys: Sequence[Key], episodes: Sequence[Episode], what: str) -> list[Question]:
    """Our question for each key, in order; a one-line DatasetError naming the first that has none."""
    table = {key: list(found) for key, found in graded_questions(episodes).items()}
    out: list[Question] = []
    missing: list[Key] = []
    for conversation, text, gold in keys:
        key = (conversation, normalise(text), normalise(gold))
        candidates = table.get(key)
        if candidates:
            out.append(candidates.pop(0))
        else:
            missing.append(key)
    if missing:
        conversation, text, gold = missing[0]
        raise DatasetError(what, f"{len(missing)} of {len(keys)} questions match none of our LoCoMo questions by "
                                 f"text and gold, e.g. conversation {conversation}: {text[:60]!r} / gold {gold[:40]!r}")
    return out
