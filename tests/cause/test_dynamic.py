"""kernelwatch.cause.dynamic pinned exactly: ncu's CSV read, ncu's runs, each cause's threshold on both sides, its score and words.

tests/cause/test_dynamic_card.py shows the card's dynamic half at work; here every boundary is tried at, just under and
just over it, and whole outputs (the causes of a profile pair, the ranked stalls) are compared with their reviewed
snapshots (tests/cause/__snapshots__/test_dynamic.ambr; `--snapshot-update` rewrites it). The profiles' numbers are
chosen so that each threshold is met exactly in floating point (1.3 x 4.0 == 5.2e5 / 1e5, and so on).
"""

from __future__ import annotations

import math
import subprocess
import time

import pytest

from kernelwatch.cause import dynamic
from kernelwatch.cause.dynamic import METRICS, STALL_METRIC, STALLS, NcuProfile, dynamic_causes, parse_csv, stall_shares
from tests.support.sample_sets import fresh

HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
          '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"')

LSU = "sm__inst_executed_pipe_lsu.sum"
LD_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
ST_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
THREADS = "smsp__thread_inst_executed_per_inst_executed.ratio"
ACTIVE = "sm__warps_active.avg.pct_of_peak_sustained_active"
LOCAL_LD = "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum"
LOCAL_ST = "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum"
DRAM = "dram__bytes.sum"
L2 = "lts__t_bytes.sum"
ISSUED = "smsp__inst_issued.sum"
DURATION = "gpu__time_duration.sum"


def stall(reason: str) -> str:
    return STALL_METRIC.format(reason)


def row(name: str, unit: str, value: str, kernel: str = "matmul_tiled") -> str:
    return (f'"0","4242","python3","127.0.0.1","{kernel}","1","7","(32, 32, 1)","(64, 64, 1)","0","9.0",'
            f'"Command line profiler metrics","{name}","{unit}","{value}"')


def quiet(**metrics: float) -> NcuProfile:
    """A profile in which nothing is a cause against itself: 1e5 LSU instructions without bank conflicts, 4 sectors a
    global load request, 32 threads an instruction, 80% of the warps active, no local memory, 1e8 DRAM and 4e8 L2
    bytes, stalls of 0.1 barrier and 1.9 long scoreboard (a barrier share of 5%)."""
    base = {ISSUED: 1e6, LSU: 1e5, SECTORS: 4e5, REQUESTS: 1e5, THREADS: 32.0, ACTIVE: 80.0, DRAM: 1e8, L2: 4e8,
            stall("barrier"): 0.1, stall("long_scoreboard"): 1.9}
    return NcuProfile("k", {**base, **metrics})


def causes(base: dict, head: dict) -> list[tuple[str, float, str]]:
    return [(c.key, c.score, c.words) for c in dynamic_causes(quiet(**base), quiet(**head))]


def keys(base: dict, head: dict) -> list[str]:
    return [key for key, _, _ in causes(base, head)]


# ---- ncu's CSV -----------------------------------------------------------------------------------------------------

def test_a_csv_of_every_unit_and_every_kind_of_row_reads_as_its_snapshot(snapshot):
    """Each unit a power of ten of seconds or bytes, thousands separators dropped, a row without a name or a number
    passed over, lines not quoted (ncu's own) ignored, an unknown unit leaving the number as it is."""
    units = ["nsecond", "usecond", "msecond", "second", "ns", "us", "ms", "s", "byte", "Kbyte", "Mbyte", "Gbyte",
             "Tbyte", "B", "KB", "MB", "GB", "TB", "%", "", "inst", "cycle/nsecond"]
    lines = ["==PROF== Connected to process 4242 (python3)", HEADER,
             *(row(f"m.{unit or 'none'}", unit, "1,234.5") for unit in units),
             row("", "byte", "3"), row("no.number", "byte", "n/a"), row("empty", "byte", ""),
             "==PROF== Disconnected from process 4242", ' "leading space" is not a row']
    found = parse_csv("\n".join(lines))
    assert found == {f"m.{unit or 'none'}": 1234.5 * dynamic._UNITS.get(unit, 1.0) for unit in units}
    assert found == snapshot


