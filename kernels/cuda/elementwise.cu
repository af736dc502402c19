// Elementwise adds (the cuda-notes-ch5 tutorial's examples 1 and 2) and their
// 16-byte versions. n and the row/column counts are checked on the host:
// every index fits int.
//
// Each function is launched as its entry in kernels/registry.py says: a 2D
// kernel takes (a, b, c, rows, cols / elements per thread) on a 2D grid over
// (columns, rows); any other takes (a, b, c, n) on a 1D grid over the flat
// array and adds the last n % (elements per thread) itself.

// cuda-notes-ch5, example 1: 16 x 16 thread blocks over a 2D grid, one
// element per thread.
extern "C" __global__ void matrix_add_2d(const float *__restrict__ a,
                                         const float *__restrict__ b,
                                         float *__restrict__ c, int rows, int cols) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows && col < cols) {
        const int idx = row * cols + col;
        c[idx] = a[idx] + b[idx];
    }
}

// The same 2D mapping with four columns per thread as one float4: a warp
// moves 512 contiguous bytes per access instead of 2 x 64. Needs cols % 4 == 0
// (checked by the launcher; other shapes take matrix_add_2d).
extern "C" __global__ void matrix_add_2d_vec4(const float4 *__restrict__ a,
                                              const float4 *__restrict__ b,
                                              float4 *__restrict__ c, int rows,
                                              int cols4) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows && col < cols4) {
        const int idx = row * cols4 + col;
        const float4 x = a[idx], y = b[idx];
        c[idx] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
}

// cuda-notes-ch5, example 2's kernel: one element per thread.
extern "C" __global__ void vector_add(const float *__restrict__ a,
                                      const float *__restrict__ b,
                                      float *__restrict__ c, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

// Four elements per thread as float4, the tail (n % 4) by the first threads.
extern "C" __global__ void vector_add_vec4(const float *__restrict__ a,
                                           const float *__restrict__ b,
                                           float *__restrict__ c, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int n4 = n / 4;
    if (i < n4) {
        const float4 x = reinterpret_cast<const float4 *>(a)[i];
        const float4 y = reinterpret_cast<const float4 *>(b)[i];
        reinterpret_cast<float4 *>(c)[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
    const int tail = 4 * n4 + i;
    if (i < 4 && tail < n) c[tail] = a[tail] + b[tail];
}
