"""A memory of your own, run by the harness through ``memory_protocol`` alone (it imports nothing of
Mem++ or the harness): ``python run.py --config-dir examples/conf system=my_memory``.

TF-IDF keyword overlap: a document scores the sum, over the question's words it contains, of the
word's idf times ``1 + log(count)``; a dated question sees only documents dated up to its day.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from datetime import date, datetime, time

from memory_protocol import Document, Hit

WORD = re.compile(r"[a-z0-9]+")
STOP = frozenset("a an and are as at be by did do does for from had has have how i in is it of on or the to was were what when where which who why with you".split())


def words(text: str) -> list[str]:
    return [w for w in WORD.findall(text.lower()) if w not in STOP and len(w) > 1]


def end_of_day(as_of: date | datetime) -> datetime:
    day = as_of.date() if isinstance(as_of, datetime) else as_of
    return datetime.combine(day, time.max)


class KeywordMemory:
    """TF-IDF keyword overlap over whole documents, scoped by the question's as-of date."""

    name = "my_memory"

    def __init__(self, k: int = 10, respect_as_of: bool = True) -> None:
        self.k = k
        self.respect_as_of = respect_as_of
        self.documents: list[Document] = []
        self.counts: list[Counter[str]] = []
        self.document_frequency: Counter[str] = Counter()

    def ingest(self, documents: Iterable[Document], show_progress: bool = False) -> list[str | None]:
        stored: list[str | None] = []
        for doc in documents:
            if not doc.text.strip():
                stored.append(None)
                continue
            counts = Counter(words(doc.text))
            self.documents.append(doc)
            self.counts.append(counts)
            self.document_frequency.update(counts.keys())
            stored.append(doc.doc_id)
        return stored

    def _in_scope(self, doc: Document, as_of: date | datetime | None) -> bool:
        if as_of is None or not self.respect_as_of:
            return True
        return doc.date is not None and doc.date.replace(tzinfo=None) <= end_of_day(as_of)

    def retrieve(self, query: str, as_of: date | datetime | None = None, k: int | None = None) -> list[Hit]:
        terms = set(words(query))
        total = len(self.documents)
        scored: list[tuple[float, int]] = []
        for index, (doc, counts) in enumerate(zip(self.documents, self.counts)):
            if not self._in_scope(doc, as_of):
                continue
            score = sum(math.log(1 + total / self.document_frequency[t]) * (1 + math.log(counts[t])) for t in terms if t in counts)
            if score > 0:
                scored.append((score, index))
        scored.sort(key=lambda pair: (-pair[0], -pair[1]))  # ties: the later document first
        hits = []
        for rank, (score, index) in enumerate(scored[: k or self.k]):
            doc = self.documents[index]
            hits.append(Hit(doc.doc_id, doc.text, doc.date, doc.author, score, {"keywords": rank}, False, doc.thread,
                            evidence=doc.evidence))
        return hits
