"""The one-thread spin kernel that is appended after a case on its stream to slow it down: the slowdown
plugins' (tests/plugins/slowdown.py, tests/plugins/host_kernel_slowdown.py) and what
maintainers/experiments/append_cost.py measures the cost of appending."""

APPEND_SOURCE = r"""
extern "C" __global__ void spin(long long cycles) {
    const long long start = clock64();
    while (clock64() - start < cycles) {
    }
}
"""
