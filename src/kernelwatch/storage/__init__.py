"""Stored runs: the baselines on disk and the history store of every run.

Owns finding, loading, checking, numbering and saving baseline files
(runs.py), the schema version of stored runs and the migration of old files
(schema.py), the history store in SQLite or PostgreSQL (history/), and the stored runs a session judges
against (stored_runs.py). May
import kernelwatch.units, kernelwatch.timing (GPU slug, timer names) and
kernelwatch.verdict (the record, the sample check).
"""
