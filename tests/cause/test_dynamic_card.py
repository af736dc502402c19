"""src/kernelwatch/cause/dynamic.py on the CPU: ncu's CSV read, the counters' causes scored, the stalls ranked.

The CSV is `ncu --csv`'s details page as Nsight Compute 2025.3 writes it (one row per metric); the
profiles are made up to show one cause each.
"""

from __future__ import annotations

import dataclasses
import math
import subprocess
import time

import pytest

from kernelwatch.cause import dynamic
from kernelwatch.cause.card import merged
from kernelwatch.cause.dynamic import STALL_METRIC, NcuProfile, dynamic_causes, parse_csv, stall_shares

HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
          '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"')


def row(name: str, unit: str, value: str) -> str:
    return (f'"0","4242","python3","127.0.0.1","matmul_tiled","1","7","(32, 32, 1)","(64, 64, 1)","0","9.0",'
            f'"Command line profiler metrics","{name}","{unit}","{value}"')


def test_the_csv_rows_become_metrics_in_base_units():
    text = "\n".join(["==PROF== Connected to process 4242", HEADER, row("gpu__time_duration.sum", "usecond", "1,234.5"),
                      row("dram__bytes.sum", "Mbyte", "12.5"), row("sm__warps_active.avg.pct_of_peak_sustained_active",
                                                                     "%", "48.2"),
                      row("smsp__thread_inst_executed_per_inst_executed.ratio", "", "31.9"),
                      row("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "", "n/a")])
    found = parse_csv(text)
    assert found["gpu__time_duration.sum"] == pytest.approx(1.2345e-3)
    assert found["dram__bytes.sum"] == pytest.approx(12.5e6)
    assert found["sm__warps_active.avg.pct_of_peak_sustained_active"] == 48.2
    assert found["smsp__thread_inst_executed_per_inst_executed.ratio"] == 31.9
    assert "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum" not in found  # no number
    assert parse_csv("==PROF== nothing profiled") == {}


def profile_of(**metrics: float) -> NcuProfile:
    base = {"smsp__inst_issued.sum": 1e6, "sm__inst_executed_pipe_lsu.sum": 1e5,
            "smsp__thread_inst_executed_per_inst_executed.ratio": 32.0,
            "sm__warps_active.avg.pct_of_peak_sustained_active": 90.0,
            "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 4e5, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 1e5,
            "dram__bytes.sum": 1e8, "lts__t_bytes.sum": 4e8, STALL_METRIC.format("long_scoreboard"): 2.0,
            STALL_METRIC.format("barrier"): 0.2}
    return NcuProfile("k", {**base, **metrics})


@pytest.mark.parametrize("head, key", [
    ({"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": 3.1e6}, "bank conflicts"),
    ({"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 3.2e6}, "uncoalesced global loads"),
    ({"smsp__thread_inst_executed_per_inst_executed.ratio": 16.0}, "divergence"),
    ({STALL_METRIC.format("barrier"): 2.5}, "barriers"),
    ({"sm__warps_active.avg.pct_of_peak_sustained_active": 45.0}, "occupancy"),
    ({"l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum": 5e5}, "spills"),
    ({"lts__t_bytes.sum": 9e8}, "memory traffic"),
])
def test_each_counter_that_moved_is_blamed_first(head, key):
    ranked = merged(dynamic_causes(profile_of(), profile_of(**head)))
    assert ranked and ranked[0].key == key, ranked


def test_bank_conflicts_score_40_times_log2_of_one_plus_their_rate_per_lsu_instruction():
    # none on the base, 3 per LSU instruction on the head (3e5 over 1e5): (1 + 3) / (1 + 0) is two doublings
    head = profile_of(**{"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": 3e5})
    (cause,) = dynamic_causes(profile_of(), head)
    assert cause.key == "bank conflicts" and cause.score == pytest.approx(80.0)


def test_two_same_profiles_blame_nothing():
    assert dynamic_causes(profile_of(), profile_of()) == []


def test_the_stalls_are_ranked_by_the_share_of_the_change_they_explain():
    base = profile_of()
    head = profile_of(**{STALL_METRIC.format("barrier"): 2.2, STALL_METRIC.format("long_scoreboard"): 2.5})
    (first, base_share, head_share, explained), (second, *_), *_ = stall_shares(base, head)
    assert (first, second) == ("barrier", "long_scoreboard")
    assert base_share == pytest.approx(0.2 / 2.2) and head_share == pytest.approx(2.2 / 4.7)
    assert explained == pytest.approx(2.0 / 2.5)


def test_without_ncu_the_profiler_says_so(monkeypatch):
    monkeypatch.setattr(dynamic.shutil, "which", lambda name: None)
    with pytest.raises(dynamic.ProfilerMissing, match="no ncu on PATH"):
        dynamic.profile(["true"], "k")


def test_an_unknown_metric_is_dropped_and_the_rest_asked_for_again(monkeypatch, tmp_path):
    fake = tmp_path / "ncu"
    # a stand-in for ncu: refuses one metric, then answers with one row
    fake.write_text("#!/bin/sh\ncase \"$*\" in *no_such_metric*) echo '==ERROR== Failed to find metric "
                    "no_such_metric.sum'; exit 1;; esac\n"
                    f"echo '{HEADER}'\necho '{row('gpu__time_duration.sum', 'nsecond', '900')}'\n")
    fake.chmod(0o755)
    found = dynamic.profile(["true"], "k", metrics=("gpu__time_duration.sum", "no_such_metric.sum"), ncu=str(fake))
    assert found.metrics == {"gpu__time_duration.sum": pytest.approx(9e-7)}
    assert found.dropped == ("no_such_metric.sum",)


@pytest.mark.slow  # 16 static builds and their disassembly: CI's second pass (tox -e unit -- -m slow)
def test_the_full_card_names_every_variants_cause_first_on_the_h200s_recorded_profiles():
    """The static half made here, the dynamic half from the profiles measured on an H200 (tests/data/cause/)."""
    import json
    from pathlib import Path

    from kernelwatch.cause.card import static_causes
    from maintainers.support.cause_variants import VARIANTS
    from tests.support.variant_profiles import original_profile, variant_profile

    recorded = json.loads((Path(__file__).parents[1] / "data" / "cause" / "h200-variant-profiles.json").read_text())
    right = []
    for variant in VARIANTS:
        sides = recorded["variants"][variant.name]
        causes = [*static_causes(original_profile(variant, "sm_90"), variant_profile(variant, "sm_90")),
                  *dynamic_causes(NcuProfile("k", sides["base"]), NcuProfile("k", sides["head"]))]
        right.append(merged(causes)[0].key == variant.cause)
    assert all(right), [v.name for v, ok in zip(VARIANTS, right, strict=True) if not ok]


def test_an_ncu_that_profiled_nothing_is_named_with_the_last_four_lines_it_printed(tmp_path):
    fake = tmp_path / "ncu"
    fake.write_text("#!/bin/sh\nfor i in 1 2 3 4 5 6; do echo \"line $i\"; done\nexit 9\n")
    fake.chmod(0o755)
    with pytest.raises(dynamic.ProfilerMissing) as missing:
        dynamic.profile(["true"], "k", ncu=str(fake))
    assert str(missing.value) == "ncu profiled nothing (exit 9): line 3 / line 4 / line 5 / line 6"


def test_a_row_without_a_metric_name_is_passed_over_and_the_rows_after_it_read():
    found = parse_csv("\n".join([HEADER, row("", "", "1"), row("dram__bytes.sum", "byte", "64")]))
    assert found == {"dram__bytes.sum": 64.0}


def test_the_launch_under_ncu_is_the_builds_own_and_one_without_a_grid_or_shape_is_not_profiled(tmp_path):
    import sys
    import types

    from kernelwatch.cause.sides import Side, _launch_command

    build = types.SimpleNamespace(launch="grid=(8, 4, 1) block=(32, 8) shared=16384 pitched=False", function="k")
    command = _launch_command(Side(None, build, "256x128x64"), "// source", ("-O3",), tmp_path, "head")
    assert command == [sys.executable, "-m", "kernelwatch.cause.launch", str(tmp_path / "head.cu"), "k",
                       "--shape=256x128x64", "--grid=8,4,1", "--block=32,8", "--shared=16384", "--option=-O3"]
    assert (tmp_path / "head.cu").read_text() == "// source"
    assert _launch_command(Side(None, build), "", (), tmp_path, "x") is None  # no shape: nothing to launch
    gridless = types.SimpleNamespace(launch="chunks=4 grids=[(1, 1, 1)] block=(256,)", function="k")
    assert _launch_command(Side(None, gridless, "1x1x1"), "", (), tmp_path, "y") is None


@pytest.mark.parametrize("unit, seconds", [("ns", 1e-9), ("us", 1e-6), ("ms", 1e-3), ("s", 1.0), ("nsecond", 1e-9),
                                           ("usecond", 1e-6), ("msecond", 1e-3), ("second", 1.0)])
def test_each_time_unit_of_old_and_new_ncu_is_read_in_seconds(unit, seconds):
    # Nsight Compute 2025.3 writes ns/us/ms, older versions nsecond/usecond/msecond
    found = parse_csv("\n".join([HEADER, row("gpu__time_duration.sum", unit, "250")]))
    assert found["gpu__time_duration.sum"] == pytest.approx(250 * seconds)


def test_a_head_that_spills_where_the_base_did_not_scores_50_plus_10_times_log2_of_its_sectors():
    # no local memory on the base counts as one sector: 4096 sectors on the head are 12 doublings
    (cause,) = dynamic_causes(profile_of(), profile_of(**{"l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum": 4096.0}))
    assert cause.key == "spills" and cause.score == pytest.approx(50 + 10 * 12)


LD_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
ST_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"


def test_bank_conflicts_count_loads_and_stores_from_past_0_05_more_per_lsu_instruction():
    assert dynamic_causes(profile_of(), profile_of(**{LD_CONFLICTS: 5000.0})) == []  # 0.05 more: not past it
    (cause,) = dynamic_causes(profile_of(), profile_of(**{LD_CONFLICTS: 5001.0}))
    assert cause.score == pytest.approx(40 * math.log2(1.05001))
    assert cause.words == "shared-memory bank conflicts 0 -> 5e+03 (0.00 -> 0.05 per LSU instruction)"
    (both,) = dynamic_causes(profile_of(), profile_of(**{LD_CONFLICTS: 2e5, ST_CONFLICTS: 1e5}))
    assert both.score == pytest.approx(80.0)  # (1 + 3) / 1: two doublings
    # from 1 to 3 per LSU instruction: log2(4 / 2)
    (rate,) = dynamic_causes(profile_of(**{ST_CONFLICTS: 1e5}), profile_of(**{ST_CONFLICTS: 3e5}))
    assert rate.score == pytest.approx(40.0)


def test_uncoalesced_loads_are_a_cause_from_1_3_times_the_sectors_per_request():
    sectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
    assert dynamic_causes(profile_of(), profile_of(**{sectors: 5.19e5})) == []
    (cause,) = dynamic_causes(profile_of(), profile_of(**{sectors: 5.2e5}))  # 4 -> 5.2 sectors a request
    assert cause.key == "uncoalesced global loads" and cause.score == pytest.approx(40 * math.log2(1.3))
    assert cause.words == "uncoalesced global loads: 4.0 -> 5.2 sectors per request"
    assert dynamic_causes(profile_of(**{sectors: 0.0}), profile_of(**{sectors: 5e5})) == []  # none on the base


def test_divergence_is_a_cause_from_1_2_times_fewer_threads_per_instruction():
    threads = "smsp__thread_inst_executed_per_inst_executed.ratio"
    assert dynamic_causes(profile_of(), profile_of(**{threads: 26.7})) == []  # 32 / 26.7 < 1.2
    (cause,) = dynamic_causes(profile_of(), profile_of(**{threads: 26.6}))
    assert cause.key == "divergence" and cause.score == pytest.approx(40 * math.log2(32 / 26.6))
    assert cause.words == "divergence: 32.0 -> 26.6 active threads per instruction"
    assert dynamic_causes(profile_of(), profile_of(**{threads: 0.0})) == []  # not measured on the head
    (exactly,) = dynamic_causes(profile_of(**{threads: 24.0}), profile_of(**{threads: 20.0}))  # 24 = 1.2 x 20
    assert exactly.key == "divergence" and exactly.score == pytest.approx(40 * math.log2(1.2))


def test_the_barrier_stalls_share_scores_100_times_its_rise():
    (cause,) = dynamic_causes(profile_of(), profile_of(**{STALL_METRIC.format("barrier"): 2.0}))
    assert cause.key == "barriers" and cause.score == pytest.approx(100 * (2.0 / 4.0 - 0.2 / 2.2))
    assert cause.words == "stall_barrier 9% -> 50% of stalls"
    # 0.2 of 2.2 (9.09%) -> 0.32 of 2.32 (13.8%): under 5 points more
    assert dynamic_causes(profile_of(), profile_of(**{STALL_METRIC.format("barrier"): 0.32})) == []
    # none of the base's stalls at a barrier, 0.1 of the head's 2.0: 5 points exactly
    base = profile_of(**{STALL_METRIC.format("barrier"): 0.0})
    head = profile_of(**{STALL_METRIC.format("barrier"): 0.1, STALL_METRIC.format("long_scoreboard"): 1.9})
    (exactly,) = dynamic_causes(base, head)
    assert exactly.key == "barriers" and exactly.score == pytest.approx(100 * 0.05)
    head = profile_of(**{STALL_METRIC.format("barrier"): 0.099, STALL_METRIC.format("long_scoreboard"): 1.901})
    assert dynamic_causes(base, head) == []


def test_achieved_occupancy_is_a_cause_from_1_2_times_lower():
    active = "sm__warps_active.avg.pct_of_peak_sustained_active"
    (cause,) = dynamic_causes(profile_of(), profile_of(**{active: 75.0}))  # 90 = 1.2 x 75
    assert cause.key == "occupancy" and cause.score == pytest.approx(40 * math.log2(1.2))
    assert cause.words == "achieved occupancy 90% -> 75%"
    assert dynamic_causes(profile_of(), profile_of(**{active: 75.1})) == []
    assert dynamic_causes(profile_of(), profile_of(**{active: 0.0})) == []


def test_spills_need_more_than_twice_the_bases_local_sectors_and_1000_more():
    local = "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum"
    assert dynamic_causes(profile_of(), profile_of(**{local: 1000.0})) == []
    (cause,) = dynamic_causes(profile_of(**{local: 100.0}), profile_of(**{local: 1201.0}))
    assert cause.score == pytest.approx(50 + 10 * math.log2(1201 / 101))
    assert cause.words == "local-memory sectors 100 -> 1.2e+03"
    assert dynamic_causes(profile_of(**{local: 100.0}), profile_of(**{local: 1200.0})) == []


def test_dram_and_l2_traffic_are_causes_from_1_3_times_each():
    assert dynamic_causes(profile_of(), profile_of(**{"dram__bytes.sum": 1.29e8})) == []
    causes = dynamic_causes(profile_of(), profile_of(**{"dram__bytes.sum": 2e8, "lts__t_bytes.sum": 5.2e8}))
    assert [(c.key, round(c.score, 9)) for c in causes] == [("memory traffic", 20.0),
                                                            ("memory traffic", round(20 * math.log2(1.3), 9))]
    assert [c.words for c in causes] == ["DRAM bytes 1e+08 -> 2e+08", "L2 bytes 4e+08 -> 5.2e+08"]
    assert dynamic_causes(profile_of(**{"dram__bytes.sum": 0.0}), profile_of(**{"dram__bytes.sum": 2e8})) == []


def test_stalls_that_did_not_change_explain_nothing_and_a_profile_without_stalls_has_no_shares():
    rows = stall_shares(profile_of(), profile_of())
    assert {explained for *_, explained in rows} == {0.0}
    empty = NcuProfile("k", {})
    assert {(base, head) for _, base, head, _ in stall_shares(empty, empty)} == {(0.0, 0.0)}


def test_the_figures_are_the_metrics_named_ncu_and_the_duration_in_microseconds():
    assert dynamic.figures(NcuProfile("k", {"gpu__time_duration.sum": 2.5e-6, "dram__bytes.sum": 7.0})) == {
        "ncu dram__bytes.sum": 7.0, "ncu duration (µs)": pytest.approx(2.5)}
    assert dynamic.figures(NcuProfile("k", {})) == {"ncu duration (µs)": 0.0}


def test_the_figures_of_ncus_csv_are_every_metric_but_the_duration_which_is_in_microseconds():
    found = parse_csv("\n".join([HEADER, row("dram__bytes.sum", "Kbyte", "3"), row("gpu__time_duration.sum", "ms", "1.5"),
                                  row("sm__throughput.avg.pct_of_peak_sustained_elapsed", "%", "61.5")]))
    assert dynamic.figures(NcuProfile("k", found)) == {
        "ncu dram__bytes.sum": 3e3, "ncu sm__throughput.avg.pct_of_peak_sustained_elapsed": 61.5,
        "ncu duration (µs)": pytest.approx(1500.0, rel=1e-12)}


def test_an_ncu_that_refuses_a_metric_three_times_says_which(tmp_path):
    fake = tmp_path / "ncu"
    # refuses the first metric it is asked for, every time
    fake.write_text('#!/bin/sh\nwhile [ "$1" != "--metrics" ]; do shift; done\n'
                    'echo "==ERROR== Failed to find metric $(echo "$2" | cut -d, -f1)."\nexit 1\n')
    fake.chmod(0o755)
    with pytest.raises(dynamic.ProfilerMissing, match=r"^ncu kept refusing metrics: a\.sum, b\.sum, c\.sum$"):
        dynamic.profile(["true"], "k", metrics=("a.sum", "b.sum", "c.sum", "d.sum"), ncu=str(fake))


def test_ncu_is_asked_for_the_second_launch_of_the_kernel_with_the_clocks_left_alone(tmp_path):
    fake, args = tmp_path / "ncu", tmp_path / "args"
    fake.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {args}\n'
                    f"echo '{HEADER}'\necho '{row('dram__bytes.sum', 'Kbyte', '1,500')}'\n")
    fake.chmod(0o755)
    found = dynamic.profile(["python", "-m", "x"], "matmul_.*", metrics=("dram__bytes.sum", "lts__t_bytes.sum"),
                            ncu=str(fake))
    assert args.read_text().splitlines() == ["--csv", "--clock-control", "none", "--kernel-name", "regex:matmul_.*",
                                             "--launch-skip", "1", "--launch-count", "1", "--metrics",
                                             "dram__bytes.sum,lts__t_bytes.sum", "python", "-m", "x"]
    assert found.metrics == {"dram__bytes.sum": 1.5e6} and found.dropped == () and found.kernel == "matmul_.*"
    assert found.seconds > 0 and found.get("lts__t_bytes.sum") == 0.0 and found.get("x", 7.0) == 7.0


def test_a_unit_the_csv_reader_does_not_know_leaves_the_value_as_it_is():
    found = parse_csv("\n".join([HEADER, row("a", "inst", "12"), row("b", "Gbyte", "2"), 'not a row,"x"']))
    assert found == {"a": 12.0, "b": 2e9}


@pytest.mark.parametrize("unit, factor", [("nsecond", 1e-9), ("usecond", 1e-6), ("msecond", 1e-3), ("second", 1.0),
                                          ("ns", 1e-9), ("us", 1e-6), ("ms", 1e-3), ("s", 1.0), ("byte", 1.0),
                                          ("Kbyte", 1e3), ("Mbyte", 1e6), ("Gbyte", 1e9), ("Tbyte", 1e12), ("B", 1.0),
                                          ("KB", 1e3), ("MB", 1e6), ("GB", 1e9), ("TB", 1e12)])
def test_each_unit_ncu_writes_is_an_exact_power_of_ten_of_seconds_or_bytes(unit, factor):
    assert parse_csv("\n".join([HEADER, row("dram__bytes.sum", unit, "7")]))["dram__bytes.sum"] == 7 * factor


def test_a_row_without_a_number_is_passed_over_and_the_rows_after_it_read():
    found = parse_csv("\n".join([HEADER, row("dram__bytes.sum", "byte", "n/a"), row("lts__t_bytes.sum", "Kbyte", "2")]))
    assert found == {"lts__t_bytes.sum": 2e3}


def test_a_profile_is_a_value_that_took_no_time_unless_told():
    made = NcuProfile("k", {"dram__bytes.sum": 1.0})
    assert made.seconds == 0.0 and made.dropped == () and made.notes == ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.kernel = "other"  # type: ignore[misc]


def test_the_command_and_kernel_may_be_named_and_the_options_must_be(monkeypatch):
    monkeypatch.setattr(dynamic.shutil, "which", lambda name: None)
    with pytest.raises(dynamic.ProfilerMissing):
        dynamic.profile(command=["true"], kernel="k")
    with pytest.raises(TypeError):
        dynamic.profile(["true"], "k", ("dram__bytes.sum",))  # type: ignore[misc]


class FakeNcu:
    """subprocess.run for ncu: refuses the metrics in `refuse` once each, then prints `stdout`; each run takes
    `seconds` on a clock of its own (time.perf_counter)."""

    def __init__(self, monkeypatch, stdout: str, *, refuse: tuple[str, ...] = (), seconds: float = 0.0):
        self.stdout, self.refuse, self.seconds, self.now, self.calls = stdout, list(refuse), seconds, 100.0, []
        monkeypatch.setattr(dynamic.subprocess, "run", self.run)
        monkeypatch.setattr(time, "perf_counter", lambda: self.now)

    def run(self, args, **kwargs):
        self.calls.append((args, kwargs))
        self.now += self.seconds
        if self.refuse:
            return subprocess.CompletedProcess(args, 1, "", f"==ERROR== Failed to find metric {self.refuse.pop(0)}\n")
        return subprocess.CompletedProcess(args, 0, self.stdout, "")


def test_ncu_has_five_minutes_a_run_unless_told_otherwise(monkeypatch):
    fake = FakeNcu(monkeypatch, "\n".join([HEADER, row("dram__bytes.sum", "byte", "8")]))
    dynamic.profile(["true"], "k", ncu="ncu")
    dynamic.profile(["true"], "k", ncu="ncu", timeout=20)
    assert [kwargs["timeout"] for _, kwargs in fake.calls] == [300, 20]


def test_the_profiles_seconds_are_those_of_all_of_ncus_runs(monkeypatch):
    # one run refuses a metric and the next answers: 2.5 s each on the clock
    FakeNcu(monkeypatch, "\n".join([HEADER, row("dram__bytes.sum", "byte", "8")]), refuse=("b.sum",), seconds=2.5)
    found = dynamic.profile(["true"], "k", metrics=("dram__bytes.sum", "b.sum"), ncu="ncu")
    assert found.seconds == pytest.approx(5.0) and found.dropped == ("b.sum",)


def test_an_ncu_that_profiled_nothing_is_named_with_at_most_400_characters_of_what_it_printed(monkeypatch):
    FakeNcu(monkeypatch, "x" * 390 + "\n" + "y" * 30)
    with pytest.raises(dynamic.ProfilerMissing) as missing:
        dynamic.profile(["true"], "k", ncu="ncu")
    assert str(missing.value) == "ncu profiled nothing (exit 0): " + ("x" * 390 + " / " + "y" * 30)[:400]


def test_a_stalls_cycles_are_its_stalls_per_issue_times_the_instructions_issued():
    # the head issues twice the instructions: barrier 0.2 x 1e6 -> 0.5 x 2e6, long scoreboard 2 x 1e6 -> 2 x 2e6
    base = profile_of()
    head = profile_of(**{"smsp__inst_issued.sum": 2e6, STALL_METRIC.format("barrier"): 0.5})
    changes = {"barrier": 0.5 * 2e6 - 0.2 * 1e6, "long_scoreboard": 2.0 * 2e6 - 2.0 * 1e6}
    total = sum(changes.values())
    (first, _, _, first_explains), (second, _, _, second_explains), *rest = stall_shares(base, head)
    assert (first, first_explains) == ("long_scoreboard", pytest.approx(changes["long_scoreboard"] / total))
    assert (second, second_explains) == ("barrier", pytest.approx(changes["barrier"] / total))
    assert {explained for *_, explained in rest} == {0.0}


def test_a_stall_that_fell_is_ranked_below_those_that_did_not_change():
    base = profile_of()
    head = profile_of(**{STALL_METRIC.format("barrier"): 0.1, STALL_METRIC.format("wait"): 0.5})
    ranked = [(reason, explained) for reason, _, _, explained in stall_shares(base, head)]
    # 0.5e6 more cycles of wait and 0.1e6 fewer of barrier: 0.4e6 more in all
    assert ranked[0] == ("wait", pytest.approx(0.5 / 0.4))
    assert ranked[-1] == ("barrier", pytest.approx(-0.1 / 0.4))
    assert {explained for _, explained in ranked[1:-1]} == {0.0}


def test_bank_conflicts_of_a_profile_without_lsu_instructions_are_counted_per_one_instruction():
    lsu = "sm__inst_executed_pipe_lsu.sum"
    (cause,) = dynamic_causes(profile_of(**{lsu: 0.0}), profile_of(**{lsu: 0.0, LD_CONFLICTS: 3.0}))
    assert cause.key == "bank conflicts" and cause.score == pytest.approx(40 * math.log2((1 + 3.0) / (1 + 0.0)))


def test_sectors_of_a_profile_without_global_load_requests_are_counted_per_one_request():
    sectors, requests = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
    # the base's 4 sectors a request, the head's 8 sectors with no request counted: 8 a request
    (cause,) = dynamic_causes(profile_of(), profile_of(**{sectors: 8.0, requests: 0.0}))
    assert cause.key == "uncoalesced global loads" and cause.score == pytest.approx(40 * math.log2(8.0 / 4.0))


def test_the_card_of_a_static_and_a_dynamic_half_is_its_reviewed_snapshot(snapshot):
    """Both halves merged by key (the barriers of the code and of the stalls one cause), the strongest three named,
    every counter of both sides in the table as the card writes numbers (tests/cause/__snapshots__/
    test_dynamic_card.ambr; `--snapshot-update` rewrites it)."""
    from kernelwatch.cause.card import Cause, card

    base = profile_of(**{"gpu__time_duration.sum": 1.234e-3})
    head = profile_of(**{"gpu__time_duration.sum": 1.5e-3,
                         "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": 3e5,
                         STALL_METRIC.format("barrier"): 2.5, "sm__warps_active.avg.pct_of_peak_sustained_active": 45.0,
                         "smsp__thread_inst_executed_per_inst_executed.ratio": 24.0, "dram__bytes.sum": 2.5e8})
    causes = [Cause("barriers", 60.0, "barriers: BAR in the code 2 -> 8"), *dynamic_causes(base, head)]
    ranked = [f"{c.key} | {c.score:.9f} | {c.words}" for c in merged(causes)]
    lines = card("s.py::t[1024]", causes, dynamic.figures(base), dynamic.figures(head),
                 {"driver": ("580.65", "580.65"), "ncu": ("2025.2", "2025.3")})
    assert lines[2].startswith("1. **barriers**: barriers: BAR in the code 2 -> 8; stall_barrier 9% -> 56% of stalls")
    assert "\n".join([*ranked, "-" * 40, *lines]) == snapshot
