"""The history store: record runs, list them, export them, and the queries of the verdicts."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import URL

from kernelwatch.verdict.accuracy import AccuracyRecord, StoredAccuracy
from kernelwatch.verdict.noise import StoredResult, stored_phases

from . import queries, schema
from .amendments import Amendments, answered
from .connection import HistoryError, check_folder, create_engine, deadline, resolve_url, safe_url, translated_errors
from .documents import (
    DocumentError,
    accuracy_rows,
    benchmark_from_row,
    case_rows,
    checked_run,
    document_from_rows,
    run_row,
)
from .rows import Point, RunSummary, SeriesKey
from .samples import decode_samples
from .schema import ACCURACY, CASES, RUNS, StoreSchemaError
from .validation import INT32

OUTCOMES = ("passed", "failed")


class RefusedRun(HistoryError):
    """A document the store will not record (src/kernelwatch/storage/history/validation.py): nothing was written."""


class AlreadyRecorded(HistoryError):
    """This very document is stored already (same content hash)."""

    def __init__(self, message: str, run_id: int | None):
        super().__init__(message)
        self.run_id = run_id


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


class HistoryStore(Amendments):
    """A history of runs in one database (use `open_store`); its acknowledgements and removals are
    src/kernelwatch/storage/history/amendments.py's."""

    def __init__(self, url: URL, engine: sa.Engine):
        self.url = url
        self.engine = engine
        self._wrote = False

    def __repr__(self) -> str:
        return f"HistoryStore({safe_url(self.url)})"

    @property
    def safe_url(self) -> str:
        return safe_url(self.url)

    def close(self) -> None:
        """Close the store. A SQLite writer first checkpoints its write-ahead log into the file, so that
        a copy of history.sqlite alone (a cache step) holds every run; a run written by a writer killed
        before it closed still lives in history.sqlite-wal, which such a step must keep too."""
        if self._wrote and self.url.get_backend_name() == "sqlite":
            try:
                with self.engine.connect() as conn:
                    conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
            except sa.exc.SQLAlchemyError:
                pass  # another connection holds the file: its own close checkpoints
        self.engine.dispose()

    def __enter__(self) -> HistoryStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _errors(self, doing: str):
        return translated_errors(self.url, doing)

    @answered("read")
    def schema_version(self) -> int:
        with self._errors("read"), self.engine.connect() as conn:
            return schema.stored_version(conn)

    # ---- writing ---------------------------------------------------------------------
    @answered("write to")
    def record_run(self, document: dict, *, outcome: str, profile: str | None, label: str | None = None,
                   source: str | None = None, other_failures: int | None = None) -> int:
        """Store one run (pytest-benchmark's JSON document) in one transaction; returns its id.

        ``outcome`` is 'passed' or 'failed' (some test failed).  Each case keeps its
        own outcome, from its record's verdict: 'failed' (slower: never a reference),
        'accepted' (a slowdown accepted: a reference, and the start of a new level),
        else 'passed'.  ``other_failures``: how many failed tests of a failed run were
        not slower cases (a correctness test); a failed run with any, or not known
        (None), is never a reference, whatever its cases say.  Raises AlreadyRecorded
        (a HistoryError, with the stored run's id) for a document stored before, and
        HistoryError for a document that is no run or a store that cannot be written.
        """
        if outcome not in OUTCOMES:
            raise HistoryError(f"outcome must be one of {', '.join(OUTCOMES)}, not {outcome!r}")
        if other_failures is not None and (isinstance(other_failures, bool) or not isinstance(other_failures, int)
                                           or not 0 <= other_failures < INT32):
            raise HistoryError(f"other_failures must be a count of tests, 0 or more, not {other_failures!r}")
        if outcome == "passed":
            other_failures = 0
        try:
            document = checked_run(document, profile=profile, label=label, source=source)
            run = dict(run_row(document, outcome=outcome, profile=profile, label=label, source=source),
                       other_failures=other_failures)
            cases = case_rows(document)
            checks = accuracy_rows(document)
        except DocumentError as exc:
            raise RefusedRun(f"cannot record {source or 'the run'}: {exc}") from None
        try:
            with self._errors("write to"), self.engine.connect().execution_options(history_write=True) as conn:
                with conn.begin():
                    # looked for first, under a lock of this hash (SQLite: the write lock already): a run stored
                    # before is never inserted again, so PostgreSQL's identity is not drawn for it
                    if conn.dialect.name == "postgresql":
                        conn.execute(sa.select(sa.func.pg_advisory_xact_lock(int(run["content_hash"][:15], 16))))
                    existing = conn.execute(sa.select(RUNS.c.id).where(
                        RUNS.c.content_hash == run["content_hash"])).scalar()
                    if existing is not None:
                        raise AlreadyRecorded(f"{source or 'this run'} is already recorded as "
                                              f"run {existing} in {self.safe_url}", existing)
                    run_id = conn.execute(sa.insert(RUNS).values(run)).inserted_primary_key[0]
                    if cases:
                        conn.execute(sa.insert(CASES), [{**case, "run_id": run_id} for case in cases])
                    if checks:
                        conn.execute(sa.insert(ACCURACY), [{**check, "run_id": run_id} for check in checks])
                self._wrote = True
                return run_id
        except AlreadyRecorded:
            raise
        except HistoryError:
            existing = self._run_with_hash(run["content_hash"])  # stored by another writer meanwhile
            if existing is not None:
                raise AlreadyRecorded(f"{source or 'this run'} is already recorded as run "
                                      f"{existing} in {self.safe_url}", existing) from None
            raise

    def _run_with_hash(self, content_hash: str) -> int | None:
        with self._errors("read"), self.engine.connect() as conn:
            return conn.execute(sa.select(RUNS.c.id).where(RUNS.c.content_hash == content_hash)).scalar()

    # ---- reading ---------------------------------------------------------------------
    @answered("read")
    def runs(self, *, gpu: str | None = None, outcome: str | None = None, limit: int | None = None) -> list[RunSummary]:
        """Stored runs, newest first; ``gpu`` matches a GPU model or one of the run's UUIDs."""
        columns = [RUNS.c[name] for name in ("id", "started_at", "commit", "branch", "dirty", "profile", "gpu_model",
                                             "gpu_uuids", "host", "outcome", "label", "source", "case_count")]
        query = sa.select(*columns).order_by(RUNS.c.started_at.desc(), RUNS.c.id.desc())
        if outcome is not None:
            query = query.where(RUNS.c.outcome == outcome)
        if gpu is not None:
            on_gpu = sa.select(CASES.c.run_id).where(CASES.c.gpu_uuid == gpu)
            query = query.where(sa.or_(RUNS.c.gpu_model == gpu, RUNS.c.id.in_(on_gpu)))
        if limit is not None:
            query = query.limit(limit)
        with self._errors("read"), self.engine.connect() as conn:
            rows = conn.execute(query).mappings().all()
        return [RunSummary(**{**row, "started_at": _utc(row["started_at"]), "gpu_uuids": tuple(row["gpu_uuids"])})
                for row in rows]

    @answered("read")
    def export_run(self, run_id: int) -> dict:
        """The run as pytest-benchmark JSON, as it was recorded (``stats.data`` = its samples)."""
        cases_query = (sa.select(CASES.c.node_id, CASES.c.benchmark, CASES.c.record, CASES.c.stats, CASES.c.samples)
                       .where(CASES.c.run_id == run_id).order_by(CASES.c.position))
        with self._errors("read"), self.engine.connect() as conn:
            run = conn.execute(sa.select(RUNS.c.machine_info, RUNS.c.commit_info, RUNS.c.document_rest)
                               .where(RUNS.c.id == run_id)).first()
            if run is None:
                raise HistoryError(f"there is no run {run_id} in the history store {self.safe_url}")
            cases = conn.execute(cases_query).all()
            checks = conn.execute(sa.select(ACCURACY.c.record).where(ACCURACY.c.run_id == run_id)
                                  .order_by(ACCURACY.c.position)).scalars().all()
        benchmarks = [benchmark_from_row(row.node_id, row.benchmark, row.record, row.stats, decode_samples(row.samples))
                      for row in cases]
        return document_from_rows(run.machine_info, run.commit_info, run.document_rest, benchmarks, list(checks))

    @answered("read")
    def reference_history(self, gpu_uuids: Iterable[str], *, profile: str | None,
                          limit_runs: int) -> dict[str, list[StoredResult]]:
        """Per case, its results on these GPUs in the newest ``limit_runs`` runs of ``profile`` that may be
        its reference.

        A case may be a reference unless it failed (slower), or its run failed besides its
        cases (a correctness test; a failed run of unknown failures, as before version 3).
        An acknowledged case at a run (`acknowledge`) may be a reference even where it
        failed: the acknowledgement accepts that run's level.  Each result carries its
        ``accepted_reason`` where its slowdown was accepted or acknowledged there.  One
        query for the whole run.  Newest first; up to ``limit_runs`` per case and GPU;
        throttled results included (flagged: the caller leaves them out of a reference).
        ``profile=None`` means runs recorded without a profile.
        """
        uuids = sorted(set(gpu_uuids))
        if not uuids or limit_runs < 1:
            return {}
        query = queries.reference_query(uuids, profile, limit_runs)
        history: dict[str, list[StoredResult]] = {}
        with self._errors("read"), self.engine.connect() as conn:
            for row in conn.execute(query):
                history.setdefault(row[0], []).append(StoredResult(
                    gpu_uuid=row[4], timer=row[6], median=row[8], run=f"history run {row[1]}", sass=row[7],
                    samples=decode_samples(row[11]), started_at=_utc(row[2]).isoformat(timespec="seconds"),
                    commit=row[3], accepted_reason=row[13], run_id=row[1], host=row[5], throttled=bool(row[10]),
                    outcome=row[12], energy=decode_samples(row[14]) if row[14] is not None else (),
                    phases=stored_phases(row[15])))
        return history

    @answered("read")
    def case_series(self, *, by: str = "gpu_uuid", gpu: str | None = None, case: str | None = None,
                    timer: str | None = None, profile: str | None = None,
                    cases: Sequence[str] | None = None) -> dict[SeriesKey, list[Point]]:
        """Per (GPU UUID or model, case, timer, profile), every run of the case oldest first, failed ones too.

        Each point carries the case's outcome and verdict, the reason of an acceptance at
        it (its own, or an acknowledgement's: the newest), and whether its run failed
        besides its cases: a step is found where it happened, and drawn with the verdicts
        of its runs.  ``by`` is 'gpu_uuid' or 'gpu_model'; ``gpu`` (a GPU model or UUID,
        whichever the series are keyed by), ``case`` (or ``cases``), ``timer`` and
        ``profile`` narrow the series (None: all).  One query, no samples read: the band
        is the 25-75% quantiles stored with each case.
        """
        if by not in ("gpu_uuid", "gpu_model"):
            raise HistoryError(f"a series is per gpu_uuid or gpu_model, not {by!r}")
        query = queries.series_query(by, gpu, case, timer, profile, cases)
        series: dict[SeriesKey, list[Point]] = {}
        with self._errors("read"), self.engine.connect() as conn:
            for row in conn.execute(query):
                key = SeriesKey(row[0], row[1], row[2], row[3])
                median = row[9]
                series.setdefault(key, []).append(Point(
                    run_id=str(row[4]), started_at=_utc(row[5]), commit=row[6] or "unknown", branch=row[18],
                    median_s=median, low_s=min(row[10], median), high_s=max(row[11], median), sample_count=row[12],
                    gpu_uuid=row[7], outcome=row[14], verdict=row[15], accepted_reason=row[16],
                    run_failed=bool(row[17]), sass=row[8], throttled=bool(row[13]), energy_j=row[19]))
        return series

    @answered("read")
    def accuracy_history(self, gpu_uuids: Iterable[str] | None, *, profile: str | None = None,
                         case: str | None = None, any_profile: bool = False) -> dict[str, list[StoredAccuracy]]:
        """Per case, its stored correctness checks on these GPUs (None: every GPU) in runs of ``profile`` (unless
        ``any_profile``), newest first, each with its outcome and the reason of an acceptance or acknowledgement
        (src/kernelwatch/verdict/accuracy.py judges a check against them)."""
        query = queries.accuracy_query(None if gpu_uuids is None else sorted(set(gpu_uuids)), profile, case,
                                       any_profile)
        history: dict[str, list[StoredAccuracy]] = {}
        with self._errors("read"), self.engine.connect() as conn:
            for row in conn.execute(query):
                record = AccuracyRecord.from_dict(row[7])
                record.gpu_uuid = record.gpu_uuid or row[4]
                history.setdefault(row[0], []).append(StoredAccuracy(
                    run_id=row[1], commit=row[3], started_at=_utc(row[2]).isoformat(timespec="seconds"),
                    record=record, outcome=row[5], accepted_reason=row[6], profile=row[8], branch=row[9],
                    gpu_model=row[10]))
        return history

    @answered("read")
    def case_record(self, case: str, run_id: int) -> dict | None:
        """The stored record (extra_info) of ``case`` in run ``run_id``, or None where the run holds no such case."""
        query = sa.select(CASES.c.record).where(CASES.c.run_id == run_id, CASES.c.node_id == case)
        with self._errors("read"), self.engine.connect() as conn:
            return conn.execute(query).scalar()


