"""Feed the history store a corpus of bad documents on both backends, and check that none of them breaks it.

    python -m maintainers.checks.bad_documents [--postgres URL] [--sqlite-only] [--list]

Each document of CORPUS (issue 45's, and more: overflowing samples, NaN and infinities, integers beyond
their columns, NUL and lone surrogates, nesting deeper than the parsers go, wrong types in every column,
broken JSON) is imported with `import` into a SQLite store and, where a PostgreSQL server is given
(--postgres URL, else $KERNELWATCH_TEST_POSTGRES), into a fresh database on it; a few go in through
HistoryStore.record_run, as the plugin records a run. After each one, `changes`, `site` and `runs` must
still work on that store. Every store command is also run on URLs that carry a secret in each form libpq
takes (at a closed port). Exit 1 unless: no traceback, no store broken for a later command, the same
verdict (accepted or refused) on both backends and the one the corpus expects, every refusal one line,
and no secret in any output.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import socket
import sys
import tempfile
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from maintainers.environment import needs, summary

ACCEPTED, REFUSED = "accepted", "refused"
SECRET = "kw-bad-documents-s3cret"  # the sslpassword of the PostgreSQL store, and of every URL form tried
POSTGRES_ENV = "KERNELWATCH_TEST_POSTGRES"
NO_SERVER = 3  # exit status where --postgres names a server that cannot be used (2 is a usage error)


@dataclass(frozen=True)
class Bad:
    """One document of the corpus: `make(index)` gives the run (a dict), or the file's text or bytes as they are."""

    name: str
    expected: str
    make: Callable[[int], object]
    through_api: bool = False  # fed to HistoryStore.record_run as the plugin does, not through a file
    profile: object = "nightly"  # (through_api) the profile it is recorded with


def _run(change: Callable[[dict], object], *, version_1: bool = False) -> Callable[[int], dict]:
    def make(index: int) -> dict:
        from maintainers.support.synthetic_history import make_document

        doc = make_document(index, cases=3, samples=9)
        if version_1:
            doc["machine_info"].pop("kernel_suite_schema")
        change(doc)
        return doc
    return make


def _text(change: Callable[[str], str]) -> Callable[[int], str]:
    def make(index: int) -> str:
        return change(json.dumps(_run(lambda doc: None)(index)))
    return make


def _info(**values) -> Callable[[dict], None]:
    return lambda doc: doc["benchmarks"][1]["extra_info"].update(values)


def _sample(value) -> Callable[[dict], None]:
    return lambda doc: doc["benchmarks"][1]["stats"]["data"].__setitem__(0, value)


def _nested(depth: int):
    value: object = 1
    for _ in range(depth):
        value = {"a": value}
    return value


def _first_sample(literal: str) -> Callable[[str], str]:
    """The text of a run whose first sample of its first case is `literal`, as a JSON writer could write it."""
    def change(text: str) -> str:
        head, _, tail = text.partition('"data": [')
        return head + '"data": [' + literal + ", " + tail
    return change