@pytest.mark.parametrize("unit, factor", [("nsecond", 1e-9), ("usecond", 1e-6), ("msecond", 1e-3), ("second", 1.0),
                                          ("ns", 1e-9), ("us", 1e-6), ("ms", 1e-3), ("s", 1.0), ("byte", 1.0),
                                          ("Kbyte", 1e3), ("Mbyte", 1e6), ("Gbyte", 1e9), ("Tbyte", 1e12), ("B", 1.0),
                                          ("KB", 1e3), ("MB", 1e6), ("GB", 1e9), ("TB", 1e12), ("%", 1.0),
                                          ("cycle", 1.0)])
def test_each_unit_scales_three_and_a_half_exactly(unit, factor):
    assert parse_csv("\n".join([HEADER, row("x", unit, "3.5")])) == {"x": 3.5 * factor}


def test_a_metric_of_several_kernels_is_the_last_kernels():
    text = "\n".join([HEADER, row(DRAM, "byte", "1", "first"), row(L2, "byte", "5", "first"),
                      row(DRAM, "Kbyte", "2", "second")])
    assert parse_csv(text) == {DRAM: 2e3, L2: 5.0}


def test_a_csv_without_a_unit_column_reads_its_values_as_they_are_and_one_without_values_reads_nothing():
    assert parse_csv('"Metric Name","Metric Value"\n"dram__bytes.sum","1,024"') == {DRAM: 1024.0}
    assert parse_csv('"Metric Name","Metric Unit"\n"dram__bytes.sum","byte"') == {}
    assert parse_csv("") == {} and parse_csv("\n\n") == {}


def test_rows_after_unreadable_ones_are_still_read():
    text = "\n".join([HEADER, row("", "", "1"), row("a", "byte", "x"), row("b", "byte", "-2"), row("", "", ""),
                      row("c", "Kbyte", "1e-3"), row("d", "", "nan?"), row("e", "", "7")])
    assert parse_csv(text) == {"b": -2.0, "c": 1.0, "e": 7.0}


def test_a_row_cut_short_is_skipped_and_the_rows_after_it_read():
    """A quoted row with fewer fields than the header (ncu's output cut off) once raised AttributeError on the
    None that csv gives for the missing value."""
    no_value = row("dram__bytes.sum", "byte", "1").rsplit(",", 1)[0]  # its name and unit, no value
    no_unit = row("dram__bytes.sum", "byte", "1").rsplit(",", 2)[0]  # its name alone
    assert parse_csv("\n".join([HEADER, no_value, no_unit, row("e", "", "7")])) == {"e": 7.0}


# ---- ncu's runs ----------------------------------------------------------------------------------------------------

class FakeNcu:
    """subprocess.run for ncu: refuses `refuse` (one metric a run, each printed as `refuse_as` formats it, on stdout
    or stderr), then prints `stdout`/`stderr` and exits `code`; each run advances time.perf_counter by `seconds`."""

    def __init__(self, monkeypatch, stdout: str = "", *, stderr: str = "", code: int = 0, refuse=(),
                 refuse_as: str = "==ERROR== Failed to find metric {}\n", on_stderr: bool = True, seconds: float = 0.0):
        self.stdout, self.stderr, self.code, self.refuse = stdout, stderr, code, list(refuse)
        self.refuse_as, self.on_stderr, self.seconds, self.now, self.calls = refuse_as, on_stderr, seconds, 50.0, []
        monkeypatch.setattr(dynamic.subprocess, "run", self.run)
        monkeypatch.setattr(time, "perf_counter", lambda: self.now)

    def run(self, args, **kwargs):
        self.calls.append((list(args), kwargs))
        self.now += self.seconds
        if self.refuse:
            said = self.refuse_as.format(self.refuse.pop(0))
            out, err = ("", said) if self.on_stderr else (said, "")
            return subprocess.CompletedProcess(args, 1, out, err)
        return subprocess.CompletedProcess(args, self.code, self.stdout, self.stderr)

    def metrics_asked(self) -> list[list[str]]:
        return [args[args.index("--metrics") + 1].split(",") for args, _ in self.calls]


ANSWER = "\n".join([HEADER, row(DRAM, "Kbyte", "2"), row(DURATION, "us", "3")])


