"""Mem0's input as mem0's evaluation builds it, on the real benchmarks (no Mem0 library needed).

OrgMemBench: 170 of the 443 artefacts open with ``[``, 49 of them with a bare time (``[09:00:00]``);
an artefact is dated by its date, never by such a bracket. LoCoMo's first conversation: 214 add()
batches of two turns, 102 of them holding a turn with an image; mem0's add.py sends
``Speaker: text`` only, so no caption reaches add().
"""

from __future__ import annotations

import re

import pytest

from baselines.thirdparty.common import CAPTION_MARK, split_stamp, without_caption
from baselines.thirdparty.mem0 import Mem0User, messages_for, session_batches, speakers_of
from memplusplus.evidence import format_date
from memory_protocol import Document
from tests.data_paths import data_path


def _episodes(name: str, limit: int | None = None):
    from loaders import load_dataset

    if data_path({"orgmem": "orgmembench", "locomo": "locomo/locomo10.json"}[name]) is None:
        pytest.skip("benchmark data not found")
    return list(load_dataset(name, limit=limit))


def test_every_orgmembench_artefact_keeps_its_date():
    docs = [d for episode in _episodes("orgmem") for d in episode.documents]
    bracketed = [d for d in docs if d.text.lstrip().startswith("[")]
    bare_time = [d for d in bracketed if re.match(r"\[\d\d:\d\d(:\d\d)?\]", d.text.lstrip())]
    assert (len(docs), len(bracketed), len(bare_time)) == (443, 170, 49)
    for doc in docs:
        stamp, line = split_stamp(doc)
        assert doc.date is not None and stamp == format_date(doc.date)
        assert line == f"{doc.author or 'unknown'}: {doc.text}"


def test_no_image_caption_reaches_mem0s_add():
    episode = _episodes("locomo", limit=1)[0]
    docs = list(episode.documents)
    batches = session_batches(docs, 2)
    assert len(batches) == 214 and sum(any(CAPTION_MARK in d.text for d in b) for b in batches) == 102
    users = [Mem0User(s, f"{s}_0") for s in speakers_of(docs)]
    for batch in batches:
        for user in users:
            for message, doc in zip(messages_for(user, batch), batch):
                assert CAPTION_MARK not in message["content"]
                assert doc.text.endswith(message["content"][len(doc.author) + 2:] + (
                    doc.text[doc.text.rfind(CAPTION_MARK):] if CAPTION_MARK in doc.text else ""))


def test_a_conversational_turn_still_gives_its_own_stamp_and_a_caption_goes_only_at_the_end():
    turn = Document("D1:1", "[1:56 pm on 8 May, 2023] Caroline: Look [at this] [shared an image: a dog]", "Caroline",
                    author_role="speaker", evidence="as_stored")
    assert split_stamp(turn) == ("1:56 pm on 8 May, 2023", "Caroline: Look [at this] [shared an image: a dog]")
    assert without_caption(split_stamp(turn)[1]) == "Caroline: Look [at this]"
    assert without_caption("Caroline: [shared an image: a dog] and more") == "Caroline: [shared an image: a dog] and more"
