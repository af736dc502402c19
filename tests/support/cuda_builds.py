"""Every build of a .cu file the suite makes (source, defines), for the compile tests (tests/kernels/) and the
slowdown plugin's spin injection (tests/plugins/)."""

from kernels import MATMUL_KERNELS, NEGATIVE_CONTROL
from kernels.compile import cuda_sources


def builds():
    """(source, defines) for every build the suite makes: each kernel's own defines,
    both ALIGNED variants where it has them, and every other .cu file plainly."""
    seen = []
    for kernel in [*MATMUL_KERNELS.values(), NEGATIVE_CONTROL]:
        if kernel.source is None:
            continue
        variants = [(("ALIGNED", 0),), (("ALIGNED", 1),)] if kernel.vectorized else [()]
        for extra in variants:
            build = (kernel.source, kernel.defines + extra)
            if build not in seen:
                seen.append(build)
    covered = {source for source, _ in seen}
    seen += [(path.name, ()) for path in cuda_sources() if path.name not in covered]
    return seen


BUILDS = builds()


def build_id(build):
    source, defines = build
    return source + "".join(f"-{k}={v}" for k, v in defines)