def test_ncu_is_run_with_these_arguments_and_options_and_its_answer_is_the_profile(monkeypatch):
    fake = FakeNcu(monkeypatch, ANSWER, seconds=1.25)
    found = dynamic.profile(["python", "-m", "x", "--n=3"], "matmul_(a|b)", metrics=(DRAM, DURATION), ncu="/opt/ncu")
    assert fake.calls == [(["/opt/ncu", "--csv", "--clock-control", "none", "--kernel-name", "regex:matmul_(a|b)",
                            "--launch-skip", "1", "--launch-count", "1", "--metrics", f"{DRAM},{DURATION}", "python",
                            "-m", "x", "--n=3"], {"capture_output": True, "text": True, "timeout": 300})]
    assert found == NcuProfile("matmul_(a|b)", {DRAM: 2e3, DURATION: 3e-6}, (), 1.25, ())


def test_ncu_is_asked_for_every_metric_of_the_card_by_default(monkeypatch):
    fake = FakeNcu(monkeypatch, ANSWER)
    dynamic.profile(["true"], "k", ncu="ncu", timeout=7.5)
    assert fake.metrics_asked() == [list(METRICS)] and fake.calls[0][1]["timeout"] == 7.5
    assert len(METRICS) == 19 + len(STALLS) == 37 and len(set(METRICS)) == 37
    assert [m for m in METRICS if "stalled" in m] == [stall(reason) for reason in STALLS]


def test_the_ncu_on_the_path_is_run_unless_one_is_named(monkeypatch):
    looked_up = []
    monkeypatch.setattr(dynamic.shutil, "which", lambda name: looked_up.append(name) or "/usr/local/cuda/bin/ncu")
    fake = FakeNcu(monkeypatch, ANSWER)
    dynamic.profile(["true"], "k")
    dynamic.profile(["true"], "k", ncu="/named/ncu")
    assert [args[0] for args, _ in fake.calls] == ["/usr/local/cuda/bin/ncu", "/named/ncu"]
    assert looked_up == ["ncu"]


def test_without_ncu_on_the_path_the_profiler_is_missing_and_says_why(monkeypatch):
    monkeypatch.setattr(dynamic.shutil, "which", lambda name: None)
    fake = FakeNcu(monkeypatch, ANSWER)
    with pytest.raises(dynamic.ProfilerMissing) as missing:
        dynamic.profile(["true"], "k")
    assert str(missing.value) == "no ncu on PATH (Nsight Compute): the dynamic half of the card needs it"
    assert fake.calls == [] and isinstance(missing.value, RuntimeError)


@pytest.mark.parametrize("on_stderr", [True, False], ids=["stderr", "stdout"])
def test_two_refused_metrics_are_dropped_one_run_each_and_the_third_run_answers(monkeypatch, on_stderr):
    fake = FakeNcu(monkeypatch, ANSWER, refuse=("b.sum", "d.sum"), on_stderr=on_stderr, seconds=2.0)
    found = dynamic.profile(["true"], "k", metrics=("a.sum", "b.sum", "c.sum", "d.sum"), ncu="ncu")
    assert fake.metrics_asked() == [["a.sum", "b.sum", "c.sum", "d.sum"], ["a.sum", "c.sum", "d.sum"],
                                    ["a.sum", "c.sum"]]
    assert found == NcuProfile("k", {DRAM: 2e3, DURATION: 3e-6}, ("b.sum", "d.sum"), 6.0)


def test_three_refusals_are_the_end_even_where_a_fourth_run_would_answer(monkeypatch):
    fake = FakeNcu(monkeypatch, ANSWER, refuse=("a.sum", "b.sum", "c.sum"))
    with pytest.raises(dynamic.ProfilerMissing) as missing:
        dynamic.profile(["true"], "k", metrics=("a.sum", "b.sum", "c.sum", "d.sum"), ncu="ncu")
    assert str(missing.value) == "ncu kept refusing metrics: a.sum, b.sum, c.sum"
    assert len(fake.calls) == 3


@pytest.mark.parametrize("said, name", [('"x.sum"', "x.sum"), ("x.sum.", "x.sum"), ("'x.sum',", "x.sum"),
                                        ("x.sum", "x.sum"), ('"x.sum".', "x.sum")])
def test_a_refused_metrics_name_is_read_without_its_quotes_or_punctuation(monkeypatch, said, name):
    fake = FakeNcu(monkeypatch, ANSWER, refuse=(said,))
    found = dynamic.profile(["true"], "k", metrics=("x.sum", "y.sum"), ncu="ncu")
    assert found.dropped == (name,) and fake.metrics_asked()[1] == ["y.sum"]


