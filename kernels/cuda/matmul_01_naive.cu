// Step 1 (the shared-tiling and cuda-notes-ch5 tutorials, see TUTORIALS in
// kernels/registry.py): one thread per element of C, operands read straight
// from global memory, plain float32 summation in k order.
#include "common.cuh"

extern "C" __global__ void matmul_naive(MATMUL_PARAMS) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;
    float sum = 0.0f;
    for (int k = 0; k < K; ++k) sum += A[row * lda + k] * B[k * ldb + col];
    C[row * ldc + col] = sum;
}
