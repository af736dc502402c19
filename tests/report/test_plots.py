"""kernelwatch.report.plots: the performance table, the roofline and the trend plot from stored runs; `kernelwatch plot`,
which draws them from a folder of stored runs."""

import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from kernelwatch.report.plots import performance_table, plot_roofline, plot_trend, trend_series
from kernelwatch.storage.schema import migrated

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


def kernelwatch(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The installed console script, as a user runs it."""
    return subprocess.run([str(Path(sys.executable).with_name("kernelwatch")), *args], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


def test_kernelwatch_plot_reads_a_folder_of_stored_runs(tmp_path):
    folder = tmp_path / "NVIDIA_H200"
    folder.mkdir()
    (folder / "0001_a.json").write_text(json.dumps(recorded()))
    result = kernelwatch("plot", str(folder), "--out", str(tmp_path / "figures"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "warptile_128x256" in result.stdout
    assert (tmp_path / "figures" / "NVIDIA_H200-roofline.png").exists()
    assert (tmp_path / "figures" / "NVIDIA_H200-trend.png").exists()


def test_kernelwatch_plot_writes_here_by_default(tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "0001_a.json").write_text(json.dumps(recorded()))
    result = kernelwatch("plot", "runs", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "runs-roofline.png").exists() and (tmp_path / "runs-trend.png").exists()


def test_kernelwatch_plot_says_when_there_is_nothing(tmp_path):
    result = kernelwatch("plot", str(tmp_path / "none"), cwd=tmp_path)
    assert result.returncode == 1 and "no stored runs" in result.stderr


def test_kernelwatch_plot_of_a_broken_run_is_exit_2_with_the_file(tmp_path):
    (tmp_path / "0001_a.json").write_text('{"benchmarks": [')
    result = kernelwatch("plot", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 2 and "0001_a.json" in result.stderr and "Traceback" not in result.stderr


def test_a_matmuls_least_traffic_is_a_b_and_c_once_each():
    from kernelwatch.report.plots import _least_matmul_bytes

    assert _least_matmul_bytes("2x3x4") == 4 * (2 * 4 + 4 * 3 + 2 * 3)  # m x n x k: A m·k, B k·n, C m·n floats
    assert _least_matmul_bytes("3x5x7") == 4 * (21 + 35 + 15)


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


# ---- what the roofline and the trend draw, read back from their figures ----------------------------------------

H200_PEAK_TFLOPS = 2 * 128 * 132 * 1980e6 / 1e12  # FP32 FMA lanes x SMs x max SM clock: 66.9 TFLOP/s


def loaded(doc):
    """`doc` as a stored run is read back: through JSON, so that no string is the suite's own constant."""
    return json.loads(json.dumps(doc))


@pytest.fixture
def figures(monkeypatch):
    """The figures the plots close, kept open to be read."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kept = []
    close = plt.close
    monkeypatch.setattr(plt, "close", lambda fig=None: kept.append(fig))
    yield kept
    for fig in kept:
        close(fig)


def matmul(kernel, m, n, k, median, group="matmul"):
    shape = f"{m}x{n}x{k}"
    return case(f"test_matmul_time[{kernel}-{shape}]", group, median, kernel=kernel, shape=shape,
                flops=2.0 * m * n * k, ceiling="cuBLAS", ceiling_rate=51e12)


def add(kernel, nbytes, median, ceiling_rate, ceiling="device copy", **info):
    return case(f"test_add_time[{kernel}-{nbytes}]", "add", median, kernel=kernel, bytes=nbytes, ceiling=ceiling,
                ceiling_rate=ceiling_rate, **info)


def roofline_run(gpu=GPU):
    # 12 bytes per addition: 11718750000 bytes in 2**-10 s is 1e12 additions a second, exactly 1 TFLOP/s
    return loaded({
        "datetime": "2026-12-01T08:30:00+00:00",
        "machine_info": {"gpu": gpu},
        "benchmarks": [
            # a host-copy pipeline first: it has no place on a DRAM roofline, and the cases after it still do
            add("vector_add_streams", 120e6, 1.7e-3, 76e9, ceiling="overlap bound, 16 chunk(s)", chunks=16),
            add("host_routine", 64e6, 1e-3, None, ceiling=None),
            matmul("blocked", 4096, 2048, 1024, 2 * 4096 * 2048 * 1024 / 55e12),  # 55 TFLOP/s
            matmul("cublas", 4096, 2048, 1024, 2 * 4096 * 2048 * 1024 / 50e12),  # 50 TFLOP/s
            matmul("warptile", 1024, 512, 256, 2 * 1024 * 512 * 256 / 20e12),  # 20 TFLOP/s, the smaller size
            matmul("warptile", 4096, 2048, 1024, 2 * 4096 * 2048 * 1024 / 52e12),  # 52 TFLOP/s
            add("vec4", 11718750000, 2**-10, 4e12),
            add("vec4", 11718750000 / 2, 2**-10, 3e12),
        ],
    })


def intensity(m, n, k):
    """FLOP per byte of a matmul that reads A (m·k) and B (k·n) and writes C (m·n) once, 4-byte floats."""
    return 2 * m * n * k / (4 * (m * k + k * n + m * n))


def test_the_roofline_places_each_matmul_at_its_intensity_and_each_add_at_one_flop_per_12_bytes(figures, tmp_path):
    plot_roofline(roofline_run(), tmp_path / "r.png")
    ax = figures[0].axes[0]
    points = [tuple(c.get_offsets()[0]) for c in ax.collections]
    assert [c.get_sizes().tolist() for c in ax.collections] == [[12]] * 6
    big, small = intensity(4096, 2048, 1024), intensity(1024, 512, 256)
    assert points == [pytest.approx(p, rel=1e-12) for p in [
        (big, 55.0), (big, 50.0), (small, 20.0), (big, 52.0), (1 / 12, 1.0), (1 / 12, 0.5)]]
    assert points[4] == (1 / 12, 1.0)  # exactly: the add's bytes a second over 12 bytes per addition, in TFLOP/s


def test_a_matmul_record_without_its_shape_is_left_off_the_roofline_and_the_rest_is_drawn(figures, tmp_path):
    run = roofline_run()
    shapeless = case("test_matmul_time[odd]", "matmul", 1e-3, kernel="odd", flops=2e9, ceiling="cuBLAS",
                     ceiling_rate=51e12)
    plot_roofline(loaded({**run, "benchmarks": [shapeless, *run["benchmarks"]]}), tmp_path / "r.png")
    ax = figures[0].axes[0]
    assert len(ax.collections) == 6 and "odd" not in [t.get_text() for t in ax.texts]


def test_the_roofline_labels_only_the_largest_size_of_each_kernel(figures, tmp_path):
    plot_roofline(roofline_run(), tmp_path / "r.png")
    ax = figures[0].axes[0]
    big = intensity(4096, 2048, 1024)
    labels = [(t.get_text(), pytest.approx(t.xy, rel=1e-12)) for t in ax.texts]
    assert labels == [("blocked", (big, 55.0)), ("cublas", (big, 50.0)), ("warptile", (big, 52.0)),
                      ("vec4", (1 / 12, 1.0))]
    for text in ax.texts:  # beside its point, in small type
        assert text.xyann == (6, 0) and text.anncoords == "offset points"
        assert text.get_fontsize() == 6 and text.get_va() == "center"


def test_the_roofline_draws_cublas_own_rate_even_where_other_kernels_are_faster(figures, tmp_path):
    plot_roofline(roofline_run(), tmp_path / "r.png")
    ax = figures[0].axes[0]
    (line,) = [line for line in ax.lines if line.get_label().startswith("cuBLAS")]
    assert line.get_label() == "cuBLAS SGEMM 50.0 TFLOP/s (measured)"
    assert line.get_ydata() == [pytest.approx(50.0, rel=1e-12)] * 2
    assert line.get_linewidth() == 1


def test_the_roof_rises_with_the_fastest_device_copy_up_to_the_datasheet_peak(figures, tmp_path):
    plot_roofline(roofline_run(), tmp_path / "r.png")
    ax = figures[0].axes[0]
    (roof,) = [line for line in ax.lines if line.get_label().startswith("measured copy")]
    assert roof.get_label() == "measured copy 4.00 TB/s, datasheet FP32 peak"
    xs = [2.0**i for i in range(-5, 12)]
    assert list(roof.get_xdata()) == xs
    # 4 TB/s reach 4 FLOP per byte-second: the roof is 4x TFLOP/s until the datasheet's 66.9 TFLOP/s
    assert list(roof.get_ydata()) == [min(4 * x, H200_PEAK_TFLOPS) for x in xs]
    assert roof.get_ydata()[-1] == H200_PEAK_TFLOPS and roof.get_ydata()[8] == 32.0
    assert roof.get_linewidth() == 1 and roof.get_linestyle() == "-" and roof.get_color() == "k"


@pytest.mark.parametrize("gpu", [{"name": "NVIDIA H200", "compute_capability": "9.0", "sm_clock_max_mhz": 1980},
                                 {}], ids=["without an SM count", "without GPU facts"])
def test_the_roof_has_no_peak_where_the_gpus_peak_is_unknown(figures, tmp_path, gpu):
    plot_roofline(roofline_run(gpu), tmp_path / "r.png")
    ax = figures[0].axes[0]
    (roof,) = [line for line in ax.lines if line.get_label().startswith("measured copy")]
    assert list(roof.get_ydata()) == [4 * 2.0**i for i in range(-5, 12)]


def test_the_roofline_is_log_log_titled_with_the_gpu_and_the_runs_day(figures, tmp_path):
    plot_roofline(roofline_run(), tmp_path / "r.png")
    ax = figures[0].axes[0]
    assert ax.get_title() == ("NVIDIA H200: kernels of the suite (2026-12-01); matmul at every size, the largest "
                              "labelled")
    assert ax.title.get_fontsize() == 9
    assert ax.get_xscale() == "log" and ax.xaxis.get_transform().base == 2
    assert ax.get_yscale() == "log" and ax.yaxis.get_transform().base == 10
    assert ax.get_xlabel() == "arithmetic intensity (FLOP per byte of least DRAM traffic)"
    assert ax.get_ylabel() == "TFLOP/s"
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["measured copy 4.00 TB/s, datasheet FP32 peak",
                                                          "cuBLAS SGEMM 50.0 TFLOP/s (measured)"]
    assert {t.get_fontsize() for t in legend.get_texts()} == {7}
    for axis in (ax.xaxis, ax.yaxis):  # major and minor grid lines, thin
        for ticks in (axis.get_major_ticks(), axis.get_minor_ticks()):
            for tick in ticks:
                assert tick.gridline.get_visible() and tick.gridline.get_linewidth() == 0.3
    assert ax.get_xgridlines() and ax.get_ygridlines()


def test_the_performance_table_leaves_out_wall_clock_cases_and_cases_without_work():
    run = roofline_run()
    run["benchmarks"] += loaded([
        add("host_routine_timed", 64e6, 1e-3, None, ceiling=None, timer="wall clock"),
        case("test_launch_time[empty]", "launch", 3e-6, kernel="empty", timer="cupti concurrent kernel"),
    ])
    rows = performance_table(run).splitlines()[2:]
    assert [row.split("|")[1].strip() for row in rows] == [
        "vector_add_streams (chunks 16)", "host_routine", "blocked", "cublas", "warptile", "warptile", "vec4", "vec4"]
    assert rows[1] == "| host_routine |  | 1.00 ms | 64 GB/s |  |  |"


def test_the_plots_make_the_folders_they_are_written_to(tmp_path):
    plot_roofline(roofline_run(), tmp_path / "a" / "b" / "r.png")
    plot_trend([roofline_run()], tmp_path / "c" / "d" / "t.png")
    assert (tmp_path / "a" / "b" / "r.png").exists() and (tmp_path / "c" / "d" / "t.png").exists()


def trend_runs():
    def run(when, scale):
        return loaded({"datetime": when, "machine_info": {"gpu": GPU}, "benchmarks": [
            case("test_add_time[8192-vec[4]]", "add", 2e-3 * scale, kernel="vec4", timer="cupti kernel"),
            case("test_add_time[scalar]", "add", 4e-3 * scale, kernel="scalar", timer="cupti kernel"),
            case("test_launch", None, 5e-6 * scale, timer="cupti kernel"),
        ]})

    # stored out of order: each line is drawn oldest first
    return [run("2026-11-29T12:00:00+00:00", 1.25), run("2026-11-28T12:00:00+00:00", 1.0),
            run("2026-11-30T12:00:00+00:00", 1.5)]


def test_a_trend_keeps_every_run_timed_by_the_same_timer_and_groups_the_ungrouped():
    series = trend_series(trend_runs())
    assert sorted(series) == ["add", "ungrouped"]
    points = series["add"]["test_add_time[scalar]"]
    assert [(when.day, median) for when, median in points] == [(29, 5e-3), (28, 4e-3), (30, 6e-3)]
    assert [when.day for when, _ in series["ungrouped"]["test_launch"]] == [29, 28, 30]


def test_the_trend_draws_a_panel_per_group_a_line_per_case_in_milliseconds(figures, tmp_path):
    from datetime import UTC, datetime

    cases = plot_trend(trend_runs(), tmp_path / "t.png")
    assert cases == 3
    (fig,) = figures
    assert len(fig.axes) == 2
    add_panel, ungrouped = fig.axes
    days = [datetime(2026, 11, day, 12, tzinfo=UTC) for day in (28, 29, 30)]
    # a line per case, named by its parameters, sorted: a parameter that ends in "]" keeps it
    assert [line.get_label() for line in add_panel.lines] == ["8192-vec[4]", "scalar"]
    vec, scalar = add_panel.lines
    assert list(scalar.get_xdata()) == days  # oldest first, whatever the order the runs were given in
    assert list(scalar.get_ydata()) == pytest.approx([4.0, 5.0, 6.0], rel=1e-12)
    assert list(vec.get_ydata()) == pytest.approx([2.0, 2.5, 3.0], rel=1e-12)
    (launch,) = ungrouped.lines
    assert launch.get_label() == "test_launch" and list(launch.get_ydata()) == pytest.approx([5e-3, 6.25e-3, 7.5e-3])
    for line in add_panel.lines + ungrouped.lines:
        assert line.get_marker() == "o" and line.get_markersize() == 3 and line.get_linewidth() == 1


def test_each_trend_panel_is_titled_by_its_group_on_a_log_scale_with_a_small_legend(figures, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warns where a call contradicts itself (a grid off with line widths)
        plot_trend(trend_runs(), tmp_path / "t.png")
    for ax, group in zip(figures[0].axes, ["add", "ungrouped"], strict=True):
        assert ax.get_title() == group and ax.title.get_fontsize() == 9
        assert ax.get_ylabel() == "median, ms" and ax.get_yscale() == "log"
        legend = ax.get_legend()
        assert {t.get_fontsize() for t in legend.get_texts()} == {5} and legend._ncols == 3
        gridlines = ax.get_xgridlines() + ax.get_ygridlines()
        assert gridlines and all(line.get_visible() and line.get_linewidth() == 0.3 for line in gridlines)


# ---- the whole table and everything each plot draws, compared with their reviewed snapshots ---------------------
# (tests/report/__snapshots__/test_plots.ambr; `--snapshot-update` rewrites it): what the module computes and hands
# to matplotlib, read back from the figures, not the PNG's bytes (those change with matplotlib's version)


def rounded(value):
    """A number to 12 significant digits (what the plot means, not the last bit of its arithmetic); lists and
    tuples of them alike."""
    if isinstance(value, (list, tuple)):
        return [rounded(one) for one in value]
    return float(f"{float(value):.12g}")


@pytest.fixture
def drawn(figures, monkeypatch):
    """The figures the plots draw, kept open, with where and at what resolution each was to be saved (nothing is
    rendered into a PNG: the tests above check the files)."""
    import matplotlib.figure

    saved = []
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig",
                        lambda fig, path, **kwargs: saved.append((fig, Path(path).name, kwargs)))
    return figures, saved


def legend_of(ax) -> dict:
    legend = ax.get_legend()
    return {"texts": [t.get_text() for t in legend.get_texts()],
            "fontsizes": sorted({t.get_fontsize() for t in legend.get_texts()}), "columns": legend._ncols,
            "loc": legend._loc}


def test_the_performance_table_of_a_run_is_its_reviewed_snapshot(snapshot):
    run = loaded(recorded())
    run["benchmarks"] += loaded([
        add("host_routine_timed", 64e6, 1e-3, None, ceiling=None, timer="wall clock"),
        case("test_launch_time[empty]", "launch", 3e-6, kernel="empty", timer="cupti concurrent kernel"),
    ])
    assert performance_table(run) == snapshot


def test_what_the_roofline_draws_is_its_reviewed_snapshot(drawn, tmp_path, snapshot):
    figures, saved = drawn
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warns where a call contradicts itself (a grid off with line widths)
        plot_roofline(roofline_run(), tmp_path / "plots" / "r.png")
    (fig,) = figures
    (ax,) = fig.axes
    assert saved == [(fig, "r.png", {"dpi": 120})] and (tmp_path / "plots").is_dir()
    assert {
        "size in inches": rounded(list(fig.get_size_inches())),
        "title": (ax.get_title(), ax.title.get_fontsize()),
        "x": (ax.get_xlabel(), ax.get_xscale(), ax.xaxis.get_transform().base),
        "y": (ax.get_ylabel(), ax.get_yscale(), ax.yaxis.get_transform().base),
        "points": [(rounded(list(c.get_offsets()[0])), c.get_sizes().tolist()) for c in ax.collections],
        "labels": [(t.get_text(), rounded(t.xy), t.xyann, t.anncoords, t.get_fontsize(), t.get_va())
                   for t in ax.texts],
        "lines": [(line.get_label(), rounded(list(line.get_xdata())), rounded(list(line.get_ydata())),
                   line.get_linestyle(), line.get_linewidth(), line.get_color()) for line in ax.lines],
        "legend": legend_of(ax),
    } == snapshot


def test_what_the_trend_draws_is_its_reviewed_snapshot(drawn, tmp_path, snapshot):
    figures, saved = drawn
    # an older run of the adds timed by another timer (left out), and a newer run of one more group, sorted
    # between the others
    older = loaded({"datetime": "2026-11-27T12:00:00+00:00", "machine_info": {"gpu": GPU}, "benchmarks": [
        case("test_add_time[8192-vec[4]]", "add", 1e-3, kernel="vec4", timer="cuda events"),
        case("test_add_time[scalar]", "add", 1e-3, kernel="scalar", timer="cuda events")]})
    newer = loaded({"datetime": "2026-11-30T18:00:00+00:00", "machine_info": {"gpu": GPU}, "benchmarks": [
        case("test_matmul_time[cublas-4096]", "matmul 4096", 2.7e-3, kernel="cublas", timer="cupti kernel")]})
    cases = plot_trend([older, *trend_runs(), newer], tmp_path / "plots" / "t.png")
    (fig,) = figures
    assert saved == [(fig, "t.png", {"dpi": 100})] and (tmp_path / "plots").is_dir()
    assert cases == 4
    assert {
        "size in inches": rounded(list(fig.get_size_inches())),
        "panels": [{
            "title": (ax.get_title(), ax.title.get_fontsize()), "y": (ax.get_ylabel(), ax.get_yscale()),
            "lines": [(line.get_label(), [when.isoformat() for when in line.get_xdata()],
                       rounded(list(line.get_ydata())), line.get_marker(), line.get_markersize(),
                       line.get_linewidth()) for line in ax.lines],
            "legend": legend_of(ax),
        } for ax in fig.axes],
    } == snapshot
