// Step 6: 2D block tiling in registers. (BM/TM) x (BN/TN) threads compute a
// BM x BN tile of C, each thread a TM x TN sub-tile: per step along k it reads
// TM values of A and TN of B from shared memory into registers and does
// TM x TN fused multiply-adds with them (an outer product): with 8 x 8, 4 FMAs
// per shared-memory load instead of 1 for the 1D kernel. The sizes come from
// blocktile_2d() in kernels/registry.py, which also sets the launch's block
// and grid.
#include "common.cuh"
#include "block_tile_sizes.cuh"

#ifndef TN
#error "TN must be given by kernels/registry.py"
#endif
#define THREADS ((BM / TM) * (BN / TN))
static_assert(BM % TM == 0 && BN % TN == 0, "the threads' sub-tiles cover the tile");

extern "C" __global__ void __launch_bounds__(THREADS)
matmul_blocktile_2d(MATMUL_PARAMS) {
    __shared__ float a_tile[BM][BK];
    __shared__ float b_tile[BK][BN];
    const int tid = threadIdx.x;
    const int block_row = blockIdx.y * BM, block_col = blockIdx.x * BN;
    const int thread_row = (tid / (BN / TN)) * TM;
    const int thread_col = (tid % (BN / TN)) * TN;

    float acc[TM][TN] = {{0.0f}};
    float a_frag[TM], b_frag[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
        // each thread loads (BM * BK) / THREADS floats of A's tile, (BK * BN) / THREADS of B's
#pragma unroll
        for (int i = tid; i < BM * BK; i += THREADS) {
            const int r = i / BK, c = i % BK;
            const int ar = block_row + r, ac = k0 + c;
            a_tile[r][c] = (ar < M && ac < K) ? A[ar * lda + ac] : 0.0f;
        }
#pragma unroll
        for (int i = tid; i < BK * BN; i += THREADS) {
            const int r = i / BN, c = i % BN;
            const int br = k0 + r, bc = block_col + c;
            b_tile[r][c] = (br < K && bc < N) ? B[br * ldb + bc] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int i = 0; i < TM; ++i) a_frag[i] = a_tile[thread_row + i][k];
#pragma unroll
            for (int j = 0; j < TN; ++j) b_frag[j] = b_tile[k][thread_col + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += a_frag[i] * b_frag[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = block_row + thread_row + i;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int col = block_col + thread_col + j;
            if (row < M && col < N) C[row * ldc + col] = acc[i][j];
        }
    }
}
