// out = a * x + y on float32 vectors, one thread per element
extern "C" __global__ void saxpy(int n, float a, const float* x, const float* y, float* out) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n) {
        out[i] = a * x[i] + y[i];
    }
}
