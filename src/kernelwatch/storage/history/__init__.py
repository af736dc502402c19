"""The history store (issue 20): every run, per physical GPU, in one database.

SQLite by default (one file, nothing to set up: src/kernelwatch/storage/history/connection.py
says where), PostgreSQL through psycopg 3 for a fleet of runners sharing one
store.  A run goes in as the pytest-benchmark JSON document the suite saves
and comes back out as the same document; in between it is rows that the
nightly verdict (`HistoryStore.reference_history`) and the change-point and
dashboard work (`HistoryStore.case_series`) query in one statement each.

Why SQLAlchemy Core: one layer that speaks both backends, with the SQL
written once as expressions (a window function,
identity columns, JSON and binary columns) and compiled per dialect, URL
parsing with the password hidden in every rendering, connection pooling and
events to set SQLite up for concurrent writers (WAL, busy timeout, BEGIN
IMMEDIATE).  Not the ORM: the store moves rows in bulk (90 cases a run, 200
runs a query) and maps them to frozen dataclasses; an identity map and unit
of work would only cost time.  Not raw DB-API: the two drivers differ in
parameter style, types and errors, which Core hides.

Modules: schema (tables and ordered migrations), urls (what a URL may show,
its ports), connection (URLs, engines, errors), samples (the lossless sample
encoding), validation (every document checked once, before either backend
sees it), documents (the only import of the rest of the harness), store
(HistoryStore, open_store) and amendments (its acknowledgements and removals
of runs).
"""

from .connection import ENV_URL, HistoryError, default_path, resolve_url, safe_url
from .rows import Point, Removal
from .schema import CURRENT_VERSION
from .store import AlreadyRecorded, HistoryStore, RefusedRun, RunSummary, SeriesKey, open_store

__all__ = ["CURRENT_VERSION", "ENV_URL", "AlreadyRecorded", "HistoryError", "HistoryStore", "Point", "RefusedRun",
           "Removal", "RunSummary", "SeriesKey", "default_path", "open_store", "resolve_url", "safe_url"]