def open_store(url: str | None = None, *, migrate: bool = True, create: bool = True) -> HistoryStore:
    """Open (and, unless told not to, create or migrate) the store at ``url``.

    ``url``: a SQLAlchemy URL or a path of a SQLite file; None: ``$KERNELWATCH_HISTORY``
    or the default file (src/kernelwatch/storage/history/connection.py).  ``create=False`` (the
    commands that only read): a store that does not exist is an error, never made.
    Raises HistoryError, naming the store with its password hidden, when it cannot be
    reached, is not a database, or has a schema newer than this code.
    """
    try:
        resolved = resolve_url(url)
    except OSError as exc:
        raise HistoryError(f"cannot create the folder of the default history store: {exc.strerror or exc}") from None
    check_folder(resolved)
    if not create and resolved.get_backend_name() == "sqlite" and not Path(resolved.database or "").exists():
        raise HistoryError(f"there is no history store at {safe_url(resolved)}: a nightly with --history makes "
                           f"it, or `import`")
    engine = create_engine(resolved)
    store = HistoryStore(resolved, engine)
    try:
        with store._errors("open"):
            if not create and store.schema_version() == 0:
                raise HistoryError(f"{safe_url(resolved)} holds no history store: a nightly with --history makes "
                                   f"it, or `import`")
            if migrate:
                deadline(resolved, "open", lambda: schema.migrate(engine))
            else:
                store.schema_version()
    except StoreSchemaError as exc:
        engine.dispose()
        raise HistoryError(f"the history store {safe_url(resolved)} cannot be used: {exc}") from None
    except HistoryError:
        engine.dispose()
        raise
    return store
