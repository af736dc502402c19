"""harness.report.plots: the performance table, the roofline and the trend plot from stored runs."""

import json

import pytest

from harness.report.plots import performance_table, plot_roofline, plot_trend, trend_series
from harness.storage.schema import migrated

GPU = {"name": "NVIDIA H200", "compute_capability": "9.0", "multiprocessors": 132, "sm_clock_max_mhz": 1980,
       "memory_clock_max_mhz": 3201, "memory_bus_width_bits": 6016}


pytestmark = pytest.mark.slow  # matplotlib figures: run by CI's second pass (tox -e unit -- -m slow)


def case(name, group, median, **info):
    return {"name": name, "fullname": f"suites/x.py::{name}", "group": group, "extra_info": info,
            "stats": {"median": median, "data": [median] * 3}}


def recorded(when="2026-11-29T12:00:00+00:00", scale=1.0):
    n = 4096
    flops = 2.0 * n**3
    return {
        "datetime": when,
        "machine_info": {"gpu": GPU},
        "benchmarks": [
            case("test_matmul_time[warptile_128x256-4096x4096x4096]", "matmul 4096", 3e-3 * scale, kernel="warptile_128x256",
                 shape="4096x4096x4096", flops=flops, tflops=flops / 3e-3 / 1e12, ceiling="cuBLAS",
                 ceiling_rate=51e12, fraction_of_ceiling=flops / 3e-3 / 51e12, datasheet_rate=66.9e12),
            case("test_matmul_time[cublas-4096x4096x4096]", "matmul 4096", 2.7e-3 * scale, kernel="cublas",
                 shape="4096x4096x4096", flops=flops, tflops=flops / 2.7e-3 / 1e12, ceiling="cuBLAS",
                 ceiling_rate=51e12, fraction_of_ceiling=1.0),
            case("test_add_time[matrix_add_2d_vec4-8192x8192]", "add 8192", 1.83e-4, kernel="matrix_add_2d_vec4",
                 shape="8192x8192", bytes=805306368, gbps=4400.0, ceiling="device copy", ceiling_rate=4.28e12,
                 fraction_of_ceiling=1.028, datasheet_rate=4.814e12),
            case("test_vector_add_streams_time[chunks=16]", "streams", 1.7e-3, kernel="vector_add_streams", chunks=16, bytes=120e6, gbps=70.0,
                 ceiling="overlap bound, 16 chunk(s)", ceiling_rate=76e9, fraction_of_ceiling=0.92),
        ],
    }


def test_performance_table_has_a_row_per_case_with_ratios():
    table = performance_table(recorded())
    rows = table.splitlines()[2:]
    assert len(rows) == 4
    assert "| warptile_128x256 | 4096x4096x4096 | 3.00 ms | 45.81 TFLOP/s | 89.8% of cuBLAS | 68.5% |" in table
    assert "102.8% of device copy" in table and "91.4%" in table  # 805 MB in 0.183 ms of 4.81 TB/s
    assert "| vector_add_streams (chunks 16) |" in table


