"""A cosmic-ray session file made by hand: the two tables of cosmic-ray 8.7 that the mutation scripts read."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def cosmic_ray_session(path: Path, specs, results=()) -> Path:
    """`specs`: (job id, module, operator, start line, start column) of each mutant; `results`: (job id,
    worker outcome, test outcome, diff) of those already run (cosmic-ray's rows; the rest are pending)."""
    db = sqlite3.connect(path)
    db.execute("create table mutation_specs (module_path, operator_name, operator_args, occurrence, start_pos_row,"
               " start_pos_col, end_pos_row, end_pos_col, definition_name, job_id primary key)")
    db.execute("create table work_results (worker_outcome, output, test_outcome, diff, job_id primary key)")
    for job, module, operator, row, column in specs:
        db.execute("insert into mutation_specs values (?, ?, '\"{}\"', 0, ?, ?, ?, ?, 'f', ?)",
                   (module, operator, row, column, row, column + 1, job))
    for job, worker_outcome, test_outcome, diff in results:
        db.execute("insert into work_results values (?, '', ?, ?, ?)", (worker_outcome, test_outcome, diff, job))
    db.commit()
    db.close()
    return path
