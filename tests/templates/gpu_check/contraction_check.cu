// Standalone GPU check of the contraction templates (gemm.cuh, conv.cuh)
// against a float64 CPU reference. Not part of the CPU test suite; on a GPU
// machine:
//
//   nvcc -std=c++17 -O2 -arch=sm_90 -I templates \
//       -o /tmp/contraction_check
//       tests/templates/gpu_check/contraction_check.cu
//   /tmp/contraction_check            # exit status 0 when every case passes
//   compute-sanitizer /tmp/contraction_check --quick   # no large cases
//
// Inputs are deterministic pseudo-random values in [-1, 1) (randAt below,
// the same function on host and device, so large inputs never need a host
// copy); outputs are poisoned with NaN before each run. A case checks every
// output for finiteness on the device and compares every output (small
// cases) or 4096 sampled ones (large cases) with the reference. The error
// of an output is |got - ref| / sum_k |term_k|, which fp32 accumulation
// bounds by about (K + 2) * 2^-24; the case fails above that bound.
// Timed cases report the median of 10 runs after 3 warm-ups.

#include "kiln/conv.cuh"
#include "kiln/gemm.cuh"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

using kiln::i64;

#define CHECK_CUDA(expr)                                                       \
  do {                                                                         \
    cudaError_t e_ = (expr);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr,       \
                   cudaGetErrorString(e_));                                    \
      std::exit(2);                                                            \
    }                                                                          \
  } while (0)

// --- Deterministic inputs ----------------------------------------------------

