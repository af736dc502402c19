"""The kernel suite's pytest set-up: the plugin in harness/plugin/__init__.py does the work.

It adds the options (--profile, --regression-threshold, --benchmark-report,
--require-gpu, --no-memory-pool, --compare-ref, --compare-ref-all,
--accept-slowdown), skips GPU tests without a GPU, keys stored runs by the GPU
model, judges every timed case against its baseline or a git ref, and provides
the fixtures the suites use: gpu, gpu_timer, gpu_bench, ceilings, profile.
"""

pytest_plugins = ["harness.plugin"]
