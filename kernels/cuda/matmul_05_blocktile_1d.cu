// Step 5: 1D block tiling in registers. A block of BM*BN/TM threads computes
// a BM x BN tile of C, BK values of k per step; each thread owns TM
// consecutive rows of one column, so every value of B read from shared memory
// feeds TM fused multiply-adds held in registers. Tiles are zero-filled at the
// edges: any M, N, K works. The sizes come from blocktile_1d() in
// kernels/registry.py, which also sets the launch's block and grid.
#include "common.cuh"
#include "block_tile_sizes.cuh"

#define THREADS (BM * BN / TM)
static_assert(BM * BK == THREADS && BK * BN == THREADS, "each thread loads one element of each tile");
static_assert(BM % TM == 0, "a thread's TM rows lie in one tile");

extern "C" __global__ void __launch_bounds__(THREADS)
matmul_blocktile_1d(MATMUL_PARAMS) {
    __shared__ float a_tile[BM][BK];
    __shared__ float b_tile[BK][BN];
    const int tid = threadIdx.x;
    const int block_row = blockIdx.y * BM, block_col = blockIdx.x * BN;
    const int thread_col = tid % BN;        // column of C this thread owns
    const int thread_row = (tid / BN) * TM; // first of its TM rows
    // each thread loads one element of each tile
    const int a_r = tid / BK, a_c = tid % BK;
    const int b_r = tid / BN, b_c = tid % BN;

    float acc[TM] = {0.0f};
    for (int k0 = 0; k0 < K; k0 += BK) {
        const int ar = block_row + a_r, ac = k0 + a_c;
        const int br = k0 + b_r, bc = block_col + b_c;
        a_tile[a_r][a_c] = (ar < M && ac < K) ? A[ar * lda + ac] : 0.0f;
        b_tile[b_r][b_c] = (br < K && bc < N) ? B[br * ldb + bc] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const float b = b_tile[k][thread_col];
#pragma unroll
            for (int i = 0; i < TM; ++i) acc[i] += a_tile[thread_row + i][k] * b;
        }
        __syncthreads();
    }
    const int col = block_col + thread_col;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = block_row + thread_row + i;
        if (row < M && col < N) C[row * ldc + col] = acc[i];
    }
}
