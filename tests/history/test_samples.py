"""The stored samples are the samples, bit for bit, in less space."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from harness.storage.history.samples import SamplesError, decode_samples, encode_samples

COMMITTED = Path(__file__).resolve().parents[2] / "baselines" / "NVIDIA_H200" / "0005_h200-5fcc19b.json"


def test_samples_come_back_bit_for_bit():
    rng = random.Random(5)
    for samples in ([5.249e-06], [1e-300, 5e-324, 1.7976931348623157e308, 0.1 + 0.2],
                    [rng.lognormvariate(-10, 2) for _ in range(3000)]):
        assert decode_samples(encode_samples(samples)) == tuple(samples)


def test_a_committed_runs_samples_take_about_half_their_float64_bytes():
    benchmarks = json.loads(COMMITTED.read_text())["benchmarks"]
    raw = sum(8 * len(bench["stats"]["data"]) for bench in benchmarks)
    encoded = sum(len(encode_samples(bench["stats"]["data"])) for bench in benchmarks)
    assert encoded < 0.55 * raw


@pytest.mark.parametrize("samples", [[], [1e-5, float("nan")], [1e-5, float("inf")], [0.0], [-1e-5]])
def test_samples_that_are_not_finite_positive_times_are_refused(samples):
    with pytest.raises(SamplesError):
        encode_samples(samples)


@pytest.mark.parametrize("blob", [b"", b"\x07abc", b"\x01not zlib"])
def test_bytes_that_are_no_stored_samples_are_an_error(blob):
    with pytest.raises(SamplesError):
        decode_samples(blob)
