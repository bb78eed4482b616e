import pytest

from memplusplus.encoder import Encoder


@pytest.fixture(scope="session")
def encoder() -> Encoder:
    """One real all-MiniLM-L6-v2 encoder for the whole session (loads in well under a second)."""
    return Encoder()
