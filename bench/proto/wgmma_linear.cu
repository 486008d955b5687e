// Prototype check of kiln/wgmma.cuh (linear on Hopper tensor cores): each
// variant against a float64 reference (relative L2 error, outputs poisoned
// first), cuBLAS SGEMM and TF32 on the same data, and the time of each
// (CUDA events, median of runs).
//   nvcc -O3 -arch=sm_90a -std=c++17 -I templates -I bench/proto \
//        bench/proto/wgmma_linear.cu -lcublas -o wgmma_linear
#include "kiln/wgmma.cuh"

// 3xTF32's ring depth (-DS3=3 for an older template with a larger slot).
#ifndef S3
#define S3 4
#endif
#include "proto_util.cuh"
#include "sigmoid.cuh"

#include <cmath>
#include <cublas_v2.h>
#include <string>

template <int M, int N, int K, int BN, int S, int P, int G = kiln::kWgmmaGroupM,
          bool SplitW = false>
__global__ void __launch_bounds__(384, 1)
    linearKernel(const float *x, const float *w, const float *b, float *y,
                 float *parts, unsigned long long *launches) {
  kiln::wgmmaLinear<kiln::GemmShape<M, N, K>,
                    kiln::WgmmaConfig<BN, S, P, G, SplitW>, true,
                    kiln::WgmmaEpilogue<N % 2 == 0 ? 2 : 1, 0>>(
      x, w, b, kiln::StoreLinear{y}, kiln::NoPost{}, 0.f, parts, launches);
}

/// y[m][n] in float64 for rows m % rowStep == 0.
__global__ void referenceRows(const float *x, const float *w, const float *b,
                              double *y, int M, int N, int K, int rowStep) {
  const int n = blockIdx.x * blockDim.x + threadIdx.x;
  const int m = blockIdx.y * rowStep;
  if (n >= N || m >= M)
    return;
  double s = b[n];
  for (int k = 0; k < K; ++k)
    s += double(x[i64(m) * K + k]) * double(w[i64(n) * K + k]);
  y[i64(blockIdx.y) * N + n] = s;
}

static double relError(const float *y, const double *ref, int M, int N,
                       int rowStep) {
  const int rows = (M + rowStep - 1) / rowStep;
  std::vector<float> hy(size_t(M) * N);
  std::vector<double> hr(size_t(rows) * N);
  CK(cudaMemcpy(hy.data(), y, hy.size() * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hr.data(), ref, hr.size() * 8, cudaMemcpyDeviceToHost));
  double num = 0, den = 0;
  for (int r = 0; r < rows; ++r)
    for (int n = 0; n < N; ++n) {
      const double d = hy[size_t(r) * rowStep * N + n] - hr[size_t(r) * N + n];
      num += d * d;
      den += hr[size_t(r) * N + n] * hr[size_t(r) * N + n];
    }
  return std::isfinite(num) ? std::sqrt(num / den) : INFINITY;
}

__global__ void broadcastRows(const float *b, float *y, int M, int N) {
  for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < i64(M) * N;
       i += (i64)gridDim.x * blockDim.x)
    y[i] = b[i % N];
}

__global__ void fillNormal(float *p, i64 n, unsigned seed) {
  for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < n;
       i += (i64)gridDim.x * blockDim.x) {
    unsigned h1 = (unsigned)i * 2654435761u ^ seed, h2 = h1 * 2246822519u + 7;
    h1 ^= h1 >> 15, h1 *= 3266489917u, h1 ^= h1 >> 13;
    h2 ^= h2 >> 16, h2 *= 2654435761u, h2 ^= h2 >> 15;
    const float u1 = ((h1 >> 8) + 1) * (1.0f / 16777217.0f),
                u2 = (h2 >> 8) * (1.0f / 16777216.0f);
    p[i] = sqrtf(-2.f * logf(u1)) * cosf(6.2831853f * u2);
  }
}

/// SplitW: every launch splits w once into a workspace before its tiles
/// (WgmmaConfig's kSplitW; the time includes it).
template <int M, int N, int K, int BN, int S, int P, int G = kiln::kWgmmaGroupM,
          bool SplitW = false>