def test_roofline_and_trend_pngs_are_written(tmp_path):
    plot_roofline(recorded(), tmp_path / "roofline.png")
    runs = [recorded("2026-11-28T12:00:00+00:00"), recorded("2026-11-29T12:00:00+00:00", scale=1.1)]
    cases = plot_trend(runs, tmp_path / "trend.png")
    assert cases == 4
    for name in ("roofline.png", "trend.png"):
        data = (tmp_path / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_a_trend_keeps_only_the_runs_timed_like_the_newest():
    def timed(when, timer, scale=1.0):
        run = recorded(when, scale)
        for bench in run["benchmarks"]:
            bench["extra_info"]["timer"] = timer
        return run

    runs = [timed("2026-11-27T12:00:00+00:00", "cuda events", 1.5), timed("2026-11-28T12:00:00+00:00", "cupti"),
            timed("2026-11-29T12:00:00+00:00", "cupti kernel", 1.2),
            timed("2026-11-30T12:00:00+00:00", "cupti concurrent kernel", 1.1)]
    series = trend_series([migrated(run) for run in runs])  # as load_run gives them
    points = series["matmul 4096"]["test_matmul_time[cublas-4096x4096x4096]"]
    # "cupti" (what the first CUPTI files wrote) is the concurrent kind; events and the KERNEL kind are left out
    assert [when.day for when, _ in points] == [28, 30]
    assert [median for _, median in points] == pytest.approx([2.7e-3, 2.7e-3 * 1.1])


def test_plot_script_reads_a_baseline_folder(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    folder = tmp_path / "NVIDIA_H200"
    folder.mkdir()
    (folder / "0001_a.json").write_text(json.dumps(recorded()))
    root = Path(__file__).resolve().parents[1]
    result = subprocess.run([sys.executable, "-m", "scripts.plot_baselines", str(folder),
                             "--out", str(tmp_path / "docs")], capture_output=True, text=True, cwd=root)
    assert result.returncode == 0, result.stderr
    assert "warptile_128x256" in result.stdout
    assert (tmp_path / "docs" / "NVIDIA_H200-roofline.png").exists()


@pytest.mark.parametrize("missing", ["folder"])
def test_plot_script_says_when_there_is_nothing(tmp_path, missing):
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    result = subprocess.run([sys.executable, "-m", "scripts.plot_baselines", str(tmp_path / "none")],
                            capture_output=True, text=True, cwd=root)
    assert result.returncode == 1 and "no baseline files" in result.stderr


def test_a_matmuls_least_traffic_is_a_b_and_c_once_each():
    from harness.report.plots import _least_matmul_bytes

    assert _least_matmul_bytes("2x3x4") == 4 * (2 * 4 + 4 * 3 + 2 * 3)  # m x n x k: A m·k, B k·n, C m·n floats


def test_the_roofline_is_drawn_at_120_dpi(tmp_path):
    import struct

    plot_roofline(recorded(), tmp_path / "r.png")
    width, height = struct.unpack(">II", (tmp_path / "r.png").read_bytes()[16:24])  # the PNG's IHDR
    assert (width, height) == (8 * 120, int(5.5 * 120))  # figsize (8, 5.5) inches


def test_the_roofline_draws_cublas_measured_rate_as_its_line(tmp_path, monkeypatch):
    # the dashed line is cuBLAS's own rate (2 x 4096³ in 2.7 ms), not that of another kernel
    import matplotlib.axes

    drawn = []
    original = matplotlib.axes.Axes.axhline
    monkeypatch.setattr(matplotlib.axes.Axes, "axhline",
                        lambda self, y=0, *args, **kwargs: drawn.append(kwargs.get("label")) or original(
                            self, y, *args, **kwargs))
    plot_roofline(recorded(), tmp_path / "r.png")
    rate = 2 * 4096**3 / 2.7e-3 / 1e12
    assert f"cuBLAS SGEMM {rate:.1f} TFLOP/s (measured)" in drawn


def test_the_trend_is_drawn_at_100_dpi_a_panel_per_group(tmp_path):
    import struct

    runs = [recorded("2026-11-28T12:00:00+00:00"), recorded("2026-11-29T12:00:00+00:00", scale=1.1)]
    plot_trend(runs, tmp_path / "t.png")
    width, height = struct.unpack(">II", (tmp_path / "t.png").read_bytes()[16:24])  # the PNG's IHDR
    groups = len({bench["group"] for bench in runs[0]["benchmarks"]})
    assert (width, height) == (9 * 100, round(2.6 * groups * 100))  # figsize (9, 2.6 per group) inches


def test_the_roofline_cublas_line_is_seen_dashed_red_at_its_rate(tmp_path, monkeypatch):
    import matplotlib.axes
    from matplotlib.colors import to_rgba

    lines = []
    original = matplotlib.axes.Axes.axhline
    monkeypatch.setattr(matplotlib.axes.Axes, "axhline",
                        lambda self, *args, **kwargs: lines.append(original(self, *args, **kwargs)) or lines[-1])
    plot_roofline(recorded(), tmp_path / "r.png")
    (line,) = lines
    assert line.get_ydata()[0] == pytest.approx(2 * 4096**3 / 2.7e-3 / 1e12)
    assert line.get_linewidth() > 0 and line.get_linestyle() == "--" and line.get_visible()
    assert to_rgba(line.get_color()) == to_rgba("tab:red")


def test_the_roofline_draws_its_roof_over_intensities_of_1_32_to_2048_flop_per_byte(tmp_path, monkeypatch):
    import matplotlib.axes

    drawn = {}
    original = matplotlib.axes.Axes.plot
    monkeypatch.setattr(matplotlib.axes.Axes, "plot", lambda self, *args, **kwargs: drawn.setdefault(
        kwargs.get("label"), args) and original(self, *args, **kwargs))
    plot_roofline(recorded(), tmp_path / "r.png")
    (xs, roof, _), = [args for label, args in drawn.items() if label and label.startswith("measured copy")]
    assert list(xs) == [2.0**i for i in range(-5, 12)] and roof[0] < roof[-1]
