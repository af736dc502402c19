"""Tables and figures from stored runs: the README's performance table, its
roofline plot, and the trend of every saved run of one GPU model.

Only recorded figures are used: every number comes from the cases' records
(src/kernelwatch/verdict/record.py), written by the run that measured them.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from kernelwatch.timing.ceilings import datasheet_fp32_flops_per_s
from kernelwatch.units import format_duration
from kernelwatch.verdict.record import TIMER_WALL, CaseRecord, records_of

FLOAT_BYTES = 4
ADD_BYTES_PER_FLOP = 12  # an elementwise add reads two floats and writes one per addition


def _gpu_records(doc: dict) -> list[CaseRecord]:
    """The GPU-timed cases with work (the host routines' wall-clock figures are left out)."""
    return [r for r in records_of(doc) if r.timer != TIMER_WALL and r.rate is not None]


def _least_matmul_bytes(shape: str) -> float:
    m, n, k = (int(x) for x in shape.split("x"))
    return FLOAT_BYTES * (m * k + k * n + m * n)


def performance_table(doc: dict) -> str:
    """Markdown: kernel, size, median, rate, % of the ceiling measured in the run, % of datasheet."""
    lines = ["| kernel | size | median | rate | % of measured ceiling | % of datasheet peak |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in _gpu_records(doc):
        lines.append(f"| {r.label()} | {r.shape or ''} | {format_duration(r.median_s)} | {r.rate_text()} "
                     f"| {r.ceiling_text()} | {r.datasheet_text()} |")
    return "\n".join(lines)


def plot_roofline(doc: dict, path: Path) -> None:
    """Achieved rate against arithmetic intensity (FLOP per byte of the least DRAM traffic)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    gpu = doc.get("machine_info", {}).get("gpu", {})
    fig, ax = plt.subplots(figsize=(8, 5.5))
    copy_rates, cublas, largest = [], [], {}

    def matmul(r: CaseRecord) -> bool:
        return r.flops is not None and bool(r.shape)

    # matrix products (with their shape) and the elementwise adds against the device copy; the host-copy
    # pipelines are left out: no DRAM roofline applies to them
    records = [r for r in _gpu_records(doc) if matmul(r) or r.ceiling == "device copy"]

    def size(r: CaseRecord) -> float:
        return _least_matmul_bytes(r.shape) if matmul(r) else r.bytes

    for r in records:
        largest[r.kernel] = max(largest.get(r.kernel, 0), size(r))
    for r in records:
        if matmul(r):
            intensity = r.flops / size(r)
            tflops = r.rate
            if r.kernel == "cublas":
                cublas.append(tflops)
        else:
            copy_rates.append(r.ceiling_rate)
            intensity, tflops = 1 / ADD_BYTES_PER_FLOP, r.bytes / r.median_s / ADD_BYTES_PER_FLOP / 1e12
        ax.scatter(intensity, tflops, s=12)
        # label the largest size of each kernel only; smaller sizes sit left of it
        if size(r) == largest[r.kernel]:
            ax.annotate(r.kernel, (intensity, tflops), xytext=(6, 0), textcoords="offset points", fontsize=6,
                        va="center")
    peak = datasheet_fp32_flops_per_s(gpu.get("compute_capability", "0.0"), gpu.get("multiprocessors", 0),
                                      gpu.get("sm_clock_max_mhz"))
    xs = [2**i for i in range(-5, 12)]
    if copy_rates:
        bandwidth = max(copy_rates)
        roof = [min(x * bandwidth / 1e12, (peak or float("inf")) / 1e12) for x in xs]
        ax.plot(xs, roof, "k-", lw=1, label=f"measured copy {bandwidth / 1e12:.2f} TB/s, datasheet FP32 peak")
    if cublas:
        ax.axhline(max(cublas), color="tab:red", ls="--", lw=1, label=f"cuBLAS SGEMM {max(cublas):.1f} TFLOP/s (measured)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP per byte of least DRAM traffic)")
    ax.set_ylabel("TFLOP/s")
    ax.set_title(f"{gpu.get('name', 'GPU')}: kernels of the suite ({doc.get('datetime', '')[:10]}); "
                 "matmul at every size, the largest labelled", fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(True, which="both", lw=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def trend_series(docs: list[dict]) -> dict[str, dict[str, list[tuple[datetime, float]]]]:
    """group -> case -> [(when, median)] over the saved runs (oldest first), each case only from the
    runs that timed it with the timer of its newest run: two timers are two measurements (the held
    events read 2.6-4.2 µs more per sample than CUPTI), and a trend across them would show a step
    that no kernel made."""
    newest_timer: dict[str, str | None] = {}
    points: list[tuple[str, str, datetime, float, str | None]] = []
    for doc in docs:
        when = datetime.fromisoformat(doc["datetime"])
        for b, r in zip(doc["benchmarks"], records_of(doc), strict=True):
            points.append((b.get("group") or "ungrouped", b["name"], when, r.median_s, r.timer))
            newest_timer[b["name"]] = r.timer
    series: dict[str, dict[str, list[tuple[datetime, float]]]] = {}
    for group, name, when, median, timer in points:
        if timer == newest_timer[name]:
            series.setdefault(group, {}).setdefault(name, []).append((when, median))
    return series


def plot_trend(docs: list[dict], path: Path) -> int:
    """Median time of every case over the saved runs timed like its newest (trend_series), one panel
    per group; returns the case count."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = trend_series(docs)
    groups = sorted(series)
    fig, axes = plt.subplots(len(groups), 1, figsize=(9, 2.6 * len(groups)), squeeze=False)
    for ax, group in zip(axes[:, 0], groups, strict=True):
        for name, points in sorted(series[group].items()):
            points.sort()
            ax.plot([p[0] for p in points], [p[1] * 1e3 for p in points], marker="o", ms=3, lw=1,
                    label=name.split("[", 1)[-1].removesuffix("]"))
        ax.set_title(group, fontsize=9)
        ax.set_ylabel("median, ms")
        ax.set_yscale("log")
        ax.legend(fontsize=5, ncol=3)
        ax.grid(True, lw=0.3)
    fig.autofmt_xdate()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return sum(len(v) for v in series.values())
