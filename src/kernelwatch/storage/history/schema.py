"""The store's schema: ordered, numbered migrations, and the tables they give.

Each `Migration` creates the tables of its version (their definitions are frozen
there; a later change is a later migration), so the schema the code queries is,
by construction, what the migrations build: `tables()` replays them into a
MetaData without touching a database.  ``schema_version`` holds one row per
applied migration.  `migrate` applies the missing ones in one transaction, taken under a
lock (SQLite: ``BEGIN IMMEDIATE``; PostgreSQL: a transaction-level advisory
lock), so two processes opening a new store at once migrate it once; DDL is
transactional on both backends, so a migration interrupted midway leaves the
store at its old version.

Why not Alembic: two backends, a handful of migrations, and a store that migrates
itself when opened (on a CI runner nobody runs ``alembic upgrade``).  Alembic
brings an environment script, revision files and a second configuration for
that; what it adds beyond this file is autogeneration and downgrades, which an
append-only history does not need.  A migration can run any SQLAlchemy Core
statement in its ``upgrade`` for data changes, so the route stays open.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import sqlalchemy as sa

JSON = sa.JSON


def _runs_v1(meta: sa.MetaData) -> sa.Table:
    return sa.Table(
        "runs", meta,
        sa.Column("id", sa.Integer, sa.Identity(), primary_key=True),
        sa.Column("content_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("started_at", sa.DateTime, nullable=False),  # UTC
        sa.Column("recorded_at", sa.DateTime, nullable=False),  # UTC
        sa.Column("commit", sa.String(64)), sa.Column("branch", sa.Text), sa.Column("dirty", sa.Boolean),
        sa.Column("profile", sa.String(32)),
        sa.Column("outcome", sa.String(8), nullable=False),
        sa.Column("label", sa.Text), sa.Column("source", sa.Text),
        sa.Column("gpu_model", sa.Text), sa.Column("gpu_uuids", JSON, nullable=False),
        sa.Column("host", sa.Text), sa.Column("driver", sa.Text), sa.Column("cuda", sa.Text), sa.Column("cupy", sa.Text),
        sa.Column("case_count", sa.Integer, nullable=False),
        sa.Column("machine_info", JSON), sa.Column("commit_info", JSON),
        sa.Column("document_rest", JSON, nullable=False),  # the document's other top-level keys (datetime, version)
        sa.CheckConstraint("outcome IN ('passed', 'failed')", name="runs_outcome"),
        sa.Index("runs_by_time", "outcome", "profile", "started_at"),
        sqlite_autoincrement=True,  # ids are never reused
    )


def _cases_v1(meta: sa.MetaData) -> sa.Table:
    return sa.Table(
        "cases", meta,
        sa.Column("id", sa.Integer, sa.Identity(), primary_key=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("position", sa.Integer, nullable=False),  # in the run's file
        sa.Column("node_id", sa.Text, nullable=False),  # pytest node id: the case
        sa.Column("gpu_uuid", sa.Text),
        sa.Column("timer", sa.Text), sa.Column("sass", sa.Text),  # timer; machine-code identity
        sa.Column("median_s", sa.Double, nullable=False),
        sa.Column("q25_s", sa.Double, nullable=False), sa.Column("q75_s", sa.Double, nullable=False),
        sa.Column("sample_count", sa.Integer, nullable=False), sa.Column("rsd", sa.Double),
        sa.Column("sm_clock_mhz_min", sa.Integer), sa.Column("sm_clock_mhz_max", sa.Integer),
        sa.Column("throttled", sa.Boolean, nullable=False),
        sa.Column("verdict", sa.Text), sa.Column("reference", sa.Text),
        sa.Column("record", JSON, nullable=False),  # the benchmark's extra_info, whole
        sa.Column("benchmark", JSON, nullable=False),  # group, name, params, param, options
        sa.Column("stats", JSON, nullable=False),  # pytest-benchmark's stats without data
        sa.Column("samples", sa.LargeBinary, nullable=False),  # src/kernelwatch/storage/history/samples.py
        sa.UniqueConstraint("run_id", "node_id", name="cases_one_per_run"),
        sa.Index("cases_by_gpu", "gpu_uuid", "node_id"),
        sqlite_autoincrement=True,
    )


def _schema_version_v1(meta: sa.MetaData) -> sa.Table:
    return sa.Table(
        "schema_version", meta,
        sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("applied_at", sa.DateTime, nullable=False, server_default=sa.func.current_timestamp()),
        sa.Column("summary", sa.Text, nullable=False),
    )


def _acknowledgements_v2(meta: sa.MetaData) -> sa.Table:
    return sa.Table(
        "acknowledgements", meta,
        sa.Column("id", sa.Integer, sa.Identity(), primary_key=True),
        sa.Column("node_id", sa.Text, nullable=False),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("who", sa.Text, nullable=False),
        sa.Column("acknowledged_at", sa.DateTime, nullable=False),  # UTC
        sa.Index("acknowledgements_by_case", "node_id", "run_id"),
        sqlite_autoincrement=True,
    )


# Version 3: a case, not a run, fails. Each case keeps its own outcome (its timed test's): "failed" for a
# slower verdict, "accepted" for a slowdown accepted in the nightly (an Accept-Slowdown trailer in its
# window), else "passed"; with the reason of an acceptance. A run keeps how many of its failed tests were
# not slower cases (a correctness failure): such a run is never a reference, whatever its cases say.
CASE_OUTCOMES = ("passed", "failed", "accepted")


def _case_outcome_v3() -> sa.Column:
    return sa.Column("outcome", sa.String(8), nullable=False, server_default="passed")


def _accepted_reason_v3() -> sa.Column:
    return sa.Column("accepted_reason", sa.Text)


def _other_failures_v3() -> sa.Column:
    # None: not known (a run recorded before version 3, or imported): a failed run then is failed whole
    return sa.Column("other_failures", sa.Integer)


def _case_outcomes_from_verdicts(conn: sa.Connection) -> None:
    """Old rows: a case judged slower failed; every other case of a run keeps the run's outcome in the
    run's ``outcome`` and ``other_failures`` (None), so a failed run's cases are still never references."""
    cases = sa.table("cases", sa.column("outcome"), sa.column("verdict"))
    conn.execute(sa.update(cases).where(cases.c.verdict == "slower").values(outcome="failed"))


# Version 4: a case's energy (src/kernelwatch/verdict/energy.py), where the run measured it: joules per launch
# (the windows' mean) to query, and each window's value, stored as samples are, for the energy verdict.
def _energy_j_v4() -> sa.Column:
    return sa.Column("energy_j", sa.Double)


def _energy_windows_v4() -> sa.Column:
    return sa.Column("energy_windows", sa.LargeBinary)


# Version 5: a run that should not be there (samples of a broken timer, a run of another GPU imported by
# mistake) is removed, with its cases and acknowledgements, by `remove-run`; the removal is logged here
# with its reason, who made it and when, and what the run was (its hash, time, commit, GPU, cases).
def _removed_runs_v5(meta: sa.MetaData) -> sa.Table:
    return sa.Table(
        "removed_runs", meta,
        sa.Column("id", sa.Integer, sa.Identity(), primary_key=True),
        sa.Column("run_id", sa.Integer, nullable=False),  # no foreign key: the run is gone
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("who", sa.Text, nullable=False),
        sa.Column("removed_at", sa.DateTime, nullable=False),  # UTC
        sa.Column("run", JSON, nullable=False),  # what the run was: `runs`' fields, and the acknowledgements removed
        sqlite_autoincrement=True,
    )


# Version 6: every correctness check's errors (src/kernelwatch/verdict/accuracy.py), a row per check and run: the
# maximum and average error, the tolerance, the inputs' identity, the check's own outcome and accuracy verdict,
# and its record whole (the run document's kernelwatch_accuracy entry, given back by export).
def _accuracy_v6(meta: sa.MetaData) -> sa.Table:
    return sa.Table(
        "accuracy", meta,
        sa.Column("id", sa.Integer, sa.Identity(), primary_key=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("position", sa.Integer, nullable=False),  # in the run's list of checks
        sa.Column("node_id", sa.Text, nullable=False),
        sa.Column("gpu_uuid", sa.Text),
        sa.Column("max_error", sa.Double), sa.Column("avg_error", sa.Double),  # None: not finite
        sa.Column("tolerance_max", sa.Double), sa.Column("tolerance_avg", sa.Double),
        sa.Column("shape", sa.Text), sa.Column("input_kind", sa.Text), sa.Column("seed", sa.BigInteger),
        sa.Column("outcome", sa.String(8), nullable=False),  # passed, failed (tolerance or less accurate), accepted
        sa.Column("verdict", sa.Text), sa.Column("accepted_reason", sa.Text),
        sa.Column("record", JSON, nullable=False),
        sa.UniqueConstraint("run_id", "node_id", name="accuracy_one_per_run"),
        sa.Index("accuracy_by_gpu", "gpu_uuid", "node_id"),
        sqlite_autoincrement=True,
    )


@dataclass(frozen=True)
class Migration:
    """One migration: the tables it creates, the columns it adds to tables of earlier migrations
    ((table name, column factory) pairs), and any statements it runs after."""

    version: int
    summary: str
    tables: tuple[Callable[[sa.MetaData], sa.Table], ...] = ()
    upgrade: Callable[[sa.Connection], None] | None = None
    columns: tuple[tuple[str, Callable[[], sa.Column]], ...] = ()


MIGRATIONS = (
    Migration(1, "runs, cases and their samples", (_schema_version_v1, _runs_v1, _cases_v1)),
    Migration(2, "acknowledgements of accepted changes", (_acknowledgements_v2,)),
    Migration(3, "an outcome per case (failed, accepted with its reason), a run's failures besides its cases",
              columns=(("cases", _case_outcome_v3), ("cases", _accepted_reason_v3), ("runs", _other_failures_v3)),
              upgrade=_case_outcomes_from_verdicts),
    # older rows measured no energy: the new columns stay empty there
    Migration(4, "a case's energy per launch and its windows",
              columns=(("cases", _energy_j_v4), ("cases", _energy_windows_v4))),
    Migration(5, "a log of the runs removed, each with its reason", (_removed_runs_v5,)),
    Migration(6, "every correctness check's errors, tolerance, inputs and accuracy verdict", (_accuracy_v6,)),
)
CURRENT_VERSION = MIGRATIONS[-1].version
assert [migration.version for migration in MIGRATIONS] == list(range(1, CURRENT_VERSION + 1)), \
    "migrations are numbered 1, 2, ..."


def tables(version: int = CURRENT_VERSION) -> sa.MetaData:
    """The tables of the schema at ``version``, as the migrations up to it define them."""
    meta = sa.MetaData()
    for migration in MIGRATIONS[:version]:
        for build in migration.tables:
            build(meta)
        for table, column in migration.columns:
            meta.tables[table].append_column(column())
    return meta


META = tables()
RUNS, CASES, ACKNOWLEDGEMENTS, SCHEMA_VERSION, REMOVED_RUNS, ACCURACY = (
    META.tables[name] for name in ("runs", "cases", "acknowledgements", "schema_version", "removed_runs", "accuracy"))


class StoreSchemaError(Exception):
    """The database holds no schema this code can use (newer, or not a history store)."""


def stored_version(conn: sa.Connection) -> int:
    """The schema version of the database (0: empty). StoreSchemaError for a foreign or newer schema."""
    names = set(sa.inspect(conn).get_table_names())
    if "schema_version" not in names:
        ours = names & set(META.tables)
        if ours:
            raise StoreSchemaError(f"it holds tables ({', '.join(sorted(ours))}) but no schema_version: "
                              f"not a history store this code made")
        return 0
    version = conn.execute(sa.select(sa.func.max(SCHEMA_VERSION.c.version))).scalar() or 0
    if version > CURRENT_VERSION:
        raise StoreSchemaError(f"its schema is version {version}, newer than this code's {CURRENT_VERSION}: "
                          f"use a newer checkout of the suite to read it")
    return version


def _lock(conn: sa.Connection) -> None:
    if conn.dialect.name == "postgresql":
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(2020120120)"))  # any fixed key of this store


def _add_column(conn: sa.Connection, table: str, column: sa.Column) -> None:
    """ALTER TABLE ... ADD COLUMN, the column's definition compiled for this backend (both take it)."""
    preparer = conn.dialect.identifier_preparer
    definition = sa.schema.CreateColumn(column).compile(dialect=conn.dialect)
    conn.execute(sa.text(f"ALTER TABLE {preparer.quote(table)} ADD COLUMN {definition}"))


def migrate(engine: sa.Engine, target: int = CURRENT_VERSION) -> int:
    """Bring the database to ``target`` (default: current); returns the version it was at."""
    with engine.connect() as conn:
        before = stored_version(conn)
        conn.rollback()
    if before >= target:
        return before
    with engine.connect().execution_options(history_write=True) as conn, conn.begin():
        _lock(conn)
        before = stored_version(conn)  # another process may have migrated meanwhile
        for migration in MIGRATIONS[before:target]:
            meta = tables(migration.version)
            for build in migration.tables:
                meta.tables[build(sa.MetaData()).name].create(conn)
            for table, column in migration.columns:
                _add_column(conn, table, column())
            if migration.upgrade is not None:
                migration.upgrade(conn)
            conn.execute(sa.insert(SCHEMA_VERSION).values(version=migration.version, summary=migration.summary))
    return before