def test_every_metric_refused_in_one_run_is_dropped_at_once(monkeypatch):
    fake = FakeNcu(monkeypatch, ANSWER, refuse=("a.sum\nFailed to find metric c.sum",))
    found = dynamic.profile(["true"], "k", metrics=("a.sum", "b.sum", "c.sum"), ncu="ncu")
    assert found.dropped == ("a.sum", "c.sum") and fake.metrics_asked() == [["a.sum", "b.sum", "c.sum"], ["b.sum"]]


def test_an_ncu_that_profiled_nothing_names_its_exit_and_the_last_four_lines_of_both_its_outputs(monkeypatch):
    FakeNcu(monkeypatch, "==PROF== one\n==PROF== two\n==PROF== three\n", stderr="err four\nerr five\n\n", code=3)
    with pytest.raises(dynamic.ProfilerMissing) as missing:
        dynamic.profile(["true"], "k", ncu="ncu")
    assert str(missing.value) == "ncu profiled nothing (exit 3): ==PROF== two / ==PROF== three / err four / err five"


@pytest.mark.parametrize("lines, said", [(["only"], "only"), (["a", "b"], "a / b"), (["a", "b", "c", "d"], "a / b / c / d"),
                                         (["a", "b", "c", "d", "e"], "b / c / d / e")])
def test_at_most_four_lines_name_an_ncu_that_profiled_nothing(monkeypatch, lines, said):
    FakeNcu(monkeypatch, "\n".join(lines), code=1)
    with pytest.raises(dynamic.ProfilerMissing, match=r"^ncu profiled nothing \(exit 1\): (.*)$") as missing:
        dynamic.profile(["true"], "k", ncu="ncu")
    assert str(missing.value).split(": ", 1)[1] == said


def test_at_most_400_characters_of_what_ncu_printed_name_it(monkeypatch):
    FakeNcu(monkeypatch, "z" * 401)
    with pytest.raises(dynamic.ProfilerMissing) as missing:
        dynamic.profile(["true"], "k", ncu="ncu")
    assert str(missing.value) == "ncu profiled nothing (exit 0): " + "z" * 400


def test_a_profile_is_a_frozen_value_whose_missing_metrics_read_zero_or_the_default_given():
    made = NcuProfile("k", {DRAM: 5.0})
    assert (made.dropped, made.seconds, made.notes) == ((), 0.0, ())
    assert (made.get(DRAM), made.get(L2), made.get(L2, -1.5), made.get(DRAM, -1.5)) == (5.0, 0.0, -1.5, 5.0)
    with pytest.raises(AttributeError):
        made.seconds = 1.0  # type: ignore[misc]
    assert NcuProfile("k", {DRAM: 5.0}) == made


# ---- the causes, threshold by threshold ----------------------------------------------------------------------------

def test_a_quiet_profile_against_itself_blames_nothing():
    assert causes({}, {}) == []


@pytest.mark.parametrize("base_conflicts, head_conflicts, cause", [
    (0.0, 5000.0, False),  # 0 -> 0.05 per LSU instruction: not more than 0.05 up
    (0.0, 5001.0, True),
    (1e5, 1.05e5, False),  # 1 -> 1.05
    (1e5, 1.0501e5, True),
    (2e5, 1.9e5, False),  # fewer
    (5000.0, 5000.0, False),
])
def test_bank_conflicts_are_a_cause_from_more_than_0_05_more_per_lsu_instruction(base_conflicts, head_conflicts, cause):
    assert keys({LD_CONFLICTS: base_conflicts}, {LD_CONFLICTS: head_conflicts}) == (["bank conflicts"] if cause else [])


def test_bank_conflicts_of_loads_and_stores_add_up_and_score_40_times_log2_of_one_plus_the_rate():
    # base: 0.5e5 + 0.5e5 over 1e5 LSU instructions = 1 per instruction; head: 2e5 + 1e5 over 1e5 = 3
    (found,) = causes({LD_CONFLICTS: 0.5e5, ST_CONFLICTS: 0.5e5}, {LD_CONFLICTS: 2e5, ST_CONFLICTS: 1e5})
    assert found == ("bank conflicts", pytest.approx(40.0, rel=1e-12),
                     "shared-memory bank conflicts 1e+05 -> 3e+05 (1.00 -> 3.00 per LSU instruction)")
    # the head's rate over fewer LSU instructions: 3e5 over 0.5e5 is 6 a instruction, log2(7 / 1)
    (rate,) = causes({}, {LD_CONFLICTS: 3e5, LSU: 0.5e5})
    assert rate == ("bank conflicts", pytest.approx(40 * math.log2(7.0), rel=1e-12),
                    "shared-memory bank conflicts 0 -> 3e+05 (0.00 -> 6.00 per LSU instruction)")


