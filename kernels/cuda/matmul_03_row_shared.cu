// Step 3 (seed 000, "the first improvement"): one block per row of C. The
// block first copies that row of A into dynamic shared memory (K floats),
// then each thread walks columns j = tid, tid + blockDim.x, ... with Kahan
// summation. Reads of B are coalesced across the block (neighbouring threads,
// neighbouring columns). The same kernel serves the pitched variant (seed
// 000, second step): only lda/ldb/ldc change.
#include "common.cuh"

extern "C" __global__ void matmul_row_shared(MATMUL_PARAMS) {
    extern __shared__ float a_row[];
    const int row = blockIdx.x;
    for (int k = threadIdx.x; k < K; k += blockDim.x) a_row[k] = A[(size_t)row * lda + k];
    __syncthreads();
    for (int col = threadIdx.x; col < N; col += blockDim.x) {
        float sum = 0.0f, comp = 0.0f;
        for (int k = 0; k < K; ++k) kahan_add(sum, comp, a_row[k], B[(size_t)k * ldb + col]);
        C[(size_t)row * ldc + col] = sum;
    }
}
