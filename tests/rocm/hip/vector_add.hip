// A small HIP program for the simulated KFD (tests/rocm/test_hip.py): device query, device
// memory, copies both ways, a kernel launched on a priority stream and the null stream, events.
// The simulated GPU runs no ISA, so the kernel computes nothing: the program never judges the
// kernel's output. The copies are real (ROCr's blit kernels, which the simulated CP carries out),
// so it checks that what went to the device comes back.
#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstring>
#include <vector>

__global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

#define CHECK(x)                                                                  \
  do {                                                                            \
    hipError_t e = (x);                                                           \
    if (e != hipSuccess) {                                                        \
      std::printf("error %s: %s\n", #x, hipGetErrorString(e));                    \
      return 1;                                                                   \
    }                                                                             \
  } while (0)

int main() {
  int devices = 0;
  CHECK(hipGetDeviceCount(&devices));
  hipDeviceProp_t prop;
  CHECK(hipGetDeviceProperties(&prop, 0));
  std::printf("device %s %s cus=%d\n", prop.gcnArchName, prop.name, prop.multiProcessorCount);

  const int n = 1 << 16;
  const size_t bytes = n * sizeof(float);
  std::vector<float> a(n), b(n), back(n, 0.0f);
  for (int i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = static_cast<float>(2 * i);
  }
  float *da, *db, *dc;
  CHECK(hipMalloc(&da, bytes));
  CHECK(hipMalloc(&db, bytes));
  CHECK(hipMalloc(&dc, bytes));
  CHECK(hipMemcpy(da, a.data(), bytes, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(db, b.data(), bytes, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(back.data(), da, bytes, hipMemcpyDeviceToHost));
  std::printf("copy round trip %s\n", std::memcmp(back.data(), a.data(), bytes) == 0 ? "ok" : "differs");

  int least = 0, greatest = 0;
  CHECK(hipDeviceGetStreamPriorityRange(&least, &greatest));
  hipStream_t high;
  CHECK(hipStreamCreateWithPriority(&high, hipStreamDefault, greatest));
  hipEvent_t start, stop;
  CHECK(hipEventCreate(&start));
  CHECK(hipEventCreate(&stop));
  CHECK(hipEventRecord(start, high));
  for (int k = 0; k < 3; ++k)
    hipLaunchKernelGGL(vector_add, dim3(n / 256), dim3(256), 0, high, da, db, dc, n);
  CHECK(hipGetLastError());
  CHECK(hipEventRecord(stop, high));
  CHECK(hipEventSynchronize(stop));
  float ms = 0.0f;
  CHECK(hipEventElapsedTime(&ms, start, stop));
  std::printf("stream kernels done elapsed_ms=%.3f\n", ms);

  hipLaunchKernelGGL(vector_add, dim3(n / 256), dim3(256), 0, 0, da, db, dc, n);
  CHECK(hipGetLastError());
  CHECK(hipDeviceSynchronize());
  std::printf("null stream kernel done\n");

  CHECK(hipEventDestroy(start));
  CHECK(hipEventDestroy(stop));
  CHECK(hipStreamDestroy(high));
  CHECK(hipFree(da));
  CHECK(hipFree(db));
  CHECK(hipFree(dc));
  std::printf("done\n");
  return 0;
}