@pytest.mark.parametrize("lsu, per_instruction", [(0.0, 3.0), (0.5, 3.0), (1.0, 3.0), (2.0, 1.5)])
def test_bank_conflicts_are_counted_per_at_least_one_lsu_instruction(lsu, per_instruction):
    (found,) = causes({LSU: lsu}, {LSU: lsu, LD_CONFLICTS: 3.0})
    assert found[1] == pytest.approx(40 * math.log2(1 + per_instruction), rel=1e-12)


@pytest.mark.parametrize("base_sectors, head_sectors, cause", [
    (4e5, 5.2e5, True),  # 4 -> 5.2 sectors a request: 1.3 x exactly
    (4e5, 5.19e5, False),
    (1e5, 1.3e5, True),  # 1 -> 1.3
    (1e5, 1.29e5, False),
    (4e5, 4e5, False),
    (4e5, 2e5, False),
    (0.0, 5e5, False),  # no sectors on the base: no ratio
])
def test_uncoalesced_loads_are_a_cause_from_1_3_times_the_sectors_per_request(base_sectors, head_sectors, cause):
    found = keys({SECTORS: base_sectors}, {SECTORS: head_sectors})
    assert found == (["uncoalesced global loads"] if cause else [])


def test_uncoalesced_loads_score_40_times_log2_of_the_ratio_and_count_per_at_least_one_request():
    (found,) = causes({}, {SECTORS: 1.6e6})  # 4 -> 16
    assert found == ("uncoalesced global loads", pytest.approx(80.0, rel=1e-12),
                     "uncoalesced global loads: 4.0 -> 16.0 sectors per request")
    # no requests counted on either side: sectors per one request, 3 -> 12
    (one,) = causes({SECTORS: 3.0, REQUESTS: 0.0}, {SECTORS: 12.0, REQUESTS: 0.5})
    assert one == ("uncoalesced global loads", pytest.approx(80.0, rel=1e-12),
                   "uncoalesced global loads: 3.0 -> 12.0 sectors per request")


@pytest.mark.parametrize("base_threads, head_threads, cause", [
    (24.0, 20.0, True),  # 1.2 x exactly
    (24.0, 20.01, False),
    (32.0, 26.6, True),
    (32.0, 26.7, False),
    (16.0, 32.0, False),  # more threads: never a cause
    (32.0, 0.0, False),  # not measured on the head
    (0.0, 0.0, False),
])
def test_divergence_is_a_cause_from_1_2_times_fewer_threads_per_instruction(base_threads, head_threads, cause):
    assert keys({THREADS: base_threads}, {THREADS: head_threads}) == (["divergence"] if cause else [])


def test_divergence_scores_40_times_log2_of_the_ratio():
    (found,) = causes({}, {THREADS: 8.0})
    assert found == ("divergence", pytest.approx(80.0, rel=1e-12),
                     "divergence: 32.0 -> 8.0 active threads per instruction")


@pytest.mark.parametrize("head_stalls, cause", [
    ({"barrier": 0.2, "long_scoreboard": 1.8}, True),  # 5% -> 10% of stalls: 5 points exactly
    ({"barrier": 0.199, "long_scoreboard": 1.801}, False),
    ({"barrier": 0.5, "long_scoreboard": 1.5}, True),
    ({"barrier": 0.1, "long_scoreboard": 1.9}, False),
    ({"barrier": 0.0, "long_scoreboard": 1.9}, False),
    ({"barrier": 0.0, "long_scoreboard": 0.0}, False),  # no stalls: no share
])
def test_barriers_are_a_cause_from_5_points_more_of_all_stalls(head_stalls, cause):
    head = {stall(reason): value for reason, value in head_stalls.items()}
    assert keys({}, head) == (["barriers"] if cause else [])


