"""The stored samples are the samples, bit for bit, in less space."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from kernelwatch.storage.history.samples import SamplesError, decode_samples, encode_samples
from tests.support.backends import history_url_fixture, store_fixture  # noqa: F401 (pytest fixtures)

COMMITTED = Path(__file__).resolve().parents[3] / "baselines" / "NVIDIA_H200" / "0005_h200-5fcc19b.json"


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


def test_an_unknown_samples_format_names_its_first_byte_only():
    with pytest.raises(SamplesError, match=r"unknown stored-samples format 07$"):
        decode_samples(bytes([7, 8, 9]))


def test_samples_written_by_earlier_versions_still_read():
    import zlib

    import numpy as np

    blob = bytes([1]) + zlib.compress(np.array([1e-3, 2e-3], np.float64).tobytes())  # format 1, as on disk
    assert decode_samples(blob) == (1e-3, 2e-3)
    with pytest.raises(SamplesError, match=r"format 00$"):
        decode_samples(bytes([0]) + blob[1:])


@pytest.mark.parametrize("samples", [[[1e-3, 2e-3]], 1e-3])
def test_samples_are_a_flat_list(samples):
    from kernelwatch.storage.history.samples import encode_samples

    with pytest.raises(SamplesError, match="at least one sample"):
        encode_samples(samples)
