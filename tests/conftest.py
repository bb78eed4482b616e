import os
import shutil
import tempfile

import pytest

from memplusplus.encoder import Encoder

# The tests never read or write the user's own cache (~/.cache/mempp): a session gets a fresh one,
# shared by its tests and the runs they start (subprocesses inherit it), unless the environment
# already names one (CI sets a fresh folder).
if not os.environ.get("MEMPP_CACHE_DIR"):
    _SESSION_CACHE = tempfile.mkdtemp(prefix="mempp-test-cache-")
    os.environ["MEMPP_CACHE_DIR"] = _SESSION_CACHE
else:
    _SESSION_CACHE = None


def pytest_sessionfinish(session, exitstatus) -> None:
    if _SESSION_CACHE is not None:
        shutil.rmtree(_SESSION_CACHE, ignore_errors=True)


@pytest.fixture(scope="session")
def encoder() -> Encoder:
    """One real all-MiniLM-L6-v2 encoder for the whole session (loads in well under a second)."""
    return Encoder()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """With MEMPP_REQUIRE_DATA=1 (CI) a test skipped for want of data fails (tests/data_paths.py)."""
    from tests.data_paths import data_skip_as_failure

    outcome = yield
    data_skip_as_failure(outcome.get_result())
