// A deliberately wrong kernel for the test suite's negative control: the
// naive kernel with each input's significand rounded to float16's 11 bits
// (round to nearest even; float16's range is not imitated). Its errors are
// tens of times the float32 kernels', and the correctness checks must reject
// it. Never registered as a kernel of the suite.
#include "common.cuh"

__device__ __forceinline__ float round_to_11_bits(float x) {
    unsigned int u = __float_as_uint(x);
    u += 0x0FFFu + ((u >> 13) & 1u);
    return __uint_as_float(u & ~0x1FFFu);
}

extern "C" __global__ void matmul_float16_inputs(MATMUL_PARAMS) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;
    float sum = 0.0f;
    for (int k = 0; k < K; ++k)
        sum += round_to_11_bits(A[row * lda + k]) * round_to_11_bits(B[k * ldb + col]);
    C[row * ldc + col] = sum;
}
