"""The SQL of the store's reads: the reference runs of a nightly's verdicts, the series of `changes` and `site`.

Built once per call as SQLAlchemy Core expressions (compiled per backend); store.py runs them and maps
the rows to src/kernelwatch/storage/history/rows.py's types.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from .schema import ACCURACY, ACKNOWLEDGEMENTS, CASES, RUNS


def acknowledgement_of(cases: sa.Table) -> sa.Select:
    """The acknowledgements of a case row's case at its run (a correlated select)."""
    return sa.select(ACKNOWLEDGEMENTS.c.id).where(ACKNOWLEDGEMENTS.c.node_id == cases.c.node_id,
                                                  ACKNOWLEDGEMENTS.c.run_id == cases.c.run_id)


def _newest_acknowledgement() -> sa.ScalarSelect:
    return (acknowledgement_of(CASES).with_only_columns(ACKNOWLEDGEMENTS.c.reason)
            .order_by(ACKNOWLEDGEMENTS.c.acknowledged_at.desc(), ACKNOWLEDGEMENTS.c.id.desc()).limit(1)
            .scalar_subquery())


def reference_query(uuids: Sequence[str], profile: str | None, limit_runs: int) -> sa.Select:
    """The newest `limit_runs` cases per (case, GPU) that may be a reference (HistoryStore.reference_history)."""
    newest_first = (RUNS.c.started_at.desc(), RUNS.c.id.desc())
    profile_matches = RUNS.c.profile.is_(None) if profile is None else RUNS.c.profile == profile
    acknowledged = acknowledgement_of(CASES)
    usable_run = sa.or_(RUNS.c.outcome == "passed", RUNS.c.other_failures == 0)
    usable_case = sa.or_(CASES.c.outcome != "failed", acknowledged.exists())
    ranked = (sa.select(CASES.c.id.label("case_row"),
                        sa.func.row_number().over(partition_by=(CASES.c.node_id, CASES.c.gpu_uuid),
                                                  order_by=newest_first).label("rank"))
              .join(RUNS, RUNS.c.id == CASES.c.run_id)
              .where(CASES.c.gpu_uuid.in_(uuids), usable_run, usable_case, profile_matches)
              .subquery())
    return (sa.select(CASES.c.node_id, RUNS.c.id, RUNS.c.started_at, RUNS.c.commit, CASES.c.gpu_uuid, RUNS.c.host,
                       CASES.c.timer, CASES.c.sass, CASES.c.median_s, CASES.c.sample_count, CASES.c.throttled,
                       CASES.c.samples, CASES.c.outcome,
                       sa.func.coalesce(_newest_acknowledgement(), CASES.c.accepted_reason), CASES.c.energy_windows,
                       CASES.c.record["phases"])  # a host routine's phases: only that key of its record's JSON
             .select_from(ranked.join(CASES, CASES.c.id == ranked.c.case_row).join(RUNS, RUNS.c.id == CASES.c.run_id))
             .where(ranked.c.rank <= limit_runs)
             .order_by(CASES.c.node_id, *newest_first))


def series_query(by: str, gpu: str | None, case: str | None, timer: str | None, profile: str | None,
                 cases: Sequence[str] | None) -> sa.Select:
    """Every case of the narrowed series, oldest first, with its outcome (HistoryStore.case_series)."""
    gpu_column = CASES.c.gpu_uuid if by == "gpu_uuid" else RUNS.c.gpu_model
    acknowledged = _newest_acknowledgement()
    run_failed = sa.and_(RUNS.c.outcome == "failed", sa.func.coalesce(RUNS.c.other_failures, 1) > 0)
    query = (sa.select(gpu_column.label("gpu"), CASES.c.node_id, CASES.c.timer, RUNS.c.profile, RUNS.c.id,
                       RUNS.c.started_at, RUNS.c.commit, CASES.c.gpu_uuid, CASES.c.sass, CASES.c.median_s,
                       CASES.c.q25_s, CASES.c.q75_s, CASES.c.sample_count, CASES.c.throttled, CASES.c.outcome,
                       CASES.c.verdict, sa.func.coalesce(acknowledged, CASES.c.accepted_reason),
                       sa.case((run_failed, True), else_=False), RUNS.c.branch, CASES.c.energy_j)
             .join(RUNS, RUNS.c.id == CASES.c.run_id)
             .order_by(RUNS.c.started_at, RUNS.c.id))
    if gpu is not None:
        query = query.where(sa.or_(CASES.c.gpu_uuid == gpu, RUNS.c.gpu_model == gpu))
    for column, value in ((CASES.c.node_id, case), (CASES.c.timer, timer), (RUNS.c.profile, profile)):
        if value is not None:
            query = query.where(column == value)
    if cases is not None:
        query = query.where(CASES.c.node_id.in_(list(cases)))
    return query


def _accuracy_acknowledgement() -> sa.ScalarSelect:
    """The newest acknowledgement of an accuracy row's case at its run (`acknowledge` names a check as a case)."""
    return (acknowledgement_of(ACCURACY).with_only_columns(ACKNOWLEDGEMENTS.c.reason)
            .order_by(ACKNOWLEDGEMENTS.c.acknowledged_at.desc(), ACKNOWLEDGEMENTS.c.id.desc()).limit(1)
            .scalar_subquery())


def accuracy_query(uuids: Sequence[str] | None, profile: str | None, case: str | None = None,
                   any_profile: bool = False) -> sa.Select:
    """Every stored check on these GPUs (None: all), newest first, with its run and its acknowledgement
    (HistoryStore.accuracy_history and accuracy_series)."""
    query = (sa.select(ACCURACY.c.node_id, RUNS.c.id, RUNS.c.started_at, RUNS.c.commit, ACCURACY.c.gpu_uuid,
                       ACCURACY.c.outcome, sa.func.coalesce(_accuracy_acknowledgement(), ACCURACY.c.accepted_reason),
                       ACCURACY.c.record, RUNS.c.profile, RUNS.c.branch, RUNS.c.gpu_model)
             .join(RUNS, RUNS.c.id == ACCURACY.c.run_id)
             .order_by(ACCURACY.c.node_id, RUNS.c.started_at.desc(), RUNS.c.id.desc()))
    if uuids is not None:
        query = query.where(ACCURACY.c.gpu_uuid.in_(list(uuids)))
    if not any_profile:
        query = query.where(RUNS.c.profile.is_(None) if profile is None else RUNS.c.profile == profile)
    if case is not None:
        query = query.where(ACCURACY.c.node_id == case)
    return query


def runs_there(conn: sa.Connection) -> str:
    """"it holds runs 1-12" (or "it holds no run"), for an error that names a run it lacks."""
    low, high, count = conn.execute(sa.select(sa.func.min(RUNS.c.id), sa.func.max(RUNS.c.id),
                                              sa.func.count())).one()
    if not count:
        return "it holds no run"
    return f"it holds {count} runs, ids {low}-{high}" if count > 1 else f"it holds run {low} only"
