"""maintainers/mutation/filter.py: the mutants inside postponed annotations skipped, every other mutant left to run."""

from __future__ import annotations

import sqlite3

import pytest

from maintainers.mutation import filter as mutation_filter
from tests.support.cosmic_ray_sessions import cosmic_ray_session

POSTPONED = '''"""doc"""

from __future__ import annotations

LIMIT: int | None = 3


def f(a: str | None, *rest: int | float, b: dict[str, int] | None = None, **kw: bytes | str) -> int | None:
    flags = 1 | 2
    return flags | a
'''


def spans_at(source: str, line: int, text: str) -> tuple[int, int]:
    """The (line, column) of `text` on `line` of `source`, as cosmic-ray gives a mutant's start."""
    return line, source.splitlines()[line - 1].index(text)


@pytest.mark.parametrize("line, text", [(5, "int | None"), (8, "str | None"), (8, "int | float"), (8, "dict[str"),
                                        (8, "bytes | str"), (8, "int | None:")])
def test_every_kind_of_annotation_is_found(line, text):
    """Module level, an argument, *args, a keyword with a default, **kwargs and the return (its "int | None:")."""
    assert mutation_filter.in_annotation(mutation_filter.annotation_spans(POSTPONED), spans_at(POSTPONED, line, text))


@pytest.mark.parametrize("line, text", [(5, "3"), (9, "1 | 2"), (10, "flags | a"), (8, "None, **"), (8, "def f")])
def test_code_outside_annotations_is_not_skipped(line, text):
    """A default value, a real `|` between ints and the body run: their mutants can be killed."""
    assert not mutation_filter.in_annotation(mutation_filter.annotation_spans(POSTPONED), spans_at(POSTPONED, line, text))


def test_a_module_whose_annotations_run_keeps_every_mutant():
    """Without the future import an annotation is evaluated at definition time: its mutant is a real change."""
    evaluated = POSTPONED.replace("from __future__ import annotations\n", "")
    assert mutation_filter.annotation_spans(evaluated) == []


def test_the_end_of_an_annotation_is_outside_it():
    source = "from __future__ import annotations\nx: int = 1\n"
    spans = mutation_filter.annotation_spans(source)
    assert mutation_filter.in_annotation(spans, (2, 3)) and not mutation_filter.in_annotation(spans, (2, 6))


def test_a_session_gets_a_skipped_result_for_each_annotation_mutant_and_export_leaves_them_out(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text(POSTPONED)
    specs = [("in-return", "pkg/mod.py", *spans_at(POSTPONED, 8, "int | None:")),
             ("in-argument", "pkg/mod.py", *spans_at(POSTPONED, 8, "str | None")),
             ("real-or", "pkg/mod.py", *spans_at(POSTPONED, 9, "1 | 2")),
             ("body", "pkg/mod.py", *spans_at(POSTPONED, 10, "flags | a")),
             ("already-run", "pkg/mod.py", *spans_at(POSTPONED, 5, "int | None"))]
    session = cosmic_ray_session(tmp_path / "session.sqlite", [(job, module, "core/ReplaceBinaryOperator_BitOr_Sub", *at)
                                                               for job, module, *at in specs],
                                 results=[("already-run", "NORMAL", "KILLED", "diff")])
    assert mutation_filter.skip_annotations(session, tmp_path) == (2, 2)

    db = sqlite3.connect(session)
    results = dict(db.execute("select job_id, worker_outcome from work_results"))
    assert results == {"already-run": "NORMAL", "in-argument": "SKIPPED", "in-return": "SKIPPED"}
    assert db.execute("select output, test_outcome, diff from work_results where job_id = 'in-return'").fetchone() \
        == (None, None, None)
    db.close()
    # the mutants left pending, as `maintainers.mutation.replay export --outcome pending` selects them: the two that can be killed
    pending = sqlite3.connect(session).execute(
        "select m.job_id from mutation_specs m left join work_results r on r.job_id = m.job_id where r.job_id is null")
    assert {job for (job,) in pending} == {"real-or", "body"}
    assert mutation_filter.skip_annotations(session, tmp_path) == (0, 2)  # run again: nothing more to skip


def test_the_command_says_how_many_it_skipped_and_refuses_a_missing_session(tmp_path, capsys):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text(POSTPONED)
    session = cosmic_ray_session(tmp_path / "session.sqlite",
                                 [("a", "pkg/mod.py", "core/ReplaceBinaryOperator_BitOr_Sub", *spans_at(POSTPONED, 8, "str | None"))])
    assert mutation_filter.main([str(session), "--root", str(tmp_path)]) == 0
    assert capsys.readouterr().out == "1 mutants inside annotations marked skipped; 0 pending\n"
    with pytest.raises(SystemExit) as exit_info:
        mutation_filter.main([str(tmp_path / "missing.sqlite")])
    assert exit_info.value.code == 2
    assert "no such session file" in capsys.readouterr().err


def test_a_file_that_is_no_session_and_a_root_without_its_modules_are_usage_errors(tmp_path, capsys):
    text = tmp_path / "notes.sqlite"
    text.write_text("not a database")
    empty = tmp_path / "empty.sqlite"
    sqlite3.connect(empty).close()
    session = cosmic_ray_session(tmp_path / "session.sqlite", [("a", "pkg/mod.py", "core/NumberReplacer", 5, 0)])
    for argv, words in (([str(text)], "is not a cosmic-ray session (file is not a database)"),
                        ([str(empty)], "is not a cosmic-ray session (no such table: mutation_specs)"),
                        ([str(session), "--root", str(tmp_path / "elsewhere")], "a module of the session is not "
                                                                                  "under --root")):
        with pytest.raises(SystemExit) as exit_info:
            mutation_filter.main(argv)
        err = capsys.readouterr().err
        assert exit_info.value.code == 2 and words in err and "Traceback" not in err

