// Step 3 (the matmul-optimisation tutorial's "first improvement"): one block
// per row of C. The block first copies that row of A into dynamic shared
// memory (K floats), then each thread walks columns j = tid, tid + blockDim.x,
// ... with Kahan summation. Reads of B are coalesced across the block
// (neighbouring threads, neighbouring columns). The same kernel serves the
// pitched variant (the tutorial's second step): only lda/ldb/ldc change.
#include "common.cuh"

// The launcher allocates the row rounded up to a multiple of 4 floats, and
// the padding is zeroed: the compiler reads the k-loop's remainder with one
// 16-byte LDS.128 (seen in the SASS), up to 12 bytes past K, and
// compute-sanitizer's memcheck rightly flags that unless the bytes exist.
extern "C" __global__ void matmul_row_shared(MATMUL_PARAMS) {
    extern __shared__ float a_row[];
    const int row = blockIdx.x;
    const int k_padded = (K + 3) & ~3;
    for (int k = threadIdx.x; k < k_padded; k += blockDim.x)
        a_row[k] = k < K ? A[(size_t)row * lda + k] : 0.0f;
    __syncthreads();
    for (int col = threadIdx.x; col < N; col += blockDim.x) {
        float sum = 0.0f, comp = 0.0f;
        for (int k = 0; k < K; ++k) kahan_add(sum, comp, a_row[k], B[(size_t)k * ldb + col]);
        C[(size_t)row * ldc + col] = sum;
    }
}
