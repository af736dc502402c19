// Step 8: warp tiling, conflict-free shared memory and double buffering.
//
// The block's BM x BN tile of C is split among its WARPS_M x WARPS_N warps,
// and each warp's tile among its 32 lanes laid out 4 (m) x 8 (n). A lane
// owns RM x RN pieces of 4 x 4 outputs spaced 16 rows and 32 columns apart,
// so that per step along k the warp's 16-byte shared-memory loads hit 4 (A)
// and 8 (B) distinct, contiguous float4s: one wavefront each, no bank
// conflicts, the rest broadcast.
//
// The A tile is stored transposed with each k-row padded by 4 floats: the
// four scalar stores of a thread's float4 then land in different banks for
// the two halves of a warp (row stride 132 or 260 floats = 4 mod 32 banks).
//
// Double buffering: while the block computes on one shared-memory stage,
// each thread has already issued the global loads of the next tile into
// registers; it writes them to the other stage afterwards. One barrier per
// tile suffices: the barrier that ends step t orders step t's reads of a
// stage before step t+1's writes to it.
//
// RM and RN (4-row and 4-column pieces per lane), WARPS_M, WARPS_N, BK and
// MIN_BLOCKS (blocks per SM the register budget must allow) come from
// warptile() in kernels/registry.py, which also sets the launch's block, grid
// and shared memory.
#include "common.cuh"

#ifndef RM
#error "RM must be given by kernels/registry.py"
#endif
#ifndef RN
#error "RN must be given by kernels/registry.py"
#endif
#ifndef WARPS_M
#error "WARPS_M must be given by kernels/registry.py"
#endif
#ifndef WARPS_N
#error "WARPS_N must be given by kernels/registry.py"
#endif
#ifndef BK
#error "BK must be given by kernels/registry.py"
#endif
#ifndef MIN_BLOCKS
#error "MIN_BLOCKS must be given by kernels/registry.py"
#endif
#define WM (16 * RM)  // warp tile rows: 4 lanes x 4 rows x RM
#define WN (32 * RN)  // warp tile columns: 8 lanes x 4 columns x RN
#define BM (WARPS_M * WM)
#define BN (WARPS_N * WN)
#define THREADS (32 * WARPS_M * WARPS_N)
#define A_STRIDE (BM + 4)
#define A_LOADS (BM * BK / 4 / THREADS)  // float4 loads of A per thread per tile
#define B_LOADS (BK * BN / 4 / THREADS)
// Dynamic shared memory, two stages of each tile; the launcher passes
// SHARED_BYTES = 4 * 2 * BK * (A_STRIDE + BN) and opts in past 48 KB.

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
matmul_warptile(MATMUL_PARAMS) {
    extern __shared__ __align__(16) float shared[];
    float(*a_tile)[BK][A_STRIDE] = reinterpret_cast<float(*)[BK][A_STRIDE]>(shared);
    float(*b_tile)[BK][BN] = reinterpret_cast<float(*)[BK][BN]>(shared + 2 * BK * A_STRIDE);
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int block_row = blockIdx.y * BM, block_col = blockIdx.x * BN;
    // first row and column of this lane's outputs inside the block tile
    const int lane_row = (warp / WARPS_N) * WM + (lane / 8) * 4;
    const int lane_col = (warp % WARPS_N) * WN + (lane % 8) * 4;

    float4 a_next[A_LOADS], b_next[B_LOADS];
    auto load_tiles = [&](int k0) {
#pragma unroll
        for (int l = 0; l < A_LOADS; ++l) {
            const int idx = tid + l * THREADS;
            a_next[l] = load4(A, lda, block_row + idx / (BK / 4), k0 + (idx % (BK / 4)) * 4, M, K);
        }
#pragma unroll
        for (int l = 0; l < B_LOADS; ++l) {
            const int idx = tid + l * THREADS;
            b_next[l] = load4(B, ldb, k0 + idx / (BN / 4), block_col + (idx % (BN / 4)) * 4, K, N);
        }
    };
    auto store_tiles = [&](int stage) {
#pragma unroll
        for (int l = 0; l < A_LOADS; ++l) {
            const int idx = tid + l * THREADS;
            const int r = idx / (BK / 4), c = (idx % (BK / 4)) * 4;
            a_tile[stage][c + 0][r] = a_next[l].x;
            a_tile[stage][c + 1][r] = a_next[l].y;
            a_tile[stage][c + 2][r] = a_next[l].z;
            a_tile[stage][c + 3][r] = a_next[l].w;
        }
#pragma unroll
        for (int l = 0; l < B_LOADS; ++l) {
            const int idx = tid + l * THREADS;
            *reinterpret_cast<float4 *>(&b_tile[stage][idx / (BN / 4)][(idx % (BN / 4)) * 4]) =
                b_next[l];
        }
    };

    float acc[4 * RM][4 * RN];
#pragma unroll
    for (int i = 0; i < 4 * RM; ++i)
#pragma unroll
        for (int j = 0; j < 4 * RN; ++j) acc[i][j] = 0.0f;

    load_tiles(0);
    store_tiles(0);
    __syncthreads();
    int stage = 0;
    for (int k0 = 0; k0 < K; k0 += BK) {
        const bool has_next = k0 + BK < K;
        if (has_next) load_tiles(k0 + BK);
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a_frag[4 * RM], b_frag[4 * RN];
#pragma unroll
            for (int p = 0; p < RM; ++p) {
                const float4 v = *reinterpret_cast<const float4 *>(&a_tile[stage][k][lane_row + 16 * p]);
                a_frag[4 * p] = v.x, a_frag[4 * p + 1] = v.y, a_frag[4 * p + 2] = v.z, a_frag[4 * p + 3] = v.w;
            }
#pragma unroll
            for (int q = 0; q < RN; ++q) {
                const float4 v = *reinterpret_cast<const float4 *>(&b_tile[stage][k][lane_col + 32 * q]);
                b_frag[4 * q] = v.x, b_frag[4 * q + 1] = v.y, b_frag[4 * q + 2] = v.z, b_frag[4 * q + 3] = v.w;
            }
#pragma unroll
            for (int i = 0; i < 4 * RM; ++i)
#pragma unroll
                for (int j = 0; j < 4 * RN; ++j) acc[i][j] += a_frag[i] * b_frag[j];
        }
        if (has_next) store_tiles(stage ^ 1);
        __syncthreads();
        stage ^= 1;
    }
#pragma unroll
    for (int p = 0; p < RM; ++p)
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int q = 0; q < RN; ++q) {
                const float *r = &acc[4 * p + i][4 * q];
                store4(C, ldc, block_row + lane_row + 16 * p + i, block_col + lane_col + 32 * q, M, N,
                       make_float4(r[0], r[1], r[2], r[3]));
            }
}
