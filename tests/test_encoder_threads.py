"""The local encoder's torch threads for a batch (issue 30): one by default, measured fastest on this
machine (results/BENCHMARKS.md), settable, recorded, and no part of the vectors or their cache key."""

from __future__ import annotations

import numpy as np
import torch

from harness.compose import compose_config
from harness.config import RunConfig
from harness.plan import build_encoder
from memplusplus.encoder import Encoder, EncoderConfig

TEXTS = ["Caroline went to the LGBTQ support group on 7 May 2023.", "Melanie painted a sunrise.",
         "The quarterly review moved to Thursday.", "hi"]


class CountingEncoder(Encoder):
    """Notes torch's thread count while a batch is computed."""

    seen: list[int]

    def _compute(self, texts):
        model = self._load()
        original = model.encode

        def encode(*args, **kwargs):
            self.seen.append(torch.get_num_threads())
            return original(*args, **kwargs)

        model.encode = encode
        try:
            return super()._compute(texts)
        finally:
            model.encode = original


def _encoder(threads) -> CountingEncoder:
    encoder = CountingEncoder(EncoderConfig(device="cpu", threads=threads))
    encoder.seen = []
    return encoder


def test_a_batch_runs_on_one_thread_by_default_and_on_the_count_set():
    config = RunConfig.from_dict(compose_config([]))
    assert build_encoder(config.encoder.backend, config.encoder.params, cache=None).config.threads == 1
    two = RunConfig.from_dict(compose_config(["++encoder.threads=2"]))
    assert build_encoder(two.encoder.backend, two.encoder.params, cache=None).config.threads == 2

    before = torch.get_num_threads()
    one, default = _encoder(1), _encoder(None)
    a, b = one.encode(TEXTS), default.encode(TEXTS)
    assert one.seen == [1] and default.seen == [before]  # None leaves torch's own count
    assert torch.get_num_threads() == before  # restored after the batch
    np.testing.assert_allclose(a, b, atol=1e-5)  # the same vectors
    assert one.key(TEXTS[0]) == default.key(TEXTS[0])  # and the same cache key
    assert one.stats()["encoder_threads"] == 1 and default.stats()["encoder_threads"] == 0