def test_the_barriers_share_counts_every_stall_reason_and_scores_100_times_its_rise():
    # base: 0.1 of 2.0 (5%); head: 0.6 barrier of 0.6 + 1.9 + 0.125 x 4 other reasons = 3.0 (20%)
    others = {stall(reason): 0.125 for reason in ("misc", "imc_miss", "selected", "wait")}
    (found,) = causes({}, {stall("barrier"): 0.6, **others})
    assert found == ("barriers", pytest.approx(15.0, rel=1e-12), "stall_barrier 5% -> 20% of stalls")
    # a base without stalls has a share of none
    (fresh_base,) = causes({stall("barrier"): 0.0, stall("long_scoreboard"): 0.0}, {stall("barrier"): 0.5})
    assert fresh_base == ("barriers", pytest.approx(100 * 0.5 / 2.4, rel=1e-12), "stall_barrier 0% -> 21% of stalls")


@pytest.mark.parametrize("base_active, head_active, cause", [
    (90.0, 75.0, True),  # 1.2 x exactly
    (90.0, 75.1, False),
    (80.0, 40.0, True),
    (60.0, 80.0, False),
    (80.0, 0.0, False),  # not measured on the head
])
def test_occupancy_is_a_cause_from_1_2_times_lower(base_active, head_active, cause):
    assert keys({ACTIVE: base_active}, {ACTIVE: head_active}) == (["occupancy"] if cause else [])


def test_occupancy_scores_40_times_log2_of_the_ratio():
    (found,) = causes({}, {ACTIVE: 20.0})
    assert found == ("occupancy", pytest.approx(80.0, rel=1e-12), "achieved occupancy 80% -> 20%")


@pytest.mark.parametrize("base_local, head_local, cause", [
    (0.0, 1000.0, False),  # 2 x 0 + 1000: not more
    (0.0, 1001.0, True),
    (100.0, 1200.0, False),  # 2 x 100 + 1000
    (100.0, 1201.0, True),
    (3000.0, 7000.0, False),  # 2 x 3000 + 1000
    (3000.0, 7000.5, True),
    (5000.0, 1000.0, False),
])
def test_spills_are_a_cause_from_more_than_twice_the_local_sectors_and_1000_more(base_local, head_local, cause):
    assert keys({LOCAL_LD: base_local}, {LOCAL_LD: head_local}) == (["spills"] if cause else [])


def test_spills_count_local_loads_and_stores_and_score_50_plus_10_times_log2_of_the_ratio():
    # base 31 + 32 sectors (+1: 64), head 1024 + 1024: five doublings
    (found,) = causes({LOCAL_LD: 31.0, LOCAL_ST: 32.0}, {LOCAL_LD: 1024.0, LOCAL_ST: 1024.0})
    assert found == ("spills", pytest.approx(100.0, rel=1e-12), "local-memory sectors 63 -> 2.05e+03")


@pytest.mark.parametrize("metric, base_bytes, head_bytes, cause", [
    (DRAM, 1e8, 1.3e8, True),  # 1.3 x exactly
    (DRAM, 1e8, 1.29e8, False),
    (L2, 4e8, 5.2e8, True),
    (L2, 4e8, 5.19e8, False),
    (DRAM, 0.0, 1e9, False),  # none on the base: no ratio
    (L2, 4e8, 1e8, False),
])
def test_memory_traffic_is_a_cause_from_1_3_times_the_dram_or_l2_bytes(metric, base_bytes, head_bytes, cause):
    assert keys({metric: base_bytes}, {metric: head_bytes}) == (["memory traffic"] if cause else [])


def test_dram_and_l2_traffic_are_a_cause_each_dram_first_scoring_20_times_log2_of_the_ratio():
    assert causes({}, {DRAM: 4e8, L2: 8e8}) == [
        ("memory traffic", pytest.approx(40.0, rel=1e-12), "DRAM bytes 1e+08 -> 4e+08"),
        ("memory traffic", pytest.approx(20.0, rel=1e-12), "L2 bytes 4e+08 -> 8e+08")]
    assert causes({}, {L2: 8e8}) == [("memory traffic", pytest.approx(20.0, rel=1e-12), "L2 bytes 4e+08 -> 8e+08")]


