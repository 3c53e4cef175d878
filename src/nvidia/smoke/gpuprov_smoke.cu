// gpuprov verify --smoke: a device query and a vector add on every GPU CUDA sees, the sums
// checked on the host. Compiled by the host's nvcc in a private temporary directory, run once,
// removed. Each result is one line starting with "gpuprov-smoke " (src/nvidia/smoke_parse.cpp
// reads them); anything else on stdout is ignored.
//
// Exit status: 0 every device added correctly, 1 a device computed wrong sums or a CUDA call
// on it failed, 2 no device could be used at all.
#include <cstdio>
#include <cuda_runtime.h>
#include <vector>

namespace {

__global__ void vector_add(const float* a, const float* b, float* c, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}

bool ok(cudaError_t e, const char* call, int device) {
    if (e == cudaSuccess) {
        return true;
    }
    std::printf("gpuprov-smoke error device=%d call=%s code=%d text=%s\n", device, call,
                static_cast<int>(e), cudaGetErrorString(e));
    return false;
}

// Whole numbers below 2^24 add exactly in float, so every sum has one right answer whatever the
// GPU's rounding mode.
constexpr int kElements = 1 << 20;

// Returns the number of wrong sums, or -1 when a CUDA call failed.
long add_on(int device, const std::vector<float>& a, const std::vector<float>& b) {
    const size_t bytes = kElements * sizeof(float);
    float* da = nullptr;
    float* db = nullptr;
    float* dc = nullptr;
    std::vector<float> c(kElements, -1.0f);
    // The result buffer starts as NaNs (all bits set): a kernel that never ran leaves them.
    bool fine = ok(cudaSetDevice(device), "cudaSetDevice", device) &&
                ok(cudaMalloc(&da, bytes), "cudaMalloc", device) &&
                ok(cudaMalloc(&db, bytes), "cudaMalloc", device) &&
                ok(cudaMalloc(&dc, bytes), "cudaMalloc", device) &&
                ok(cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy", device) &&
                ok(cudaMemcpy(db, b.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy", device) &&
                ok(cudaMemset(dc, 0xff, bytes), "cudaMemset", device);
    if (fine) {
        vector_add<<<(kElements + 255) / 256, 256>>>(da, db, dc, kElements);
        fine = ok(cudaGetLastError(), "vector_add<<<>>>", device) &&
               ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize", device) &&
               ok(cudaMemcpy(c.data(), dc, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy", device);
    }
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    if (!fine) {
        return -1;
    }
    long wrong = 0;
    for (int i = 0; i < kElements; ++i) {
        if (c[i] != a[i] + b[i]) {
            ++wrong;
        }
    }
    return wrong;
}

} // namespace

int main() {
    int runtime = 0;
    int driver = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);
    std::printf("gpuprov-smoke versions runtime=%d driver=%d\n", runtime, driver);
    int count = 0;
    if (!ok(cudaGetDeviceCount(&count), "cudaGetDeviceCount", -1)) {
        return 2;
    }
    std::printf("gpuprov-smoke devices %d\n", count);
    if (count == 0) {
        return 2;
    }
    std::vector<float> a(kElements);
    std::vector<float> b(kElements);
    for (int i = 0; i < kElements; ++i) {
        a[i] = static_cast<float>(i % 4096);
        b[i] = static_cast<float>(3 * (i % 977));
    }
    int failed = 0;
    for (int d = 0; d < count; ++d) {
        cudaDeviceProp p;
        if (!ok(cudaGetDeviceProperties(&p, d), "cudaGetDeviceProperties", d)) {
            ++failed;
            continue;
        }
        std::printf("gpuprov-smoke device %d cc=%d.%d mem_mib=%zu sms=%d name=%s\n", d, p.major,
                    p.minor, static_cast<size_t>(p.totalGlobalMem >> 20), p.multiProcessorCount,
                    p.name);
        const long wrong = add_on(d, a, b);
        if (wrong < 0) {
            ++failed;
            continue;
        }
        std::printf("gpuprov-smoke vector-add device=%d elements=%d wrong=%ld\n", d, kElements,
                    wrong);
        if (wrong != 0) {
            ++failed;
        }
    }
    std::fflush(stdout);
    return failed == 0 ? 0 : 1;
}
