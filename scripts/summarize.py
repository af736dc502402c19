"""Short tables from a run's outputs: the error table and the performance table.

    python3 scripts/summarize.py --errors errors.jsonl --bench perf.json

--errors reads the JSON lines the correctness suite writes when
KERNEL_SUITE_ERROR_LOG is set; --bench reads a pytest-benchmark JSON file
(--benchmark-json, or a baseline file).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def error_table(path: Path, shapes=("1000x1000x1000", "4096x4096x4096")) -> str:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r["shape"] in shapes]
    lines = ["| kernel | n | input | max error | avg error |", "| --- | --- | --- | --- | --- |"]
    for r in sorted(rows, key=lambda r: (r["shape"], r["input"], r["kernel"])):
        lines.append(f"| {r['kernel']} | {r['shape'].split('x')[0]} | {r['input']} "
                     f"| {r['max_error']:.2e} | {r['avg_error']:.2e} |")
    return "\n".join(lines)


def bench_table(path: Path) -> str:
    doc = json.loads(path.read_text())
    lines = ["| case | median | rsd | samples | rate | of ceiling | of datasheet | verdict |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for b in doc["benchmarks"]:
        info = b.get("extra_info", {})
        median = b["stats"]["median"]
        rate = (f"{info['tflops']:.2f} TFLOP/s" if "tflops" in info
                else f"{info['gbps']:.0f} GB/s" if "gbps" in info else "")
        ceiling = (f"{100 * info['fraction_of_ceiling']:.1f}% {info.get('ceiling', '')}"
                   if info.get("fraction_of_ceiling") is not None else "")
        datasheet = (f"{100 * info['fraction_of_datasheet']:.1f}%"
                     if info.get("fraction_of_datasheet") is not None else "")
        extra = f" (kernel {info['kernel_median_s'] * 1e3:.3f} ms)" if "kernel_median_s" in info else ""
        lines.append(f"| {b['name']} | {median * 1e3:.4f} ms{extra} | {100 * info.get('rsd', 0):.2f}% "
                     f"| {b['stats']['rounds']} | {rate} | {ceiling} | {datasheet} | {info.get('verdict', '')} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--errors", type=Path)
    parser.add_argument("--bench", type=Path, action="append", default=[])
    args = parser.parse_args()
    if args.errors and args.errors.exists():
        print(error_table(args.errors))
        print()
    for bench in args.bench:
        if bench.exists():
            print(bench_table(bench))
            print()


if __name__ == "__main__":
    main()