__host__ __device__ inline float randAt(unsigned long long seed, i64 i) {
  unsigned long long z =
      seed * 0x9E3779B97F4A7C15ull + static_cast<unsigned long long>(i);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

__global__ void fillKernel(float *p, i64 n, unsigned long long seed) {
  for (i64 i = blockIdx.x * static_cast<i64>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<i64>(gridDim.x) * blockDim.x)
    p[i] = randAt(seed, i);
}

__global__ void countNonFinite(const float *p, i64 n,
                               unsigned long long *count) {
  unsigned long long local = 0;
  for (i64 i = blockIdx.x * static_cast<i64>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<i64>(gridDim.x) * blockDim.x)
    local += !isfinite(p[i]);
  if (local)
    atomicAdd(count, local);
}

struct DeviceTensor {
  float *ptr = nullptr;
  i64 numel = 0;
  unsigned long long seed = 0;
  DeviceTensor(i64 n, unsigned long long s) : numel(n), seed(s) {
    CHECK_CUDA(cudaMalloc(&ptr, std::max<i64>(n, 1) * sizeof(float)));
    if (s)
      fillKernel<<<1024, 256>>>(ptr, n, s);
    else
      CHECK_CUDA(cudaMemset(ptr, 0xff, n * sizeof(float))); // NaN poison
    CHECK_CUDA(cudaGetLastError());
  }
  ~DeviceTensor() { cudaFree(ptr); }
  DeviceTensor(const DeviceTensor &) = delete;
  DeviceTensor &operator=(const DeviceTensor &) = delete;
  /// The input value at i (inputs only: they hold randAt(seed, i)).
  double at(i64 i) const { return randAt(seed, i); }
};

// --- Kernels, written as the emitter writes them -----------------------------

template <class Shape, bool HasBias, class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
    linearKernel(const float *x, const float *w, const float *b, float *y) {
  kiln::gemmNT<Shape, HasBias, Cfg>(x, w, b, y);
}

template <class Shape, class Batch, class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
    matmulKernel(const float *a, const float *b, float *c) {
  kiln::gemmNN<Shape, Batch, Cfg>(a, b, c);
}

template <class Prm, bool HasBias, class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
    convKernel(const float *x, const float *w, const float *b, float *y) {
  if constexpr (Prm::kTransposed)
    kiln::convTranspose2d<Prm, HasBias, Cfg>(x, w, b, y);
  else
    kiln::conv2d<Prm, HasBias, Cfg>(x, w, b, y);
}

// --- The harness -------------------------------------------------------------

/// Runs launch once into a poisoned output, checks it against ref(i, &sumAbs)
/// and, when timed, reports the median time of 10 runs.
static bool runCase(const std::string &name, DeviceTensor &out, int k,
                    const std::function<void()> &launch,
                    const std::function<double(i64, double &)> &ref,
                    bool timed = false, double flops = 0) {
  launch();
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());

  unsigned long long *count;
  CHECK_CUDA(cudaMalloc(&count, sizeof(*count)));
  CHECK_CUDA(cudaMemset(count, 0, sizeof(*count)));
  countNonFinite<<<1024, 256>>>(out.ptr, out.numel, count);
  unsigned long long nonFinite = 0;
  CHECK_CUDA(
      cudaMemcpy(&nonFinite, count, sizeof(nonFinite), cudaMemcpyDeviceToHost));
  cudaFree(count);

  // Every output when there are few, else 4096 samples (first and last
  // included, to catch the tile edges).
  std::vector<i64> idx;
  const bool all = out.numel <= (1 << 20);
  if (all) {
    for (i64 i = 0; i < out.numel; ++i)
      idx.push_back(i);
  } else {
    idx.push_back(0);
    idx.push_back(out.numel - 1);
    for (int s = 0; s < 4094; ++s)
      idx.push_back(static_cast<i64>((randAt(777, s) * 0.5 + 0.5) *
                                     static_cast<double>(out.numel - 1)));
  }
  std::vector<float> got(idx.size());
  if (all) {
    CHECK_CUDA(cudaMemcpy(got.data(), out.ptr, out.numel * sizeof(float),
                          cudaMemcpyDeviceToHost));
  } else {
    for (size_t s = 0; s < idx.size(); ++s)
      CHECK_CUDA(cudaMemcpy(&got[s], out.ptr + idx[s], sizeof(float),
                            cudaMemcpyDeviceToHost));
  }
  double maxErr = 0;
  i64 worst = -1;
  for (size_t s = 0; s < idx.size(); ++s) {
    double sumAbs = 0;
    const double r = ref(idx[s], sumAbs);
    double err = std::fabs(got[s] - r) / std::max(sumAbs, 1e-30);
    if (!(err <= maxErr)) { // NaN counts as worst
      maxErr = std::isnan(err) ? INFINITY : err;
      worst = idx[s];
    }
  }
  const double tol = (k + 2) * std::ldexp(1.0, -24); // + final roundings
  const bool pass = nonFinite == 0 && maxErr <= tol;
  std::printf("%-4s %-58s max rel err %.2e (tol %.1e, %s%zu outputs%s)",
              pass ? "PASS" : "FAIL", name.c_str(), maxErr, tol,
              all ? "all " : "", idx.size(),
              nonFinite ? ", NON-FINITE OUTPUTS" : "");
  if (!pass && worst >= 0)
    std::printf(" [worst at %lld]", static_cast<long long>(worst));
  std::printf("\n");

  if (timed) {
    cudaEvent_t start, stop;
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
    for (int i = 0; i < 3; ++i)
      launch();
    std::vector<float> ms;
    for (int i = 0; i < 10; ++i) {
      CHECK_CUDA(cudaEventRecord(start));
      launch();
      CHECK_CUDA(cudaEventRecord(stop));
      CHECK_CUDA(cudaEventSynchronize(stop));
      float t;
      CHECK_CUDA(cudaEventElapsedTime(&t, start, stop));
      ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    const double med = (ms[4] + ms[5]) / 2;
    std::printf("     time: median %.3f ms (min %.3f), %.2f TFLOP/s\n", med,
                ms[0], flops / (med * 1e-3) / 1e12);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  return pass;
}

template <class Shape, bool HasBias, class Cfg>
static bool checkLinear(const char *cfgName, bool timed = false) {
  constexpr int M = Shape::M, N = Shape::N, K = Shape::K;
  DeviceTensor x(static_cast<i64>(M) * K, 11), w(static_cast<i64>(N) * K, 12),
      b(N, 13), y(static_cast<i64>(M) * N, 0);
  const auto blocks = kiln::gemmBlocks(M, N, Cfg::kShape);
  auto launch = [&] {
    linearKernel<Shape, HasBias, Cfg><<<blocks, Cfg::kThreads>>>(
        x.ptr, w.ptr, HasBias ? b.ptr : nullptr, y.ptr);
  };
  auto ref = [&](i64 i, double &sumAbs) {
    const i64 m = i / N, n = i % N;
    double s = HasBias ? b.at(n) : 0.0;
    sumAbs = std::fabs(s);
    for (int k = 0; k < K; ++k) {
      const double t = x.at(m * K + k) * w.at(n * K + k);
      s += t, sumAbs += std::fabs(t);
    }
    return s;
  };
  char name[160];
  std::snprintf(name, sizeof(name), "linear M=%d N=%d K=%d%s (%s)", M, N, K,
                HasBias ? " +bias" : "", cfgName);
  return runCase(name, y, K + HasBias, launch, ref, timed, 2.0 * M * N * K);
}

/// a [A0.., M, K] x b [B0.., K, N] with the batch map Batch (its run sizes
/// given again in Ns for the reference's benefit).
template <class Shape, class Batch, class Cfg>
static bool checkMatmul(const char *what, i64 numelA, i64 numelB,
                        const char *cfgName) {
  constexpr int M = Shape::M, N = Shape::N, K = Shape::K;
  constexpr int T = Batch::kCount;
  DeviceTensor a(numelA, 21), b(numelB, 22), c(static_cast<i64>(T) * M * N, 0);
  const auto blocks = kiln::gemmBlocks(M, N, Cfg::kShape);
  auto launch = [&] {
    matmulKernel<Shape, Batch, Cfg>
        <<<dim3(blocks, T), Cfg::kThreads>>>(a.ptr, b.ptr, c.ptr);
  };
  auto ref = [&](i64 i, double &sumAbs) {
    const int t = static_cast<int>(i / (static_cast<i64>(M) * N));
    const i64 m = i / N % M, n = i % N;
    i64 offA = 0, offB = 0;
    Batch::offsets(t, offA, offB);
    double s = 0;
    sumAbs = 0;
    for (int k = 0; k < K; ++k) {
      const double v = a.at(offA + m * K + k) * b.at(offB + k * N + n);
      s += v, sumAbs += std::fabs(v);
    }
    return s;
  };
  char name[160];
  std::snprintf(name, sizeof(name), "matmul %s (%s)", what, cfgName);
  return runCase(name, c, K, launch, ref);
}

template <class Prm, bool HasBias, class Cfg>
static bool checkConv(const char *what, const char *cfgName,
                      bool timed = false) {
  using P = Prm;
  DeviceTensor x(static_cast<i64>(P::N) * P::Cin * P::HW, 31),
      w(static_cast<i64>(P::kTransposed ? P::Cin * P::CoutG
                                        : P::Cout * P::CinG) *
            P::KHW,
        32),
      b(P::Cout, 33), y(static_cast<i64>(P::N) * P::Cout * P::HoWo, 0);
  const auto blocks = kiln::convBlocks(P::P, P::CoutG, Cfg::kShape);
  auto launch = [&] {
    convKernel<Prm, HasBias, Cfg><<<dim3(blocks, P::G), Cfg::kThreads>>>(
        x.ptr, w.ptr, HasBias ? b.ptr : nullptr, y.ptr);
  };
  // The definitions, term by term.
  auto ref = [&](i64 i, double &sumAbs) {
    const int ow = i % P::Wo, oh = i / P::Wo % P::Ho;
    const int c = i / P::HoWo % P::Cout;
    const i64 n = i / P::HoWo / P::Cout;
    const int g = c / P::CoutG, co = c % P::CoutG;
    double s = HasBias ? b.at(c) : 0.0;
    sumAbs = std::fabs(s);
    for (int ci = 0; ci < P::CinG; ++ci)
      for (int kh = 0; kh < P::KH; ++kh)
        for (int kw = 0; kw < P::KW; ++kw) {
          int ih, iw;
          i64 wi;
          if constexpr (P::kTransposed) {
            // oh = ih*SH - PH + kh*DH
            const int ty = oh + P::PH - kh * P::DH,
                      tx = ow + P::PW - kw * P::DW;
            if (ty < 0 || tx < 0 || ty % P::SH || tx % P::SW)
              continue;
            ih = ty / P::SH, iw = tx / P::SW;
            wi = ((static_cast<i64>(g) * P::CinG + ci) * P::CoutG + co) *
                     P::KHW +
                 kh * P::KW + kw;
          } else {
            ih = oh * P::SH - P::PH + kh * P::DH;
            iw = ow * P::SW - P::PW + kw * P::DW;
            wi =
                (static_cast<i64>(c) * P::CinG + ci) * P::KHW + kh * P::KW + kw;
          }
          if (ih < 0 || ih >= P::H || iw < 0 || iw >= P::W)
            continue;
          const i64 xi =
              ((n * P::Cin + g * P::CinG + ci) * P::H + ih) * P::W + iw;
          const double t = x.at(xi) * w.at(wi);
          s += t, sumAbs += std::fabs(t);
        }
    return s;
  };
  char name[200];
  std::snprintf(name, sizeof(name),
                "%s %s x[%d,%d,%d,%d] -> [%d,%d,%d,%d] (%s)",
                P::kTransposed ? "conv_transpose2d" : "conv2d", what, P::N,
                P::Cin, P::H, P::W, P::N, P::Cout, P::Ho, P::Wo, cfgName);
  const double flops = 2.0 * P::P * P::Cout * P::K; // GEMM terms, zeros too
  return runCase(name, y, P::K + HasBias, launch, ref, timed, flops);
}

int main(int argc, char **argv) {
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  int dev = 0;
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, dev));
  std::printf("device: %s (sm_%d%d, %d SMs)\n", prop.name, prop.major,
              prop.minor, prop.multiProcessorCount);
  using kiln::BatchMap;
  using kiln::Conv2dParams;
  using kiln::ConvTranspose2dParams;
  using kiln::GemmLarge;
  using kiln::GemmShape;
  using kiln::GemmSmall;
  using kiln::TileConfigOf;
  int failed = 0;
  auto count = [&](bool ok) { failed += !ok; };

  // linear: scalar path (K % 4 != 0), vector path, ragged tiles, both tiles.
  count(checkLinear<GemmShape<37, 45, 29>, true, GemmSmall>("small"));
  count(checkLinear<GemmShape<37, 45, 29>, false, GemmLarge>("large"));
  count(checkLinear<GemmShape<130, 260, 64>, true, GemmSmall>("small"));
  count(checkLinear<GemmShape<257, 129, 33>, true, GemmLarge>("large"));
  count(checkLinear<GemmShape<300, 200, 1>, true, GemmSmall>("small"));
  count(checkLinear<GemmShape<5, 7, 0>, true, GemmSmall>("small"));

  // matmul: two-level broadcast, broadcast b, plain batch.
  count(checkMatmul<GemmShape<37, 45, 29>,
                    BatchMap<3, 37 * 29, 0, 4, 0, 29 * 45>, GemmSmall>(
      "a[3,1,37,29] x b[4,29,45]", 3 * 37 * 29, 4 * 29 * 45, "small"));
  count(checkMatmul<GemmShape<33, 52, 20>, BatchMap<5, 33 * 20, 0>, GemmSmall>(
      "a[5,33,20] x b[20,52]", 5 * 33 * 20, 20 * 52, "small"));
  count(checkMatmul<GemmShape<64, 96, 128>, BatchMap<2, 64 * 128, 128 * 96>,
                    GemmLarge>("a[2,64,128] x b[2,128,96]", 2 * 64 * 128,
                               2 * 128 * 96, "large"));
  count(
      checkMatmul<GemmShape<150, 131, 67>, BatchMap<2, 0, 67 * 131>, GemmLarge>(
          "a[150,67] x b[2,67,131]", 150 * 67, 2 * 67 * 131, "large"));

  // conv2d: the general gather, the one-tap-per-slice path, CoutG > 64.
  count(
      checkConv<Conv2dParams<2, 6, 17, 19, 8, 3, 3, 2, 2, 1, 1, 2, 2, 2>, true,
                TileConfigOf<kiln::kConvNarrow>>("s2 p1 d2 g2", "narrow"));
  count(checkConv<Conv2dParams<3, 64, 33, 31, 64, 3, 3, 1, 1, 1, 1>, true,
                  TileConfigOf<kiln::kConvWide>>("k3 p1", "wide"));
  count(checkConv<Conv2dParams<2, 16, 15, 15, 100, 1, 1>, false,
                  TileConfigOf<kiln::kConvLarge>>("1x1", "large"));
  count(checkConv<Conv2dParams<2, 24, 12, 10, 36, 3, 2, 1, 2, 0, 1, 1, 1, 3>,
                  true, TileConfigOf<kiln::kConvNarrow>>("k3x2 g3", "narrow"));

  // conv_transpose2d.
  count(checkConv<
        ConvTranspose2dParams<2, 6, 7, 9, 4, 3, 3, 2, 2, 1, 1, 1, 1, 2, 1, 1>,
        true, TileConfigOf<kiln::kConvNarrow>>("s2 p1 op1 g2", "narrow"));
  count(checkConv<
        ConvTranspose2dParams<2, 4, 5, 6, 6, 3, 2, 2, 3, 1, 0, 2, 1, 2, 1, 2>,
        true, TileConfigOf<kiln::kConvNarrow>>(
      "k3x2 s(2,3) p(1,0) d(2,1) op(1,2) g2", "narrow"));
  count(checkConv<ConvTranspose2dParams<2, 64, 20, 20, 64, 3, 3>, true,
                  TileConfigOf<kiln::kConvWide>>("k3", "wide"));
  count(checkConv<ConvTranspose2dParams<1, 32, 9, 11, 160, 4, 4, 2, 2, 1, 1>,
                  false, TileConfigOf<kiln::kConvLarge>>("k4 s2 p1", "large"));

  // The timed shapes.
  if (quick) {
    std::printf("%s: %d case(s) failed (--quick: large cases skipped)\n",
                failed ? "FAIL" : "PASS", failed);
    return failed ? 1 : 0;
  }
  std::printf("-- timed --\n");
  count(checkConv<ConvTranspose2dParams<128, 64, 256, 256, 64, 3, 3>, true,
                  TileConfigOf<kiln::kConvWide>>("L2_19", "wide", true));
  count(checkLinear<GemmShape<32768, 4096, 1024>, true, GemmLarge>("large",
                                                                   true));

  std::printf("%s: %d case(s) failed\n", failed ? "FAIL" : "PASS", failed);
  return failed ? 1 : 0;
}
