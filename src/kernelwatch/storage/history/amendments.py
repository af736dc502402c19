"""What people change in a store once its runs are recorded: acknowledgements of changes, and removals of runs.

`Amendments` is a part of HistoryStore (src/kernelwatch/storage/history/store.py), which
inherits it: the methods here use its engine, URL and error translation.

An acknowledgement accepts the change of a case at a run (`acknowledge`); every one is
kept. A removal takes away a run that should not be there (samples of a broken timer, a
run of another GPU imported by mistake), with its cases and the acknowledgements at it,
in one transaction, and logs it in ``removed_runs`` (schema version 5): the run's id and
content hash, what it was (its time, commit, GPU, host, cases), the reason, who removed
it and when. Nothing else ever deletes a run. A run removed can be imported again (its
document: `export` it first to keep it).
"""

from __future__ import annotations

import difflib
import functools
import getpass
from datetime import UTC, datetime

import sqlalchemy as sa

from . import queries
from .connection import HistoryError, deadline
from .rows import Removal
from .schema import ACCURACY, ACKNOWLEDGEMENTS, CASES, REMOVED_RUNS, RUNS


def answered(doing: str):
    """A method of the store that gives up where a PostgreSQL server stops answering (connection.deadline)."""
    def wrap(method):
        @functools.wraps(method)
        def call(self, *args, **kwargs):
            return deadline(self.url, doing, lambda: method(self, *args, **kwargs))
        return call
    return wrap


def _login_name() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name (a container with an unnamed uid)
        return "unknown"


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


class Amendments:
    """The acknowledgements and removals of a HistoryStore (the module docstring)."""

    @answered("write to")
    def acknowledge(self, case: str, run_id: int, *, reason: str, who: str | None = None) -> None:
        """Accept the change of ``case`` that appears at run ``run_id`` (the first run after a step, or a run
        where the case failed): from that run on, its reference is the new level.

        ``reason`` is required (non-blank); ``who`` defaults to the login name.  A
        second acknowledgement of the same case and run replaces the reason read back
        (all are kept).  Raises HistoryError for a run that is not stored, a case
        that run does not hold (each naming what is there), or a blank reason.
        """
        if not isinstance(reason, str) or not reason.strip():
            raise HistoryError("an acknowledgement needs a reason: say why the change is accepted")
        who = (who or "").strip() or _login_name()
        with self._errors("write to"), self.engine.connect().execution_options(history_write=True) as conn:
            with conn.begin():
                if conn.execute(sa.select(RUNS.c.id).where(RUNS.c.id == run_id)).first() is None:
                    raise HistoryError(f"there is no run {run_id} in the history store {self.safe_url}; "
                                       f"{queries.runs_there(conn)}")
                held = sa.select(CASES.c.id).where(CASES.c.run_id == run_id, CASES.c.node_id == case)
                checked = sa.select(ACCURACY.c.id).where(ACCURACY.c.run_id == run_id, ACCURACY.c.node_id == case)
                if conn.execute(held).first() is None and conn.execute(checked).first() is None:
                    names = conn.execute(sa.select(CASES.c.node_id).where(CASES.c.run_id == run_id)
                                         .order_by(CASES.c.position)).scalars().all()
                    near = difflib.get_close_matches(case, names, n=3, cutoff=0.6)
                    raise HistoryError(f"run {run_id} holds no case {case!r}; it holds {len(names)} cases"
                                       + (f", the nearest: {', '.join(near)}" if near else
                                          f", e.g. {names[0]}" if names else ""))
                conn.execute(sa.insert(ACKNOWLEDGEMENTS).values(
                    node_id=case, run_id=run_id, reason=reason.strip(), who=who,
                    acknowledged_at=_now()))
        self._wrote = True

    @answered("read")
    def acknowledgements(self) -> dict[tuple[str, int], str]:
        """Every acknowledged change: {(case, run id): reason}, the newest reason where one was given twice."""
        query = (sa.select(ACKNOWLEDGEMENTS.c.node_id, ACKNOWLEDGEMENTS.c.run_id, ACKNOWLEDGEMENTS.c.reason)
                 .order_by(ACKNOWLEDGEMENTS.c.acknowledged_at, ACKNOWLEDGEMENTS.c.id))
        with self._errors("read"), self.engine.connect() as conn:
            return {(row.node_id, row.run_id): row.reason for row in conn.execute(query)}

    @answered("write to")
    def remove_run(self, run_id: int, *, reason: str, who: str | None = None) -> Removal:
        """Remove run ``run_id``, its cases and the acknowledgements at it, in one transaction, and log the
        removal with ``reason`` (required, non-blank) and ``who`` (default: the login name). Raises
        HistoryError for a run that is not stored (naming the runs there) or a blank reason."""
        if not isinstance(reason, str) or not reason.strip():
            raise HistoryError("a removal needs a reason: say why the run should not be there")
        who = (who or "").strip() or _login_name()
        columns = [RUNS.c[name] for name in ("content_hash", "started_at", "commit", "branch", "profile", "gpu_model",
                                             "gpu_uuids", "host", "outcome", "label", "source", "case_count")]
        with self._errors("write to"), self.engine.connect().execution_options(history_write=True) as conn:
            with conn.begin():
                row = conn.execute(sa.select(*columns).where(RUNS.c.id == run_id)).mappings().first()
                if row is None:
                    raise HistoryError(f"there is no run {run_id} in the history store {self.safe_url}; "
                                       f"{queries.runs_there(conn)}")
                acknowledged = conn.execute(sa.select(sa.func.count()).select_from(ACKNOWLEDGEMENTS)
                                            .where(ACKNOWLEDGEMENTS.c.run_id == run_id)).scalar()
                run = {**{k: v for k, v in row.items() if k != "content_hash"},
                       "started_at": row["started_at"].isoformat(sep=" ", timespec="seconds"),
                       "acknowledgements": acknowledged}
                removal_id = conn.execute(sa.insert(REMOVED_RUNS).values(
                    run_id=run_id, content_hash=row["content_hash"], reason=reason.strip(), who=who,
                    removed_at=_now(), run=run)).inserted_primary_key[0]
                for table in (ACKNOWLEDGEMENTS, CASES, ACCURACY):
                    conn.execute(sa.delete(table).where(table.c.run_id == run_id))
                conn.execute(sa.delete(RUNS).where(RUNS.c.id == run_id))
        self._wrote = True
        return self.removals(removal_id=removal_id)[0]

    @answered("read")
    def removals(self, *, removal_id: int | None = None) -> list[Removal]:
        """The logged removals of runs, newest first (or the one of ``removal_id``)."""
        query = sa.select(REMOVED_RUNS).order_by(REMOVED_RUNS.c.removed_at.desc(), REMOVED_RUNS.c.id.desc())
        if removal_id is not None:
            query = query.where(REMOVED_RUNS.c.id == removal_id)
        with self._errors("read"), self.engine.connect() as conn:
            return [Removal(id=row.id, run_id=row.run_id, content_hash=row.content_hash, reason=row.reason,
                            who=row.who, removed_at=row.removed_at.replace(tzinfo=UTC), run=row.run)
                    for row in conn.execute(query)]
