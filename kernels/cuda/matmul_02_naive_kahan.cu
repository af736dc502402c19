// Step 2 (the matmul-optimisation tutorial's first version): the naive kernel
// with Kahan summation, which keeps the error near one ulp however long K is,
// at four flops a term.
#include "common.cuh"

extern "C" __global__ void matmul_naive_kahan(MATMUL_PARAMS) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;
    float sum = 0.0f, comp = 0.0f;
    for (int k = 0; k < K; ++k) kahan_add(sum, comp, A[row * lda + k], B[k * ldb + col]);
    C[row * ldc + col] = sum;
}