void runCase(const char *dist, bool timeIt) {
  float *x, *w, *b, *y, *yc, *parts = nullptr;
  unsigned long long *launches = nullptr;
  double *ref;
  const int rowStep = M >= 4096 ? 64 : M >= 512 ? 8 : 1;
  const int rows = (M + rowStep - 1) / rowStep;
  CK(cudaMalloc(&x, i64(M) * K * 4));
  CK(cudaMalloc(&w, i64(N) * K * 4));
  CK(cudaMalloc(&b, N * 4));
  CK(cudaMalloc(&y, i64(M) * N * 4));
  CK(cudaMalloc(&yc, i64(M) * N * 4));
  CK(cudaMalloc(&ref, i64(rows) * N * 8));
  if (dist[0] == 'n') {
    fillNormal<<<1024, 256>>>(x, i64(M) * K, 1);
    fillNormal<<<1024, 256>>>(w, i64(N) * K, 2);
  } else {
    fillRandom<<<1024, 256>>>(x, i64(M) * K, 1, 0.f);
    fillRandom<<<1024, 256>>>(w, i64(N) * K, 2, 0.f);
  }
  fillRandom<<<64, 256>>>(b, N, 3, -0.5f);
  referenceRows<<<dim3((N + 255) / 256, rows), 256>>>(x, w, b, ref, M, N, K,
                                                      rowStep);
  auto kernel = linearKernel<M, N, K, BN, S, P, G, SplitW>;
  Timer t;
  if constexpr (SplitW) {
    CK(cudaMalloc(&parts, 2 * i64(N) * K * 4));
    CK(cudaMalloc(&launches, 8));
    CK(cudaMemset(launches, 0, 8));
  }
  const int smem = kiln::wgmmaSharedBytes(BN, S, P);
  CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          smem));
  // Persistent: a block per SM at most (as the scheduler launches it).
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const dim3 grid(std::min<long long>(kiln::wgmmaBlocks(M, N, BN), sms));
  CK(cudaMemset(y, 0xff, i64(M) * N * 4)); // NaN poison
  kernel<<<grid, 384, smem>>>(x, w, b, y, parts, launches);
  CK(cudaDeviceSynchronize());
  const double err = relError(y, ref, M, N, rowStep);

  cublasHandle_t h;
  cublasCreate(&h);
  const float one = 1.f, zero = 0.f;
  auto cublasRun = [&](cublasMath_t mode) {
    cublasSetMathMode(h, mode);
    // y = x w^T + b: bias first, then beta = 1.
    broadcastRows<<<1024, 256>>>(b, yc, M, N);
    const float beta = 1.f;
    cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, w, K, x, K, &beta,
                yc, N);
  };
  cublasRun(CUBLAS_DEFAULT_MATH);
  CK(cudaDeviceSynchronize());
  const double errS = relError(yc, ref, M, N, rowStep);
  cublasRun(CUBLAS_TF32_TENSOR_OP_MATH);
  CK(cudaDeviceSynchronize());
  const double errT = relError(yc, ref, M, N, rowStep);
  std::printf("%-6s M=%-6d N=%-6d K=%-6d BN=%d S=%d G=%-3d %s: err "
              "%.2e (SGEMM %.2e, "
              "TF32 %.2e)",
              dist, M, N, K, BN, S, G,
              P == 1   ? "TF32  "
              : SplitW ? "3xTF32 w split first"
                       : "3xTF32",
              err, errS, errT);
  if (timeIt) {
    const double flop = 2.0 * M * N * K;
    const double ms = t.median(
        [&] { kernel<<<grid, 384, smem>>>(x, w, b, y, parts, launches); }, 5,
        30);
    cublasSetMathMode(h, P == 3 ? CUBLAS_DEFAULT_MATH
                                : CUBLAS_TF32_TENSOR_OP_MATH);
    const double msc = t.median(
        [&] {
          cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, w, K, x, K,
                      &zero, yc, N);
        },
        5, 30);
    std::printf("  | %.3f ms %.0f TFLOP/s; cuBLAS %s %.3f ms %.0f TFLOP/s", ms,
                flop / ms / 1e9, P == 3 ? "SGEMM" : "TF32", msc,
                flop / msc / 1e9);
  }
  std::printf("\n");
  cublasDestroy(h);
  CK(cudaFree(x));
  CK(cudaFree(w));
  CK(cudaFree(b));
  CK(cudaFree(y));
  CK(cudaFree(yc));
  CK(cudaFree(ref));
  CK(cudaFree(parts));
  CK(cudaFree(launches));
}

// --- L2_37's epilogue at high: where the fused kernel's time goes --------
using L37 = kiln::GemmShape<32768, 4096, 1024>;
using C37 = kiln::WgmmaConfig<256, 4, 1>;