def test_every_cause_at_once_is_the_reviewed_snapshot(snapshot):
    """Each key once (memory traffic twice) in the order the counters are read, with its score to the last bit."""
    base = quiet(**{LD_CONFLICTS: 1234.0, LOCAL_ST: 77.0})
    head = quiet(**{LD_CONFLICTS: 4.5e5, ST_CONFLICTS: 1.5e4, SECTORS: 1.1e6, THREADS: 17.3, stall("barrier"): 1.7,
                    ACTIVE: 31.0, LOCAL_LD: 9876.0, LOCAL_ST: 1234.0, DRAM: 3.3e8, L2: 1.7e9})
    found = [(c.key, repr(c.score), c.words) for c in dynamic_causes(base, head)]
    assert [key for key, _, _ in found] == ["bank conflicts", "uncoalesced global loads", "divergence", "barriers",
                                            "occupancy", "spills", "memory traffic", "memory traffic"]
    assert found == snapshot


def test_a_side_improved_on_every_counter_blames_nothing():
    base = quiet(**{LD_CONFLICTS: 4.5e5, SECTORS: 1.1e6, THREADS: 17.3, stall("barrier"): 1.7, ACTIVE: 31.0,
                    LOCAL_LD: 9876.0, DRAM: 3.3e8, L2: 1.7e9})
    assert dynamic_causes(base, quiet()) == []


# ---- the stalls ----------------------------------------------------------------------------------------------------

def test_the_ranked_stalls_of_a_profile_pair_are_the_reviewed_snapshot(snapshot):
    """Every reason once, by the fraction of the change of stalled cycles it explains, largest first; reasons that
    explain the same keep STALLS' order."""
    base = quiet(**{stall("wait"): 0.4, stall("mio_throttle"): 0.3, stall("misc"): 0.05})
    head = quiet(**{ISSUED: 1.5e6, stall("barrier"): 0.9, stall("wait"): 0.2, stall("mio_throttle"): 0.3,
                    stall("long_scoreboard"): 1.9, stall("drain"): 0.05})
    ranked = stall_shares(base, head)
    assert sorted(reason for reason, *_ in ranked) == sorted(STALLS)
    assert [(reason, repr(b), repr(h), repr(x)) for reason, b, h, x in ranked] == snapshot


def test_a_stalls_share_and_the_change_it_explains():
    base = quiet()
    head = quiet(**{ISSUED: 2e6, stall("barrier"): 0.3, stall("long_scoreboard"): 1.7})
    ranked = {reason: rest for reason, *rest in stall_shares(base, head)}
    # cycles: barrier 0.1e6 -> 0.6e6 (+0.5e6), long scoreboard 1.9e6 -> 3.4e6 (+1.5e6): +2e6 in all
    assert ranked["barrier"] == [pytest.approx(0.05), pytest.approx(0.15), pytest.approx(0.25)]
    assert ranked["long_scoreboard"] == [pytest.approx(0.95), pytest.approx(0.85), pytest.approx(0.75)]
    assert ranked["wait"] == [0.0, 0.0, 0.0]
    assert [reason for reason, *_ in stall_shares(base, head)][:2] == ["long_scoreboard", "barrier"]


def test_stalls_whose_cycles_did_not_change_in_all_explain_nothing_and_keep_stalls_order():
    # one more barrier cycle for one fewer long scoreboard cycle: the total change is none
    head = quiet(**{stall("barrier"): 0.2, stall("long_scoreboard"): 1.8})
    ranked = stall_shares(quiet(), head)
    assert [(reason, explained) for reason, _, _, explained in ranked] == [(reason, 0.0) for reason in STALLS]
    empty = NcuProfile("k", {})
    assert stall_shares(empty, empty) == [(reason, 0.0, 0.0, 0.0) for reason in STALLS]


# ---- the card's figures --------------------------------------------------------------------------------------------

def test_the_figures_are_every_metric_but_the_duration_named_ncu_and_the_duration_in_microseconds():
    # names read from a file (not the literal's object), sorting before and after the duration's
    metrics = {fresh(DRAM): 7.0, fresh(DURATION): 2.5e-3, fresh(L2): 9.0, fresh("a"): 1.0, fresh("zz"): 2.0}
    assert dynamic.figures(NcuProfile("k", metrics)) == {"ncu dram__bytes.sum": 7.0, "ncu lts__t_bytes.sum": 9.0,
                                                          "ncu a": 1.0, "ncu zz": 2.0, "ncu duration (µs)": 2.5e-3 * 1e6}
    assert list(dynamic.figures(NcuProfile("k", metrics)))[-1] == "ncu duration (µs)"
    assert dynamic.figures(NcuProfile("k", {})) == {"ncu duration (µs)": 0.0}
