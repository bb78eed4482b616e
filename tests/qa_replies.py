"""Fixture replies of a fake model for the answer and judge stages (plumbing, never a model score)."""

from __future__ import annotations

import json
import re

from tests.fake_openai_server import last_user_content

FIXTURE_ANSWER = "Fixture answer: the memory says the change happened on 2023-09-15."


def fixture_reply(body: dict) -> str:
    """An answer, or a judge reply granting every rubric subpoint, for the official judge request
    (subpoint ids as JSON ``"id"`` fields, graded under ``subpoint_scores``) and our own."""
    content = last_user_content(body)
    if "Retrieved records:" in content:
        return FIXTURE_ANSWER
    official = re.findall(r'^\s*"id": "([^"]+)",$', content, flags=re.MULTILINE)
    if official:
        return "```json\n" + json.dumps({"subpoint_scores": {facet: 1 for facet in official}}) + "\n```"
    facets = re.findall(r"^- id: (\S+)$", content, flags=re.MULTILINE)
    if facets:
        return "```json\n" + json.dumps({facet: 1 for facet in facets}) + "\n```"
    return "CORRECT"