__global__ void __launch_bounds__(384, 1)
    epiPlain(const float *x, const float *w, const float *b, float *y) {
  kiln::wgmmaLinear<L37, C37, true, kiln::WgmmaEpilogue<2, 0>>(
      x, w, b, kiln::StoreLinear{y}, kiln::NoPost{}, 0.f);
}
__global__ void __launch_bounds__(384, 1)
    epiGnOnly(const float *x, const float *w, const float *b, float *y) {
  auto pre = [&](i64, float(&)[2], bool) {};
  auto post = [&](i64 i, float(&v)[2], bool live) {
    if (live)
      kiln::storeVec<2>(y + i, v);
  };
  kiln::wgmmaLinear<L37, C37, true, kiln::WgmmaEpilogue<2, 64>>(x, w, b, pre,
                                                                post, 1e-5f);
}
// As the emitter writes it: lambdas capturing the parameters by reference.
__global__ void __launch_bounds__(384, 1)
    epiFull(const float *__restrict__ x, const float *__restrict__ w,
            const float *__restrict__ b, const float *__restrict__ bias,
            const float *__restrict__ gamma, const float *__restrict__ beta,
            float *__restrict__ y) {
  auto pre = [&](i64 i, float(&v)[2], bool) {
    const unsigned ii = i;
    float c[2];
    kiln::loadVec<2>(bias + ii % 4096, c);
    for (int l = 0; l < 2; ++l)
      v[l] = v[l] * (1.0f / (1.0f + expf(-v[l]))) + c[l];
  };
  auto post = [&](i64 i, float(&v)[2], bool live) {
    const unsigned ii = i;
    float g[2], o[2];
    kiln::loadVec<2>(gamma + ii % 4096, g);
    kiln::loadVec<2>(beta + ii % 4096, o);
    for (int l = 0; l < 2; ++l)
      v[l] = v[l] * g[l] + o[l];
    if (live)
      kiln::storeVec<2>(y + ii, v);
  };
  kiln::wgmmaLinear<L37, C37, true, kiln::WgmmaEpilogue<2, 64>>(x, w, b, pre,
                                                                post, 1e-5f);
}
// The swish's sigmoid by Mode: 0 as Kiln's (accurate expf, IEEE
// division), 1 a correctly rounded reciprocal instead of the division, 2 the
// fast intrinsics; 3 no swish at all (the epilogue's loads and stores only);
// 4 + V sigmoid.cuh's variant V.
template <int Mode> __device__ __forceinline__ float swish(float x) {
  if constexpr (Mode == 0)
    return x * (1.0f / (1.0f + expf(-x)));
  else if constexpr (Mode == 1)
    return x * __frcp_rn(1.0f + expf(-x));
  else if constexpr (Mode == 2)
    return x * __fdividef(1.0f, 1.0f + __expf(-x));
  else if constexpr (Mode >= 4)
    return x * proto::sigmoid<Mode - 4>(x);
  else
    return x;
}
// epiFull's epilogue with the loads through __ldg (read-only path, no
// aliasing with the stores) and the swish by Mode.
template <int Mode>
__global__ void __launch_bounds__(384, 1)
    epiSwish(const float *__restrict__ x, const float *__restrict__ w,
             const float *__restrict__ b, const float *__restrict__ bias,
             const float *__restrict__ gamma, const float *__restrict__ beta,
             float *__restrict__ y) {
  auto pre = [&](i64 i, float(&v)[2], bool) {
    const unsigned ii = i;
    const float2 c = __ldg(reinterpret_cast<const float2 *>(bias + ii % 4096));
    v[0] = swish<Mode>(v[0]) + c.x;
    v[1] = swish<Mode>(v[1]) + c.y;
  };
  auto post = [&](i64 i, float(&v)[2], bool live) {
    const unsigned ii = i;
    const float2 g = __ldg(reinterpret_cast<const float2 *>(gamma + ii % 4096));
    const float2 o = __ldg(reinterpret_cast<const float2 *>(beta + ii % 4096));
    v[0] = v[0] * g.x + o.x;
    v[1] = v[1] * g.y + o.y;
    if (live)
      kiln::storeVec<2>(y + ii, v);
  };
  kiln::wgmmaLinear<L37, C37, true, kiln::WgmmaEpilogue<2, 64>>(x, w, b, pre,
                                                                post, 1e-5f);
}

static void epilogueTimes() {
  constexpr int M = 32768, N = 4096, K = 1024;
  float *x, *w, *b, *p, *y;
  CK(cudaMalloc(&x, i64(M) * K * 4));
  CK(cudaMalloc(&w, i64(N) * K * 4));
  CK(cudaMalloc(&b, N * 4));
  CK(cudaMalloc(&p, 3 * N * 4));
  CK(cudaMalloc(&y, i64(M) * N * 4));
  fillRandom<<<1024, 256>>>(x, i64(M) * K, 1, 0.f);
  fillRandom<<<1024, 256>>>(w, i64(N) * K, 2, -0.5f);
  fillRandom<<<64, 256>>>(b, N, 3, -0.5f);
  fillRandom<<<64, 256>>>(p, 3 * N, 4, 0.f);
  const int smem = kiln::wgmmaSharedBytes(256, 4, 1);
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const dim3 grid(std::min<long long>(kiln::wgmmaBlocks(M, N, 256), sms));
  Timer t;
  // Median time of `launch` after raising `kernel`'s shared-memory limit.
  auto time = [&](const char *name, auto kernel, auto launch) {
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            smem));
    std::printf("%-10s %.3f ms\n", name, t.median(launch, 5, 30));
  };
  auto plain = [&](const char *name, auto kernel) {
    time(name, kernel, [&] { kernel<<<grid, 384, smem>>>(x, w, b, y); });
  };
  auto full = [&](const char *name, auto kernel) {
    time(name, kernel,
         [&] { kernel<<<grid, 384, smem>>>(x, w, b, p, p + N, p + 2 * N, y); });
  };
  plain("plain", epiPlain);
  plain("gn only", epiGnOnly);
  full("full", epiFull);
  full("loads", epiSwish<3>);
  full("sig div", epiSwish<0>);
  full("sig rcp", epiSwish<1>);
  full("sig fast", epiSwish<2>);
  full("sig kiln (rcp.approx.ftz)", epiSwish<5>);
  full("sig v19-v44 (IEEE bits)", epiSwish<6>);
}

