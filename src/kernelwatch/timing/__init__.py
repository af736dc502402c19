"""The instrument: how a launch is timed, how long sampling goes on, and on which GPU.

Owns the timer (timer.py: held stream, L2 flush, CUPTI spans or CUDA events),
the profiles and the stop rule (profile.py), the CUPTI recorder (cupti.py) and
the activity records' arithmetic (spans.py), the hold and flush kernels
(kernels.cu), the GPU's identity and clocks (gpu.py), a session's instruments together (measuring.py) and the ceilings measured
in the same run (ceilings.py). May import kernelwatch.units only: the timer is a
leaf, as triton's do_bench is.
"""
