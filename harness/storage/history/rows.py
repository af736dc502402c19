"""The rows the store's queries give back: a run as listed, a case as a reference, a case as a point of a series."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from datetime import datetime

from .samples import decode_samples


@dataclass(frozen=True)
class RunSummary:
    """One stored run, as the listing shows it."""

    id: int
    started_at: datetime
    commit: str | None
    branch: str | None
    dirty: bool | None
    profile: str | None
    gpu_model: str | None
    gpu_uuids: tuple[str, ...]
    host: str | None
    outcome: str
    label: str | None
    source: str | None
    case_count: int


@dataclass(frozen=True)
class HistoryCase:
    """A case's result in one stored run: what a verdict pools into its reference.

    The samples are decoded when first read: a query of 200 runs carries their
    medians for the noise model, and the few runs pooled decode their samples.
    """

    run_id: int
    started_at: datetime
    commit: str | None
    gpu_uuid: str | None
    host: str | None
    timer: str | None
    sass: str | None
    median_s: float
    sample_count: int
    throttled: bool
    encoded_samples: bytes = field(repr=False, compare=False)
    outcome: str = "passed"  # the case's own: passed, failed (slower), accepted (schema.CASE_OUTCOMES)
    # why its slowdown was accepted (an Accept-Slowdown trailer, or an acknowledgement at this run):
    # the case's history starts a new level here, and runs before it are never pooled with it
    accepted_reason: str | None = None

    @property
    def starts_level(self) -> bool:
        return self.accepted_reason is not None

    @functools.cached_property
    def samples(self) -> tuple[float, ...]:
        return decode_samples(self.encoded_samples)


@dataclass(frozen=True)
class SeriesPoint:
    """A case in one run, for a time series: median, the band of its middle half, sample count."""

    run_id: int
    started_at: datetime
    commit: str | None
    gpu_uuid: str | None
    sass: str | None
    median_s: float
    low_s: float  # 25% quantile of the samples
    high_s: float  # 75% quantile
    sample_count: int
    throttled: bool
    outcome: str = "passed"  # the case's own (schema.CASE_OUTCOMES)
    verdict: str | None = None  # the label it was judged with in its run, if judged
    accepted_reason: str | None = None  # an acceptance in its run, or an acknowledgement at it
    run_failed: bool = False  # its run failed besides its slower cases (a correctness test): no reference
    branch: str | None = None


@dataclass(frozen=True)
class SeriesKey:
    gpu: str | None  # a UUID, or a GPU model when grouped by model
    case: str
    timer: str | None
    profile: str | None