int main(int argc, char **argv) {
  if (argc > 1 && std::string(argv[1]) == "--epilogue") {
    epilogueTimes();
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "--order") { // tile order bands
    runCase<32768, 4096, 1024, 256, 4, 1, 256>("rand", true);
    runCase<32768, 4096, 1024, 256, 4, 1, 16>("rand", true);
    runCase<32768, 4096, 1024, 256, 4, 1, 8>("rand", true);
    runCase<32768, 4096, 1024, 128, S3, 3, 256>("rand", true);
    runCase<32768, 4096, 1024, 128, S3, 3, 16>("rand", true);
    runCase<8192, 8192, 8192, 256, 4, 1, 64>("randn", true);
    runCase<8192, 8192, 8192, 256, 4, 1, 16>("randn", true);
    runCase<8192, 8192, 8192, 256, 4, 1, 8>("randn", true);
    runCase<1024, 8192, 8192, 256, 4, 1, 8>("rand", true);
    runCase<1024, 8192, 8192, 128, S3, 3, 8>("rand", true);
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "--split") { // w split first
    runCase<333, 517, 260, 128, S3, 3, 16, true>("randn", false);
    runCase<1000, 1000, 1004, 128, S3, 3, 16, true>("rand", false);
    for (int r = 0; r < 2; ++r) {
      runCase<32768, 4096, 1024, 128, S3, 3, 16, false>("rand", true);
      runCase<32768, 4096, 1024, 128, S3, 3, 16, true>("rand", true);
      runCase<1024, 8192, 8192, 128, S3, 3, 16, false>("rand", true);
      runCase<1024, 8192, 8192, 128, S3, 3, 16, true>("rand", true);
    }
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "--time") { // the timed cases only
    runCase<1024, 8192, 8192, 256, 4, 1>("rand", true);
    runCase<1024, 8192, 8192, 128, S3, 3>("rand", true);
    runCase<8192, 8192, 8192, 256, 4, 1>("randn", true);
    return 0;
  }
  // Odd shapes: every edge of the tile, K not a multiple of 32, K = 4.
  runCase<1, 7, 4, 128, 4, 1>("rand", false);
  runCase<333, 517, 260, 128, 6, 1>("randn", false);
  runCase<333, 517, 260, 128, S3, 3>("randn", false);
  runCase<129, 257, 36, 256, 4, 1>("rand", false);
  runCase<129, 257, 36, 128, S3, 3>("rand", false);
  runCase<1000, 1000, 1004, 128, S3, 3>("rand", false);
  // 3xTF32's accuracy against SGEMM's over K.
  runCase<1024, 1024, 128, 128, S3, 3>("rand", false);
  runCase<1024, 1024, 256, 128, S3, 3>("rand", false);
  runCase<1024, 1024, 256, 128, S3, 3>("randn", false);
  runCase<1024, 1024, 512, 128, S3, 3>("rand", false);
  runCase<1024, 1024, 512, 128, S3, 3>("randn", false);
  runCase<1024, 1024, 1024, 128, S3, 3>("rand", false);
  runCase<1024, 1024, 16384, 128, S3, 3>("rand", false);
  runCase<1024, 1024, 16384, 128, S3, 3>("randn", false);
  // The flagship shapes and 8192^3, timed.
  runCase<1024, 8192, 8192, 256, 4, 1>("rand", true);
  runCase<1024, 8192, 8192, 128, S3, 3>("rand", true);
  runCase<32768, 4096, 1024, 256, 4, 1>("rand", true);
  runCase<32768, 4096, 1024, 128, S3, 3>("rand", true);
  runCase<8192, 8192, 8192, 256, 4, 1>("randn", true);
  runCase<8192, 8192, 8192, 128, S3, 3>("randn", true);
  return 0;
}
