"""Tables and figures from stored baselines: the README's performance table,
its roofline plot, and the trend of every saved run of one GPU model.

Only recorded figures are used: rates and ceilings come from each case's
extra_info, written by the run that measured them.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from .ceilings import datasheet_fp32_flops_per_s, datasheet_memory_bytes_per_s
from .verdict import format_duration

FLOAT_BYTES = 4


def _cases(doc: dict, test: str) -> list[dict]:
    return [b for b in doc["benchmarks"] if b["name"].startswith(test + "[")]


def _fp32_peak(doc: dict) -> float | None:
    """The datasheet FP32 rate of the GPU a baseline was recorded on (None where unknown)."""
    gpu = doc.get("machine_info", {}).get("gpu", {})
    return datasheet_fp32_flops_per_s(gpu.get("compute_capability", "0.0"), gpu.get("multiprocessors", 0),
                                      gpu.get("sm_clock_max_mhz"))


def performance_table(doc: dict) -> str:
    """Markdown: kernel, size, median, rate, % of the ceiling measured in the run, % of datasheet."""
    gpu = doc.get("machine_info", {}).get("gpu", {})
    fp32 = _fp32_peak(doc)
    hbm = datasheet_memory_bytes_per_s(gpu.get("memory_clock_max_mhz"), gpu.get("memory_bus_width_bits"))
    lines = ["| kernel | size | median | rate | % of measured ceiling | % of datasheet peak |",
             "| --- | --- | --- | --- | --- | --- |"]
    for test in ("test_matmul_time", "test_add_time", "test_vector_add_streams_time"):
        for b in _cases(doc, test):
            info, median = b["extra_info"], b["stats"]["median"]
            if "tflops" in info:
                rate, peak = f"{info['tflops']:.2f} TFLOP/s", fp32 and info["flops"] / median / fp32
            else:  # the streams pipeline moves host memory: no DRAM datasheet figure applies
                rate, peak = f"{info['gbps']:.0f} GB/s", hbm and test == "test_add_time" and info["bytes"] / median / hbm
            label = info.get("kernel") or f"vector_add_streams, {info.get('chunks')} chunk(s)"
            ceiling = f"{100 * info['fraction_of_ceiling']:.1f}% of {info['ceiling']}" if "ceiling" in info else ""
            datasheet = f"{100 * peak:.1f}%" if peak else ""
            lines.append(f"| {label} | {info.get('shape', '4 x 2.5M floats')} | {format_duration(median)} | {rate} "
                         f"| {ceiling} | {datasheet} |")
    return "\n".join(lines)


def plot_roofline(doc: dict, path: Path) -> None:
    """Achieved rate against arithmetic intensity (FLOP per byte of the least DRAM traffic)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    gpu = doc.get("machine_info", {}).get("gpu", {})
    fig, ax = plt.subplots(figsize=(8, 5.5))
    copy_rates, cublas = [], []
    for b in _cases(doc, "test_add_time"):
        info = b["extra_info"]
        copy_rates.append(info["ceiling_rate"])
        rate = info["bytes"] / b["stats"]["median"] / 12 / 1e12  # one add per 12 bytes
        ax.scatter(1 / 12, rate, marker="s", s=12)
        if info["shape"] in ("8192x8192", str(8192 * 8192)):
            ax.annotate(info["kernel"], (1 / 12, rate), xytext=(6, 0), textcoords="offset points", fontsize=6,
                        va="center")
    for b in _cases(doc, "test_matmul_time"):
        info = b["extra_info"]
        n = int(info["shape"].split("x")[0])
        intensity = 2 * n**3 / (3 * n * n * FLOAT_BYTES)
        ax.scatter(intensity, info["tflops"], s=12)
        if n == 8192:  # label the largest size only; smaller sizes sit left of it
            ax.annotate(info["kernel"], (intensity, info["tflops"]), xytext=(6, 0), textcoords="offset points",
                        fontsize=6, va="center")
        if info["kernel"] == "cublas":
            cublas.append(info["tflops"])
    peak = _fp32_peak(doc)
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
                 "matmul at n = 1000, 1024, 4096, 8192 (labelled)", fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(True, which="both", lw=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_trend(docs: list[dict], path: Path) -> int:
    """Median time of every case over the saved runs, one panel per group; returns the case count."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series: dict[str, dict[str, list[tuple[datetime, float]]]] = {}
    for doc in docs:
        when = datetime.fromisoformat(doc["datetime"])
        for b in doc["benchmarks"]:
            group = b.get("group") or "ungrouped"
            series.setdefault(group, {}).setdefault(b["name"], []).append((when, b["stats"]["median"]))
    groups = sorted(series)
    fig, axes = plt.subplots(len(groups), 1, figsize=(9, 2.6 * len(groups)), squeeze=False)
    for ax, group in zip(axes[:, 0], groups, strict=True):
        for name, points in sorted(series[group].items()):
            points.sort()
            ax.plot([p[0] for p in points], [p[1] * 1e3 for p in points], marker="o", ms=3, lw=1,
                    label=name.split("[", 1)[-1].rstrip("]"))
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
