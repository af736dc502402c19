// c = a + b over float4s, with `extra` dependent FMAs per thread whose result is never stored:
// arithmetic hidden under the add's memory time, so its energy rises while its time does not
// (maintainers/support/energy_variant.py). extra = 0 is the plain add of the same code.
extern "C" __global__ void busy_add(const float4 *__restrict__ a, const float4 *__restrict__ b,
                                    float4 *__restrict__ c, long long n4, int extra) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n4) return;
    float4 x = a[i], y = b[i];
    float acc = x.x;
    for (int k = 0; k < extra; ++k) acc = fmaf(acc, 0.999f, 1e-3f);  // converges to 1, never to 1e30
    float4 z = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    if (acc == 1e30f) z.x = acc;  // never true: it keeps the FMAs in the code
    c[i] = z;
}
