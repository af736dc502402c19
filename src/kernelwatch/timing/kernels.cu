// Kernels of the timer (src/kernelwatch/timing/timer.py), not of the suite: they stay out of
// every timed span (src/kernelwatch/timing/spans.py and phases.py leave them out by name).

// Holds its stream until the host writes a non-zero value to *release (a
// mapped pinned-memory word), so that the launches queued behind it start
// back to back, free of launch latency (nvbench's method). Gives up after
// timeout_ns and reports that in *timed_out, so a lost release never hangs
// the GPU.
extern "C" __global__ void hold_stream(const volatile int *release, long long timeout_ns,
                                       int *timed_out) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    while (*release == 0) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if ((long long)(now - start) > timeout_ns) {
            *timed_out = 1;
            return;
        }
        __nanosleep(1000);
    }
}

// Reads a buffer larger than the L2 cache so that the next sample starts
// with a cold cache. It reads rather than writes: a write-flush leaves dirty
// lines that the timed kernel would pay to evict.
extern "C" __global__ void flush_l2(const float4 *__restrict__ buffer, size_t n4,
                                   float *__restrict__ sink) {
    float acc = 0.0f;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4;
         i += (size_t)gridDim.x * blockDim.x) {
        const float4 v = buffer[i];
        acc += v.x + v.y + v.z + v.w;
    }
    if (acc == 12345.678f) *sink = acc;  // keeps the loads; practically never true
}

// Marks the start of a host routine's wall-clock sample in CUPTI's records (src/kernelwatch/timing/phases.py):
// the routine's kernels and copies after it, up to the next mark, are that sample's.
extern "C" __global__ void mark_sample() {}
