"""What the batch tests share: BM25 retrievals of a few questions, made once per module, and a
fresh cache holding them for each run (so an answered run retrieves nothing and embeds nothing)."""

from __future__ import annotations

from pathlib import Path

import pytest

QUESTIONS = 3
JUDGE_RUNS = 2


@pytest.fixture(scope="module")
def retrieved(tmp_path_factory) -> Path:
    """BM25 retrievals of the first questions (nothing to embed: fast), made once; each test copies them."""
    from harness.compose import compose_config
    from harness.config import RunConfig
    from harness.runner import run

    folder = tmp_path_factory.mktemp("retrieved")
    run(RunConfig.from_dict(compose_config(["progress=false", "system=bm25", f"dataset.limit={QUESTIONS}",
                                            f"store.cache_dir={folder}", f"store.results_dir={folder}/runs"])))
    return folder


def fresh_cache(retrieved: Path, target: Path) -> Path:
    from tests.test_qa_stage import copy_sqlite

    for name in ("embeddings.sqlite", "retrieval.sqlite"):
        copy_sqlite(retrieved / name, target / name)
    return target
