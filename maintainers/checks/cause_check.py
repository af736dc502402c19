"""Does the cause card blame what broke? The eight broken variants of maintainers/support/cause_variants.py, carded on a GPU.

    python -m maintainers.checks.cause_check [--size 2048] [--only NAME,...] [--json OUT.json] [--ncu PATH]

For each variant: the static half (both builds for this GPU's architecture) and the dynamic half (both
sides under Nsight Compute: src/kernelwatch/cause/dynamic.py, each side launched by src/kernelwatch/cause/launch.py),
then the full card. Prints a table: the cause the variant is for, the static card's first cause, the
full card's first, and the GPU seconds each card took; the full cards go to --json. Exit 0 when the
full card names the intended cause first for at least 7 of the 8 (issue 30's bar), else 1.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from maintainers.environment import needs, needs_gpu, summary

WANTED = 7


def _grid(variant, size: int) -> tuple[int, int, int]:
    rows, cols = variant_tile(variant)
    return (-(-size // cols), -(-size // rows), 1)


def variant_tile(variant) -> tuple[int, int]:
    defines = dict(variant.defines if variant.defines is not None else variant.original.defines)
    return (defines["TILE"], defines["TILE"]) if "TILE" in defines else variant.original.tile


def _side_command(source_text: str, options, function: str, grid, block, shared: int, size: int, folder: Path,
                  name: str) -> list[str]:
    path = folder / f"{name}.cu"
    path.write_text(source_text)
    return [sys.executable, "-m", "kernelwatch.cause.launch", str(path), function, f"--shape={size}x{size}x{size}",
            f"--grid={','.join(map(str, grid))}", f"--block={','.join(map(str, block))}", f"--shared={shared}",
            *(f"--option={option}" for option in options)]


def check(variant, arch: str, size: int, folder: Path, ncu: str | None) -> dict:
    from kernels.compile import BASE_OPTIONS, define_options, load_source
    from kernelwatch.cause.card import card, merged, static_causes
    from kernelwatch.cause.dynamic import dynamic_causes, figures, profile, stall_shares
    from kernelwatch.cause.static import static_profile
    from maintainers.support.cause_variants import original_launch

    original = variant.original
    base_text, base_options = load_source(original.source), (*BASE_OPTIONS, *define_options(original.defines))
    base_static = static_profile(base_text, base_options, arch, original.function, original_launch(variant.kernel),
                                 original.source)
    head_static = static_profile(variant.source_text(), variant.build_options(), arch, original.function,
                                 variant.launch(), original.source)
    static_ranked = merged(static_causes(base_static, head_static))
    started = time.perf_counter()
    base_grid = (-(-size // original.tile[1]), -(-size // original.tile[0]), 1)
    base_dyn = profile(_side_command(base_text, base_options, original.function, base_grid, original.threads,
                                     original.shared_bytes, size, folder, f"{variant.name}-base"),
                       original.function, ncu=ncu)
    head_dyn = profile(_side_command(variant.source_text(), variant.build_options(), original.function,
                                     _grid(variant, size), variant.block(), variant.dynamic_shared(), size, folder,
                                     f"{variant.name}-head"), original.function, ncu=ncu)
    seconds = time.perf_counter() - started
    causes = [*static_causes(base_static, head_static), *dynamic_causes(base_dyn, head_dyn)]
    full = merged(causes)
    lines = card(f"{variant.name} ({variant.what})", causes, {**base_static.figures(), **figures(base_dyn)},
                 {**head_static.figures(), **figures(head_dyn)})
    return {"variant": variant.name, "cause": variant.cause, "static": variant.static,
            "static_first": static_ranked[0].key if static_ranked else None,
            "full_first": full[0].key if full else None, "seconds": seconds,
            "time_us": [base_dyn.get("gpu__time_duration.sum") * 1e6, head_dyn.get("gpu__time_duration.sum") * 1e6],
            "dropped_metrics": sorted(set(base_dyn.dropped) | set(head_dyn.dropped)),
            "stalls": stall_shares(base_dyn, head_dyn)[:3], "card": lines}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m maintainers.checks.cause_check", description=summary(__doc__))
    parser.add_argument("--size", type=int, default=2048, help="M = N = K of every launch (default 2048)")
    parser.add_argument("--only", help="variant names, comma-separated (default: all eight)")
    parser.add_argument("--json", type=Path, help="write every card here")
    parser.add_argument("--ncu", help="the ncu to run (default: ncu on PATH)")
    args = parser.parse_args(argv)
    if args.size < 64:
        parser.error(f"--size {args.size}: at least 64")
    needs("maintainers.checks.cause_check", "cupy", "elftools")
    needs_gpu("maintainers.checks.cause_check")
    from kernelwatch.ab.identity import arch_of
    from kernelwatch.timing.gpu import gpu_info
    from maintainers.support.cause_variants import VARIANTS

    chosen = [v for v in VARIANTS if not args.only or v.name in args.only.split(",")]
    arch = arch_of(gpu_info().compute_capability)
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        for variant in chosen:
            results.append(check(variant, arch, args.size, Path(scratch), args.ncu))
            row = results[-1]
            print(f"{row['variant']}: {row['time_us'][0]:.1f} -> {row['time_us'][1]:.1f} us; static {row['static_first']},"
                  f" full {row['full_first']} (for {row['cause']}); {row['seconds']:.1f} s", flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    right = sum(row["full_first"] == row["cause"] for row in results)
    print("\n| variant | cause | static first | full first | base µs | head µs | card s |")
    print("|---|---|---|---|---|---|---|")
    for row in results:
        print(f"| {row['variant']} | {row['cause']} | {row['static_first']} | {row['full_first']} | "
              f"{row['time_us'][0]:.1f} | {row['time_us'][1]:.1f} | {row['seconds']:.1f} |")
    print(f"\nfull card right for {right} of {len(results)}; static right for "
          f"{sum(row['static_first'] == row['cause'] for row in results if row['static'])} of "
          f"{sum(row['static'] for row in results)} static ones")
    return 0 if right >= min(WANTED, len(results)) else 1


if __name__ == "__main__":
    sys.exit(main())
