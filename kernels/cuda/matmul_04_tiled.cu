// Step 4 (the shared-tiling and cuda-notes-ch5 tutorials with TILE=32, the
// matmul-optimisation tutorial's last step with TILE=16): TILE x TILE threads
// stage one TILE x TILE tile of A and one of B in shared memory per step
// along k, zero-filled outside the matrices, so that each element loaded from
// global memory is used TILE times.
#include "common.cuh"

#ifndef TILE
#error "TILE must be given by kernels/registry.py"
#endif

extern "C" __global__ void matmul_tiled(MATMUL_PARAMS) {
    __shared__ float a_tile[TILE][TILE];
    __shared__ float b_tile[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;
    float sum = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        a_tile[ty][tx] = (row < M && k0 + tx < K) ? A[row * lda + k0 + tx] : 0.0f;
        b_tile[ty][tx] = (k0 + ty < K && col < N) ? B[(k0 + ty) * ldb + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) sum += a_tile[ty][k] * b_tile[k][tx];
        __syncthreads();
    }
    if (row < M && col < N) C[row * ldc + col] = sum;
}
