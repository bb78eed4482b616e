"""mem0's own answer request for its Mem0 and Zep rows on LoCoMo (``answer_recipe=mem0``), filled by our code.

Facts (``mem0ai/mem0`` @ b3ede5b7, ``evaluation/src/memzero/search.py`` and ``evaluation/src/zep/search.py``;
``../shared/official/SOURCE.md``): the prompt is ``ANSWER_PROMPT`` (Mem0), ``ANSWER_PROMPT_ZEP`` (Zep)
or ``ANSWER_PROMPT_GRAPH`` (Mem0^g), filled as a jinja ``Template`` fills its ``{{name}}`` fields and
sent as ONE SYSTEM message at temperature 0.0 (no max_tokens, no seed). Mem0: each speaker's
memories as ``"<timestamp>: <memory>"`` strings, the list written by ``json.dumps(..., indent=4)``,
under the speaker's user id up to its first ``_`` (the speaker's name), speaker 1 the conversation's
``speaker_a``. Zep: ``memories`` is its search context, ``TEMPLATE.format(facts=..., entities=...)``
with one ``  - FACT (from - to)`` line per fact and one ``  - NAME: summary`` line per entity.

Which section a hit belongs to is read from its leg, as the context renderer reads it
(``baselines.thirdparty.context``); the hits' texts are those lines already.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from baselines.thirdparty.context import MEM0_LEG, ZEP_ENTITY_LEG, ZEP_FACT_LEG, leg_of
from judges.official.texts import OfficialTexts
from judges.official.wording import official_wording
from judges.wording import RequestParams, Wording
from memory_protocol.documents import Hit

__all__ = ["MEM0_ANSWER_PARAMS", "RECIPES", "Mem0Answer", "fill_fields", "mem0_answer"]

# search.py: chat.completions.create(model=..., messages=[system], temperature=0.0): nothing else
MEM0_ANSWER_PARAMS = RequestParams(temperature=0.0, omit=("max_tokens", "seed"))
_FIELD = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
# system kind -> the text keys of its prompt (and of its context template)
RECIPES: dict[str, tuple[str, ...]] = {"mem0": ("mem0.answer",), "zep": ("mem0.answer_zep", "mem0.zep_context")}


def fill_fields(template: str, values: Mapping[str, str]) -> str:
    """Each ``{{name}}`` replaced by its value, as a plain jinja render of these templates does
    (they use no other jinja syntax); a field without a value is a ValueError."""
    def value(match: re.Match[str]) -> str:
        if match[1] not in values:
            raise ValueError(f"no value for the template field {{{{{match[1]}}}}}")
        return str(values[match[1]])

    return _FIELD.sub(value, template)


def _speakers(hits: Sequence[Hit]) -> list[tuple[str, list[str]]]:
    groups: dict[str, list[str]] = {}
    for hit in hits:
        leg = leg_of(hit)
        if leg.startswith(MEM0_LEG):
            groups.setdefault(leg.removeprefix(MEM0_LEG), []).append(hit.text)
    pairs = list(groups.items())
    return pairs + [("", [])] * (2 - len(pairs))


@dataclass(frozen=True)
class Mem0Answer:
    """mem0's answer request for one system kind (``mem0`` or ``zep``)."""

    kind: str
    template: str
    wording: Wording
    context_template: str | None = None  # Zep's TEMPLATE
    params: RequestParams = MEM0_ANSWER_PARAMS

    def values(self, question: str, hits: Sequence[Hit]) -> dict[str, str]:
        if self.kind == "zep":
            assert self.context_template is not None
            facts = "\n".join(h.text for h in hits if leg_of(h) == ZEP_FACT_LEG)
            entities = "\n".join(h.text for h in hits if leg_of(h) == ZEP_ENTITY_LEG)
            return {"memories": self.context_template.format(facts=facts, entities=entities), "question": question}
        (name_1, lines_1), (name_2, lines_2) = _speakers(hits)[:2]
        return {"speaker_1_user_id": name_1, "speaker_2_user_id": name_2, "question": question,
                "speaker_1_memories": json.dumps(lines_1, indent=4), "speaker_2_memories": json.dumps(lines_2, indent=4)}

    def messages(self, question: Any, context: str, hits: Sequence[Hit] | None) -> list[dict[str, str]]:
        """The request for ``hits``; without hits (a dry run's stand-in context, priced before
        retrieval) the context stands for the memories, so the request's size is close."""
        if hits is None:
            values = {"memories": context, "speaker_1_memories": context, "speaker_2_memories": "[]",
                      "speaker_1_user_id": "", "speaker_2_user_id": "", "question": question.text}
        else:
            values = self.values(question.text, hits)
        return [{"role": "system", "content": fill_fields(self.template, values)}]


def mem0_answer(texts: OfficialTexts, kind: str) -> Mem0Answer:
    read = [texts.get(key) for key in RECIPES[kind]]
    what = {"mem0": "ANSWER_PROMPT", "zep": "ANSWER_PROMPT_ZEP, TEMPLATE"}[kind]
    return Mem0Answer(kind, read[0].text, official_wording(*read, what=what),
                      read[1].text if len(read) > 1 else None)
