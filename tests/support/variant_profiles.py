"""The static profiles of both sides of a broken variant (maintainers/support/cause_variants.py), for the static and
dynamic cause cards' tests (tests/cause/)."""

from __future__ import annotations

from kernels.compile import BASE_OPTIONS, define_options, load_source
from kernelwatch.cause.static import static_profile
from maintainers.support.cause_variants import original_launch


def original_profile(variant, arch):
    entry = variant.original
    return static_profile(load_source(entry.source), (*BASE_OPTIONS, *define_options(entry.defines)), arch,
                          entry.function, original_launch(variant.kernel), entry.source)


def variant_profile(variant, arch):
    return static_profile(variant.source_text(), variant.build_options(), arch, variant.original.function,
                          variant.launch(), variant.original.source)
