// Helpers shared by the standalone prototypes: error checks, random
// fills, a max-difference kernel and a CUDA-event timer (median of runs).
#ifndef KILN_PROTO_UTIL_CUH
#define KILN_PROTO_UTIL_CUH

#include "kiln/common.cuh"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                  \
  do {                                                                         \
    cudaError_t e = (x);                                                       \
    if (e != cudaSuccess) {                                                    \
      std::printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e));    \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

using kiln::i64;
using kiln::u64;

__global__ void fillRandom(float *p, i64 n, unsigned seed, float offset) {
  for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < n;
       i += (i64)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u ^ seed;
    h ^= h >> 16;
    h *= 2246822519u;
    h ^= h >> 13;
    h *= 3266489917u;
    h ^= h >> 16;
    p[i] = offset + (h >> 8) * (1.0f / 16777216.0f);
  }
}

__global__ void maxDiff(const float *a, const float *b, i64 n, float *out) {
  float m = 0;
  for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < n;
       i += (i64)gridDim.x * blockDim.x) {
    float d = fabsf(a[i] - b[i]);
    if (!(d <= m))
      m = d; // NaN sticks
  }
  for (int o = 16; o > 0; o /= 2) {
    const float t = __shfl_xor_sync(0xffffffffu, m, o);
    m = (t != t || t > m) ? t : m;
  }
  if (threadIdx.x % 32 == 0)
    atomicMax(reinterpret_cast<int *>(out), __float_as_int(m));
}

struct Timer {
  cudaEvent_t a, b;
  Timer() {
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
  }
  template <class F> double median(F f, int warm, int reps) {
    for (int i = 0; i < warm; ++i)
      f();
    std::vector<float> t;
    for (int i = 0; i < reps; ++i) {
      CK(cudaEventRecord(a));
      f();
      CK(cudaEventRecord(b));
      CK(cudaEventSynchronize(b));
      float ms;
      CK(cudaEventElapsedTime(&ms, a, b));
      t.push_back(ms);
    }
    CK(cudaGetLastError());
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }
};

static float diffOf(const float *a, const float *b, i64 n) {
  float *d;
  CK(cudaMalloc(&d, 4));
  CK(cudaMemset(d, 0, 4));
  maxDiff<<<1024, 256>>>(a, b, n, d);
  float h;
  CK(cudaMemcpy(&h, d, 4, cudaMemcpyDeviceToHost));
  CK(cudaFree(d));
  return h;
}

/// ||y - ref|| / ||ref|| over y's every step-th element (device y of n
/// floats, ref[k] the reference of element k * step; both on the device):
/// inf where y holds a NaN or inf there (an element never written, with y
/// poisoned first).
static double relErrEvery(const float *y, i64 n, const double *ref, i64 step) {
  const i64 count = (n + step - 1) / step;
  std::vector<double> hr(count);
  std::vector<float> hy(n);
  CK(cudaMemcpy(hr.data(), ref, count * 8, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hy.data(), y, n * 4, cudaMemcpyDeviceToHost));
  double num = 0, den = 0;
  for (i64 k = 0; k < count; ++k) {
    const double d = hy[k * step] - hr[k];
    num += d * d;
    den += hr[k] * hr[k];
  }
  return std::isfinite(num) ? std::sqrt(num / den) : INFINITY;
}

#endif
