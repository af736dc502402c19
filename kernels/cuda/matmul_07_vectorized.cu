// Step 7: the 2D block tiling of step 6 with 16-byte accesses. Global loads
// are float4 (one per thread per tile), the A tile is stored transposed
// (a_tile[k][m]) so that a thread's 8 values of A along m are contiguous and
// come back in two 16-byte shared-memory loads, like its 8 values of B.
// Shapes that are no multiple of 4 use the scalar path (ALIGNED=0). The
// sizes come from blocktile_2d() in kernels/registry.py, which also sets the
// launch's block and grid.
#include "common.cuh"
#include "block_tile_sizes.cuh"

#ifndef TN
#error "TN must be given by kernels/registry.py"
#endif
#define THREADS ((BM / TM) * (BN / TN))
static_assert(BM * BK / 4 == THREADS && BK * BN / 4 == THREADS, "each thread loads one float4 of each tile");
static_assert(BM % TM == 0 && BN % TN == 0 && TM % 4 == 0 && TN % 4 == 0,
              "the threads' sub-tiles cover the tile in float4s");

extern "C" __global__ void __launch_bounds__(THREADS)
matmul_vectorized(MATMUL_PARAMS) {
    __shared__ __align__(16) float a_tile[BK][BM];
    __shared__ __align__(16) float b_tile[BK][BN];
    const int tid = threadIdx.x;
    const int block_row = blockIdx.y * BM, block_col = blockIdx.x * BN;
    const int thread_row = (tid / (BN / TN)) * TM;
    const int thread_col = (tid % (BN / TN)) * TN;
    // one float4 of each tile per thread
    const int a_r = tid / (BK / 4), a_c = (tid % (BK / 4)) * 4;
    const int b_r = tid / (BN / 4), b_c = (tid % (BN / 4)) * 4;

    float acc[TM][TN] = {{0.0f}};
    float a_frag[TM], b_frag[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
        const float4 a = load4(A, lda, block_row + a_r, k0 + a_c, M, K);
        a_tile[a_c + 0][a_r] = a.x;
        a_tile[a_c + 1][a_r] = a.y;
        a_tile[a_c + 2][a_r] = a.z;
        a_tile[a_c + 3][a_r] = a.w;
        *reinterpret_cast<float4 *>(&b_tile[b_r][b_c]) =
            load4(B, ldb, k0 + b_r, block_col + b_c, K, N);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int i = 0; i < TM; i += 4) {
                const float4 v = *reinterpret_cast<const float4 *>(&a_tile[k][thread_row + i]);
                a_frag[i] = v.x, a_frag[i + 1] = v.y, a_frag[i + 2] = v.z, a_frag[i + 3] = v.w;
            }
#pragma unroll
            for (int j = 0; j < TN; j += 4) {
                const float4 v = *reinterpret_cast<const float4 *>(&b_tile[k][thread_col + j]);
                b_frag[j] = v.x, b_frag[j + 1] = v.y, b_frag[j + 2] = v.z, b_frag[j + 3] = v.w;
            }
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += a_frag[i] * b_frag[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; j += 4)
            store4(C, ldc, block_row + thread_row + i, block_col + thread_col + j, M, N,
                   make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]));
}
