// Shared conventions for every matrix-multiply kernel in this folder.
//
// All matrices are row-major float32. C = A * B with A of M x K, B of K x N,
// C of M x N; lda, ldb and ldc are leading dimensions in elements (K, N and N
// for dense arrays, pitch / sizeof(float) for pitched allocations).
// Every kernel has the same parameter list, so the Python launchers can treat
// them alike:
//   (const float* A, const float* B, float* C, int M, int N, int K,
//    int lda, int ldb, int ldc)
#pragma once

#define MATMUL_PARAMS                                                        \
    const float *__restrict__ A, const float *__restrict__ B,                \
        float *__restrict__ C, int M, int N, int K, int lda, int ldb, int ldc

// One step of Kahan summation, as the matmul-optimisation tutorial writes it:
// `sum` is the running sum and `comp` the negated lost low-order part. The
// tutorial's version turns an infinite sum into NaN (inf - inf in the
// compensation); resetting the compensation once the sum stops being finite
// keeps IEEE semantics: an infinite term gives an infinite result, inf + -inf
// or a NaN term gives NaN.
__device__ __forceinline__ void kahan_add(float &sum, float &comp, float a, float b) {
    comp -= a * b;
    float next = sum - comp;
    comp = isfinite(next) ? (next - sum) + comp : 0.0f;
    sum = next;
}

// ALIGNED is set by the launcher: 1 when every leading dimension and the
// column counts are multiples of 4 and the base pointers are 16-byte aligned,
// so that a float4 never straddles the edge of a matrix; 0 selects scalar,
// per-element predicated accesses that work for any shape.
#ifndef ALIGNED
#define ALIGNED 0
#endif

// Four consecutive elements of row `row`, columns col..col+3, of a row-major
// rows x cols matrix; elements outside the matrix read as zero.
__device__ __forceinline__ float4 load4(const float *__restrict__ p, int ld, int row,
                                        int col, int rows, int cols) {
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (row >= rows) return v;
    const float *q = p + (size_t)row * ld + col;
#if ALIGNED
    if (col < cols) v = *reinterpret_cast<const float4 *>(q);
#else
    if (col + 0 < cols) v.x = q[0];
    if (col + 1 < cols) v.y = q[1];
    if (col + 2 < cols) v.z = q[2];
    if (col + 3 < cols) v.w = q[3];
#endif
    return v;
}

// Stores four consecutive elements, skipping those outside the matrix.
__device__ __forceinline__ void store4(float *__restrict__ p, int ld, int row, int col,
                                       int rows, int cols, float4 v) {
    if (row >= rows) return;
    float *q = p + (size_t)row * ld + col;
#if ALIGNED
    if (col < cols) *reinterpret_cast<float4 *>(q) = v;
#else
    if (col + 0 < cols) q[0] = v.x;
    if (col + 1 < cols) q[1] = v.y;
    if (col + 2 < cols) q[2] = v.z;
    if (col + 3 < cols) q[3] = v.w;
#endif
}
