"""CI's stand-in server (scripts/serve_fake_llm.py) as .ci/run uses it: started as a process, asked
through the openai SDK, stopped with SIGTERM. Its judge replies give every rubric id half marks."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import openai

ROOT = Path(__file__).resolve().parent.parent


def test_the_stand_in_lists_its_model_answers_and_grades_half_marks(tmp_path):
    url_file = tmp_path / "url"
    process = subprocess.Popen([sys.executable, "scripts/serve_fake_llm.py", "--model", "fake-llm", "--url-file", str(url_file)],
                               cwd=ROOT, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not (url_file.exists() and url_file.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.05)
        client = openai.OpenAI(api_key="EMPTY", base_url=url_file.read_text().strip(), max_retries=0, timeout=10)
        assert [m.id for m in client.models.list().data] == ["fake-llm"]

        def say(prompt: str) -> str:
            reply = client.chat.completions.create(model="fake-llm", messages=[{"role": "user", "content": prompt}])
            return reply.choices[0].message.content

        assert say("Question: where did the budget review move?") == "The evidence does not say."
        official = 'Return {"subpoint_scores": {...}} for C2.sub1 and C2.sub3.'
        assert json.loads(say(official))["subpoint_scores"] == {"C2.sub1": 0.5, "C2.sub3": 0.5}
        own = 'Its keys are exactly the facet ids "C4.sub1", "C4.sub2", for example: {"C4.sub1": <fraction>}'
        assert json.loads(say(own))["subpoint_scores"] == {"C4.sub1": 0.5, "C4.sub2": 0.5}
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0