CORPUS = (
    Bad("samples of 1e308 s (an infinite median)", REFUSED, _run(lambda d: d["benchmarks"][1]["stats"].update(
        data=[1e308] * 9))),
    Bad("a NaN median of a version-1 record", REFUSED, _run(_info(median_s=float("nan")), version_1=True)),
    Bad("an integer above 2^63 in a record", REFUSED, _run(_info(launches=2**64))),
    Bad("a clock above 2^63", REFUSED, _run(_info(sm_clock_mhz_max=2**64))),
    Bad("a clock above 2^31", REFUSED, _run(_info(sm_clock_mhz_min=2**31))),
    Bad("a clock that is text", REFUSED, _run(_info(sm_clock_mhz_min="fast"))),
    Bad("a clock that is true", REFUSED, _run(_info(sm_clock_mhz_min=True))),
    Bad("a clock of 1980.5 MHz", REFUSED, _run(_info(sm_clock_mhz_min=1980.5))),
    Bad("a NUL in a case's name", REFUSED, _run(lambda d: d["benchmarks"][1].update(fullname="suites/x.py::t[\x00]"))),
    Bad("a NUL in a record's text", REFUSED, _run(_info(kernel="a\x00b"))),
    Bad("a NUL in a key", REFUSED, _run(_info(**{"a\x00b": 1}))),
    Bad("a lone surrogate in a case's name", REFUSED, _text(lambda t: t.replace("case001]", "case001\\ud800]", 1))),
    Bad("a record nested 40 levels", REFUSED, _run(_info(deep=_nested(40)))),
    Bad("JSON nested 100000 levels", REFUSED, _text(lambda t: t[:-1] + ', "deep": ' + "[" * 100_000 + "]" * 100_000
                                                    + "}")),
    Bad("an integer of 5000 digits", REFUSED, _text(_first_sample("1" + "0" * 5000))),
    Bad("a sample of 10^400 (an integer beyond any float)", REFUSED, _text(_first_sample("1" + "0" * 400))),
    Bad("a sample of 1e999 (read as infinity)", REFUSED, _text(_first_sample("1e999"))),
    Bad("a sample of NaN", REFUSED, _text(_first_sample("NaN"))),
    Bad("a sample of -Infinity", REFUSED, _text(_first_sample("-Infinity"))),
    Bad("a negative sample", REFUSED, _run(_sample(-1e-5))),
    Bad("a sample of 0", REFUSED, _run(_sample(0.0))),
    Bad("a subnormal sample", REFUSED, _run(_sample(5e-324))),
    Bad("a sample of a year", REFUSED, _run(_sample(3.2e7))),
    Bad("a sample that is text", REFUSED, _run(_sample("1e-5"))),
    Bad("a case without samples", REFUSED, _run(lambda d: d["benchmarks"][1]["stats"].update(data=[]))),
    Bad("a case without stats", REFUSED, _run(lambda d: d["benchmarks"][1].pop("stats"))),
    Bad("no benchmarks", REFUSED, _run(lambda d: d.update(benchmarks=[]))),
    Bad("benchmarks that are an object", REFUSED, _run(lambda d: d.update(benchmarks={"a": 1}))),
    Bad("a benchmark that is a list", REFUSED, _run(lambda d: d["benchmarks"].append([1, 2]))),
    Bad("two cases of one name", REFUSED, _run(lambda d: d["benchmarks"][1].update(
        fullname=d["benchmarks"][0]["fullname"]))),
    Bad("a case with an empty name", REFUSED, _run(lambda d: d["benchmarks"][1].update(fullname=""))),
    Bad("a case name of 3000 bytes", REFUSED, _run(lambda d: d["benchmarks"][1].update(fullname="t[" + "é" * 1500 + "]"))),
    Bad("a version-1 record that is a list", REFUSED, _run(lambda d: d["benchmarks"][1].update(extra_info=[["a", 1]]),
                                                           version_1=True)),
    Bad("a version-1 verdict that is a list", REFUSED, _run(_info(verdict=["slower"]), version_1=True)),
    Bad("a version-1 datasheet of 1e300 TFLOP/s", REFUSED, _run(_info(datasheet_tflops=1e300), version_1=True)),
    Bad("a dirty flag that is text", REFUSED, _run(lambda d: d["commit_info"].update(dirty="yes"))),
    Bad("a commit of 65 characters", REFUSED, _run(lambda d: d["commit_info"].update(id="c" * 65))),
    Bad("a commit that is a number", REFUSED, _run(lambda d: d["commit_info"].update(id=1234))),
    Bad("a GPU UUID of 3000 bytes", REFUSED, _run(_info(gpu_uuid="GPU-" + "f" * 3000))),
    Bad("a GPU name that is an object", REFUSED, _run(lambda d: d["machine_info"]["gpu"].update(name={"a": 1}))),
    Bad("machine_info that is a list", REFUSED, _run(lambda d: d.update(machine_info=[1]))),
    Bad("a schema version from the future", REFUSED, _run(lambda d: d["machine_info"].update(kernel_suite_schema=99))),
    Bad("a schema version that is text", REFUSED, _run(lambda d: d["machine_info"].update(kernel_suite_schema="2"))),
    Bad("a time that is no time", REFUSED, _run(lambda d: d.update(datetime="yesterday"))),
    Bad("a time its zone moves before year 1", REFUSED, _run(lambda d: d.update(datetime="0001-01-01T00:00:00+01:00"))),
    Bad("no time", REFUSED, _run(lambda d: d.pop("datetime"))),
    Bad("a failed case whose window's commits are no pairs", REFUSED, _run(_info(
        verdict="slower", window={"base": "a" * 40, "head": "b" * 40, "commits": [1, 2]}))),
    Bad("phases that are no times", REFUSED, _run(_info(phases={"copy": ["slow"]}))),
    Bad("an energy that is a list", REFUSED, _run(_info(energy=[1.0]))),
    Bad("a negative energy window", REFUSED, _run(_info(energy={"joules_per_launch": 1.0,
                                                                 "window_joules_per_launch": [1.0, -1.0]}))),
    Bad("energy windows without joules per launch", REFUSED, _run(_info(energy={"window_joules_per_launch": [1.0]}))),
    Bad("a spread that is text", REFUSED, _run(_info(rsd="high"))),
    Bad("pooled reference runs that are text", REFUSED, _run(_info(reference="history", reference_runs="3"))),
    Bad("a timer that is a number", REFUSED, _run(_info(timer=5))),
    Bad("throttle reasons that are text", REFUSED, _run(_info(throttle_reasons="hw_slowdown"))),
    Bad("an energy verdict that is a list", REFUSED, _run(_info(energy_verdict=[True]))),
    Bad("a JSON array", REFUSED, lambda index: "[]"),
    Bad("truncated JSON", REFUSED, _text(lambda t: t[: len(t) // 2])),
    Bad("an empty file", REFUSED, lambda index: ""),
    Bad("bytes that are no UTF-8", REFUSED, lambda index: b'{"benchmarks": "\xff\xfe"}'),
    Bad("a set in a record (record_run)", REFUSED, _run(_info(tags={"a"})), through_api=True),
    Bad("a key that is no text (record_run)", REFUSED, _run(lambda d: d["machine_info"].update({7: "x"})),
        through_api=True),
    Bad("a record nested 100000 levels (record_run)", REFUSED, _run(_info(deep=_nested(100_000))), through_api=True),
    Bad("a profile that is a number (record_run)", REFUSED, _run(lambda d: None), through_api=True, profile=5),
    # what both backends take: the check is that they take it alike, and that nothing after breaks
    Bad("a name of escape sequences and other scripts", ACCEPTED, _run(lambda d: d["benchmarks"][1].update(
        fullname="suites/x.py::t[\x1b[2J\x1b[31m红色 ñ 🚀]"))),
    Bad("the edges of each range", ACCEPTED, _run(lambda d: (
        d["benchmarks"][1]["stats"]["data"].__setitem__(0, 86_400.0), _info(
            sm_clock_mhz_max=2**31 - 1, launches=2**63 - 1, least=-(2**63), deep=_nested(27))(d)))),
    Bad("a time of year 1 in UTC", ACCEPTED, _run(lambda d: d.update(datetime="0001-01-01T00:00:00+00:00"))),
    Bad("a failed case with its window", ACCEPTED, _run(_info(
        verdict="slower", window={"base": "a" * 40, "head": "b" * 40, "commits": [["b" * 40, "slower tiles"]]}))),
)

# every store command, and the secrets a URL can carry in each form libpq takes (at a closed port: refused)
COMMANDS = (["import", "{file}"], ["runs"], ["export", "1"], ["changes"], ["acknowledge", "c", "1", "--reason", "x"],
            ["remove-run", "1", "--reason", "x"], ["site", "{site}"])
SECRET_URLS = {
    "a password in the authority": f"postgresql://suite:{SECRET}@127.0.0.1:{{port}}/h",
    "an @ in the authority's password": f"postgresql://suite:{SECRET}@x@127.0.0.1:{{port}}/h",
    "password=": f"postgresql://suite@127.0.0.1:{{port}}/h?password={SECRET}",
    "sslpassword=": f"postgresql://suite@127.0.0.1:{{port}}/h?sslmode=prefer&sslpassword={SECRET}",
    "oauth_client_secret=": f"postgresql://suite@127.0.0.1:{{port}}/h?oauth_client_secret={SECRET}",
    "scram_client_key=": f"postgresql://suite@127.0.0.1:{{port}}/h?scram_client_key={SECRET}",
    "passfile=": f"postgresql://suite@127.0.0.1:{{port}}/h?passfile=/{SECRET}",
    "a port that is none": f"postgresql://suite:{SECRET}@127.0.0.1:{{port}}x/h",
    "libpq's key=value form": f"host=127.0.0.1 port={{port}} sslpassword='{SECRET} x'",
}


@dataclass
class Said:
    """What one command did: its exit status, what it printed, and the traceback of anything it raised."""

    code: int
    out: str
    err: str
    traceback: str | None = None

    @property
    def text(self) -> str:
        return self.out + self.err + (self.traceback or "")

    @property
    def last_line(self) -> str:
        """The last line of its traceback, else of its errors, else of its output (what a report names)."""
        lines = (self.traceback or self.err or self.out).strip().splitlines()
        return lines[-1][:200] if lines else "(nothing printed)"


def say(argv: list[str]) -> Said:
    """`python -m kernelwatch.history ARGV` in this process, what it printed captured."""
    from kernelwatch.history.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code, trace = main(argv), None
        except SystemExit as exited:
            code, trace = exited.code if isinstance(exited.code, int) else 1, None
        except Exception:  # noqa: BLE001 (what this check counts)
            code, trace = -1, traceback.format_exc()
    return Said(code, out.getvalue(), err.getvalue(), trace)


@dataclass
class Findings:
    tracebacks: list[str] = field(default_factory=list)
    broken: list[str] = field(default_factory=list)
    differing: list[str] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    long_refusals: list[str] = field(default_factory=list)
    secrets: list[str] = field(default_factory=list)

    def heard(self, where: str, said: Said, secrets: tuple[str, ...]) -> None:
        if said.traceback or "Traceback (most recent call last)" in said.text:
            self.tracebacks.append(f"{where}: {said.last_line}")
        if any(secret in said.text for secret in secrets):
            self.secrets.append(where)


def _write(folder: Path, number: int, content) -> Path:
    path = folder / f"{number:04d}_bad.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


def feed(url: str, backend: str, scratch: Path, findings: Findings, secrets: tuple[str, ...]) -> dict[str, str]:
    """Every document of CORPUS into the store at `url` (seeded with good runs), the store's later commands run
    after each; the verdict per document."""
    from kernelwatch.storage.history import HistoryError, open_store
    from maintainers.support.synthetic_history import make_document

    folder = scratch / backend
    folder.mkdir()
    for index in range(6):
        _write(folder, index + 1, make_document(index, cases=3, samples=9))
    seeded = say(["import", str(folder), "--history", url])
    findings.heard(f"{backend}: the good runs", seeded, secrets)
    if seeded.code != 0:
        findings.broken.append(f"{backend}: the good runs were not imported: {seeded.last_line}")
    verdicts = {}
    for number, bad in enumerate(CORPUS, start=100):
        where = f"{backend}: {bad.name}"
        content = bad.make(number)
        if bad.through_api:
            said = Said(0, "", "")
            try:
                with open_store(url) as store:
                    store.record_run(content, outcome="passed", profile=bad.profile)
                said.out = "1 imported"
            except HistoryError as error:
                said.code, said.err = 1, f"error: {error}\n"
            except Exception:  # noqa: BLE001 (what this check counts)
                said.code, said.traceback = -1, traceback.format_exc()
        else:
            said = say(["import", str(_write(folder, number, content)), "--history", url])
        findings.heard(where, said, secrets)
        if said.code == 0 and "1 imported" in said.out:
            verdicts[bad.name] = ACCEPTED
        elif said.code == 1 and said.err.startswith("error: ") and not said.traceback:
            verdicts[bad.name] = REFUSED
            if said.err.count("\n") != 1:
                findings.long_refusals.append(f"{where}: {said.err.count(chr(10))} lines")
        else:
            verdicts[bad.name] = f"exit {said.code}"
        for command in (["changes"], ["site", str(scratch / f"site-{backend}")], ["runs"]):
            after = say([*command, "--history", url])
            findings.heard(f"{where}, then {command[0]}", after, secrets)
            if after.traceback or after.code not in ((0, 1) if command[0] == "changes" else (0,)) or after.err:
                findings.broken.append(f"{where}: `{command[0]}` then exit {after.code}: {after.last_line}")
    return verdicts


def try_secret_urls(scratch: Path, findings: Findings) -> int:
    """Every store command on every URL form holding SECRET, at a closed port: one line, no secret, no traceback."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    tried = 0
    for name, form in SECRET_URLS.items():
        for command in COMMANDS:
            argv = [word.format(file=scratch / "none.json", site=scratch / "site-none") for word in command]
            said = say([*argv, "--history", form.format(port=port)])
            where = f"`{command[0]}` on a URL of {name}"
            findings.heard(where, said, (SECRET,))
            if said.code != 1 or said.err.count("\n") != 1:
                findings.long_refusals.append(f"{where}: exit {said.code}, {said.err.count(chr(10))} lines")
            tried += 1
    return tried


@contextlib.contextmanager
def postgres_database(admin_url: str):
    """A fresh database on the server of `admin_url`, its URL carrying an sslpassword; dropped afterwards."""
    import sqlalchemy as sa
    from sqlalchemy.engine import make_url

    admin = make_url(admin_url)
    if admin.drivername in ("postgresql", "postgres"):
        admin = admin.set(drivername="postgresql+psycopg")
    name = f"bad_documents_{uuid.uuid4().hex[:12]}"
    engine = sa.create_engine(admin, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
        url = admin.set(database=name).update_query_dict({"sslpassword": SECRET})
        yield url.render_as_string(hide_password=False), tuple(s for s in (SECRET, admin.password) if s)
    finally:
        with contextlib.suppress(sa.exc.SQLAlchemyError), engine.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        engine.dispose()


def report(findings: Findings, verdicts: dict[str, dict[str, str]], tried_urls: int) -> int:
    """The table of verdicts and the counts; 1 where any check failed."""
    backends = list(verdicts)
    for bad in CORPUS:
        said = [verdicts[backend].get(bad.name, "-") for backend in backends]
        if len(set(said)) > 1:
            findings.differing.append(f"{bad.name}: " + ", ".join(f"{b} {v}" for b, v in zip(backends, said,
                                                                                              strict=True)))
        findings.unexpected += [f"{backend}: {bad.name}: {verdict}, expected {bad.expected}"
                                for backend, verdict in zip(backends, said, strict=True) if verdict != bad.expected]
        print(f"{' / '.join(said):<20} {bad.name}")
    counts = {"tracebacks": findings.tracebacks, "stores broken for a later command": findings.broken,
              "verdicts that differ between the backends": findings.differing,
              "verdicts other than the corpus expects": findings.unexpected,
              "refusals not in one line": findings.long_refusals, "outputs holding a secret": findings.secrets}
    print(f"\n{len(CORPUS)} documents on {' and '.join(backends)}; every store command on {len(SECRET_URLS)} URLs "
          f"holding a secret ({tried_urls} runs)")
    for what, found in counts.items():
        print(f"{what}: {len(found)}")
        for line in found[:20]:
            print(f"  {line}")
    return 1 if any(counts.values()) else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m maintainers.checks.bad_documents", description=summary(__doc__))
    parser.add_argument("--postgres", metavar="URL", help=f"a PostgreSQL server to create a fresh database on "
                                                          f"(default ${POSTGRES_ENV}; neither: SQLite only)")
    parser.add_argument("--sqlite-only", action="store_true", help="leave PostgreSQL out even where it is given")
    parser.add_argument("--list", action="store_true", help="list the corpus and exit")
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(f"{bad.expected:<8} {bad.name}" for bad in CORPUS))
        return 0
    needs("maintainers.checks.bad_documents", "sqlalchemy")
    admin = None if args.sqlite_only else (args.postgres or os.environ.get(POSTGRES_ENV))
    findings, verdicts = Findings(), {}
    with tempfile.TemporaryDirectory() as scratch, contextlib.ExitStack() as stack:
        scratch = Path(scratch)
        verdicts["sqlite"] = feed(f"sqlite:///{scratch / 'history.sqlite'}", "sqlite", scratch, findings, (SECRET,))
        if admin:
            try:
                url, secrets = stack.enter_context(postgres_database(admin))
            except Exception as error:  # noqa: BLE001 (one sentence, no traceback)
                from kernelwatch.storage.history.urls import scrub

                print(f"cannot create a database on the PostgreSQL server {scrub(admin)}: "
                      f"{scrub(str(error).splitlines()[0])}", file=sys.stderr)
                return NO_SERVER
            verdicts["postgresql"] = feed(url, "postgresql", scratch, findings, secrets)
        tried = try_secret_urls(scratch, findings)
    return report(findings, verdicts, tried)


if __name__ == "__main__":
    sys.exit(main())
