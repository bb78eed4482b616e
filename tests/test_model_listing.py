"""A model the endpoint does not list stops the run in one line before any chat request (issue 24).

The fake server plays a real one: it lists its models at ``GET /v1/models`` and answers 404 to a
chat request naming another model. Before this check, a misspelt model name was found only after
every request had failed (73 of 73 on OrgMemBench).
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.cli import execute
from harness.compose import compose_config
from harness.config import RunConfig, SystemSpec
from harness.plan import check_qa_ready
from model_clients.kvstore import KVStore
from model_clients.model_listing import UnknownModelError, forget_model_lists
from tests.fake_openai_server import FakeOpenAIServer
from tests.llm_client_support import make_client, reqs

SERVED = ("qwen2.5-7b-instruct", "llama-3.1-8b-instruct", "mistral-7b", "phi-3-mini", "gemma-2-9b", "smollm2")


@pytest.fixture(autouse=True)
def fresh_model_lists():
    forget_model_lists()  # the answers are kept per process and ports are reused between tests
    yield
    forget_model_lists()


@pytest.fixture
def listing_server():
    server = FakeOpenAIServer(models=SERVED, reject_unknown_models=True).start()
    yield server
    server.stop()


def test_a_wrong_model_name_fails_before_any_chat_request(listing_server, tmp_path):
    client = make_client(listing_server, tmp_path / "c.sqlite", model="qwen2.5-7b-instruc")
    with pytest.raises(UnknownModelError) as caught:
        client.complete_many(reqs(73), progress=False)
    message = str(caught.value)
    assert listing_server.request_count == 0, "not one chat request was sent"
    assert listing_server.model_list_requests == 1
    assert "\n" not in message and "'qwen2.5-7b-instruc' is not offered by " + listing_server.base_url in message
    assert "'qwen2.5-7b-instruct', 'llama-3.1-8b-instruct'" in message and "and 1 more" in message


def test_a_listed_model_proceeds_and_the_list_is_asked_once_per_endpoint(listing_server, tmp_path):
    for _ in range(2):  # a second client on the same endpoint reuses the answer
        client = make_client(listing_server, tmp_path / "c.sqlite", model="mistral-7b")
        results = client.complete_many(reqs(3), progress=False)
        assert [r.error for r in results] == [None, None, None]
    assert listing_server.request_count == 3 and listing_server.model_list_requests == 1


def test_a_server_without_a_model_list_is_asked_anyway(tmp_path):
    server = FakeOpenAIServer(models=None).start()  # GET /v1/models answers 404: cannot tell, go on
    try:
        results = make_client(server, tmp_path / "c.sqlite", model="any-name").complete_many(reqs(2), progress=False)
        assert [r.error for r in results] == [None, None] and server.request_count == 2
    finally:
        server.stop()


def qa_overrides(server: FakeOpenAIServer, tmp_path: Path, answer_model: str, *extra: str) -> list[str]:
    return [
        "progress=false", "dataset.limit=2", f"store.cache_dir={tmp_path}/cache", f"store.results_dir={tmp_path}/runs",
        "answerer=openai_compatible", f"answerer.model={answer_model}", f"answerer.base_url={server.base_url}",
        "judge=openai_compatible", "judge.model=mistral-7b", f"judge.base_url={server.base_url}", *extra,
    ]


def test_the_cli_stops_a_run_with_a_wrong_answerer_model_in_one_line_before_retrieval(listing_server, tmp_path, capsys):
    code = execute(compose_config(qa_overrides(listing_server, tmp_path, "gpt-4o-mnii")))
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.startswith("error: answerer: model 'gpt-4o-mnii' is not offered by ") and "\n" not in err
    assert listing_server.request_count == 0 and listing_server.model_list_requests == 1
    assert not (tmp_path / "cache" / "retrieval.sqlite").exists() and not (tmp_path / "runs").exists()


def test_a_wrong_judge_model_is_named_as_the_judge(listing_server, tmp_path):
    overrides = qa_overrides(listing_server, tmp_path, "mistral-7b")
    overrides[overrides.index("judge.model=mistral-7b")] = "judge.model=gpt-4o-mini"
    with pytest.raises(UnknownModelError, match=r"^judge: model 'gpt-4o-mini' is not offered"):
        check_qa_ready(RunConfig.from_dict(compose_config(overrides)))


@pytest.mark.parametrize("mode", ["estimate=true", "cache_only=true"])
def test_a_dry_run_or_a_replay_does_not_ask(listing_server, tmp_path, mode):
    check_qa_ready(RunConfig.from_dict(compose_config(qa_overrides(listing_server, tmp_path, "gpt-4o-mnii", mode))))
    assert listing_server.model_list_requests == 0


def test_a_wrong_write_time_model_stops_before_ingesting(listing_server, tmp_path):
    from harness.systems.registry import write_time_client

    def context(model: str, cache_only: bool = False) -> SimpleNamespace:
        llm = {"model": model, "base_url": listing_server.base_url, "api_key_env": None}
        spec = SystemSpec(name="mem0", kind="mem0", k=5, params={"llm": llm})
        return SimpleNamespace(spec=spec, cache_only=cache_only, llm_cache=KVStore(tmp_path / "llm.sqlite"))

    with pytest.raises(UnknownModelError, match=r"^system.llm: model 'gpt-4.1-nano' is not offered"):
        write_time_client(context("gpt-4.1-nano"))
    assert write_time_client(context("phi-3-mini")).role == "system.llm"
    write_time_client(context("gpt-4.1-nano", cache_only=True))  # a replay sends nothing: not asked
    assert listing_server.model_list_requests == 1 and listing_server.request_count == 0


@pytest.mark.parametrize("reply", [b'{"object": "list", "data": "none here"}', b"<html>not json</html>", b'{"data": [{"name": "x"}]}'])
def test_a_reply_that_is_not_a_model_list_is_taken_as_cannot_tell(reply):
    from model_clients.loopback import LoopbackServer, send_bytes, send_json
    from model_clients.model_listing import offered_models
    from memplusplus.api_keys import Endpoint

    server = LoopbackServer(on_post=lambda h: send_json(h, 404, {}), on_get=lambda h: send_bytes(h, 200, reply)).start()
    try:
        assert offered_models(Endpoint(model="m", base_url=server.base_url, api_key_env=None)) is None
    finally:
        server.stop()


def test_the_model_list_is_asked_through_the_sdk_without_a_client_of_our_own(listing_server, monkeypatch):
    """openai 3.x brings httpx2, not httpx (issue 30): the check must not import an HTTP client itself."""
    import sys

    from memplusplus.api_keys import Endpoint
    from model_clients.model_listing import offered_models

    import openai

    if int(openai.__version__.split(".")[0]) < 3:
        pytest.skip(f"openai {openai.__version__} is itself built on httpx")
    monkeypatch.setitem(sys.modules, "httpx", None)  # `import httpx` now raises ImportError
    listed = offered_models(Endpoint(model="mistral-7b", base_url=listing_server.base_url, api_key_env=None))
    assert listed == SERVED and listing_server.model_list_requests == 1
