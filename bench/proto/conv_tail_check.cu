// Checks the convolution's channel tail (wgmmaConv with a ConvTail: a min,
// max, sum, mean or logsumexp over the output channels in the epilogue)
// on the GPU, beside the suite's cases (conv_tc_*_channels*):
//  - wg::quadReduce against reduce.cuh's reduceOne on crafted values (NaN,
//    +-inf, all -inf, +-0) for NB 8 to 128;
//  - each kernel shape run twice, plain (ConvStore) and with the tail: y
//    must be the same bits, and the tail's result must match the reduction
//    of that y on the host (NaN and infinities exactly), over ping-pong,
//    3xTF32, both column phases of a strided conv_transpose2d (odd Wo too),
//    parts of 128, by phase, stride 2 and stride 3 with dilation, some with
//    NaN and infinite inputs.
//   nvcc -O3 -arch=sm_90a -std=c++17 -I templates \
//        bench/proto/conv_tail_check.cu -o conv_tail_check && ./conv_tail_check
// (Written by a review of the conv-tail branch; not yet run on a GPU.)
#include "kiln/wgmma_conv.cuh"
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>
using namespace kiln;
template <class G, int P, int NB, bool PB, bool PP, ReduceOp Op, bool T>
__global__ void __launch_bounds__(384, 1)
    K(const float *x, const float *w, const float *b, float *y, float *m) {
  if constexpr (T) {
    auto e = [&](i64 i, float(&v)[1]) { y[i] = v[0]; };
    auto d = [&](i64 k, float r) { m[k] = r; };
    ConvTail<Op, decltype(e), decltype(d)> t{e, d};
    wgmmaConv<G, true, P, NB, PB, 1, false, PP>(x, w, b, t);
  } else
    wgmmaConv<G, true, P, NB, PB, 1, false, PP>(x, w, b, ConvStore{y});
}
static bool same(float a, float b, double tol) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b))
    return a == b;
  return std::fabs(a - b) <= tol * (1 + std::fabs(b));
}
static float ref(ReduceOp op, const float *y, int C, long s) {
  bool nan = false;
  float mx = -INFINITY, mn = INFINITY;
  double sum = 0;
  for (int c = 0; c < C; ++c) {
    float v = y[c * s];
    if (v != v)
      nan = true;
    else {
      mx = fmaxf(mx, v);
      mn = fminf(mn, v);
    }
    sum += v;
  }
  if (op == ReduceOp::Min)
    return nan ? NAN : mn;
  if (op == ReduceOp::Max)
    return nan ? NAN : mx;
  if (op == ReduceOp::Sum)
    return (float)sum;
  if (op == ReduceOp::Mean)
    return (float)(sum / C);
  if (nan)
    return NAN;
  float sh = std::isinf(mx) ? 0.f : mx;
  double t = 0;
  for (int c = 0; c < C; ++c)
    t += expf(y[c * s] - sh);
  return logf((float)t) + sh;
}
template <class G, int P, int NB, bool PB, bool PP, ReduceOp Op>
void run(const char *name, int special) {
  constexpr int N = G::N, C = G::Cout, HW = G::Ho * G::Wo;
  size_t nx = (size_t)N * G::Cin * G::H * G::W,
         nw = (size_t)G::Cin * C * G::KHW, ny = (size_t)N * C * HW,
         nm = (size_t)N * HW;
  std::mt19937 r(7);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> hx(nx), hw(nw), hb(C), y(ny), y2(ny), m(nm);
  for (auto &v : hx)
    v = u(r);
  for (auto &v : hw)
    v = u(r) * 0.2f;
  for (auto &v : hb)
    v = u(r);
  if (special)
    for (size_t i = 0; i < nx; i += 1499)
      hx[i] = (i / 1499) % 3 == 0   ? NAN
              : (i / 1499) % 3 == 1 ? INFINITY
                                    : -INFINITY;
  float *x, *w, *b, *dy, *dy2, *dm;
  cudaMalloc(&x, nx * 4);
  cudaMalloc(&w, nw * 4);
  cudaMalloc(&b, C * 4);
  cudaMalloc(&dy, ny * 4);
  cudaMalloc(&dy2, ny * 4);
  cudaMalloc(&dm, nm * 4);
  cudaMemcpy(x, hx.data(), nx * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(w, hw.data(), nw * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(b, hb.data(), C * 4, cudaMemcpyHostToDevice);
  cudaMemset(dy, 0xff, ny * 4);
  cudaMemset(dy2, 0xff, ny * 4);
  cudaMemset(dm, 0x7f, nm * 4);
  constexpr WgmmaConvLayout L(G::kTransposed, G::KH, G::KW, G::SH, G::SW, G::PH,
                              G::PW, G::DH, G::DW, G::CinG, NB, P, PB, 4);
  auto k0 = K<G, P, NB, PB, PP, Op, false>;
  auto k1 = K<G, P, NB, PB, PP, Op, true>;
  cudaFuncSetAttribute(k0, cudaFuncAttributeMaxDynamicSharedMemorySize,
                       L.sharedBytes());
  cudaFuncSetAttribute(k1, cudaFuncAttributeMaxDynamicSharedMemorySize,
                       L.sharedBytes());
  k0<<<132, 384, L.sharedBytes()>>>(x, w, b, dy, nullptr);
  k1<<<132, 384, L.sharedBytes()>>>(x, w, b, dy2, dm);
  cudaError_t e = cudaDeviceSynchronize();
  cudaMemcpy(y.data(), dy, ny * 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(y2.data(), dy2, ny * 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(m.data(), dm, nm * 4, cudaMemcpyDeviceToHost);
  long by = 0, bm = 0, nn = 0, ni = 0;
  for (size_t i = 0; i < ny; ++i)
    if (memcmp(&y[i], &y2[i], 4))
      ++by;
  for (int n = 0; n < N; ++n)
    for (int p = 0; p < HW; ++p) {
      float rr = ref(Op, &y[(size_t)n * C * HW + p], C, HW),
            g = m[(size_t)n * HW + p];
      nn += std::isnan(rr);
      ni += std::isinf(rr);
      if (!same(g, rr, 2e-6)) {
        if (bm < 3)
          printf("  %s n%d p%d got %g want %g\n", name, n, p, g, rr);
        ++bm;
      }
    }
  printf("%-28s %s y-mismatch %ld m-mismatch %ld / %ld (nan %ld inf %ld)\n",
         name, cudaGetErrorString(e), by, bm, (long)nm, nn, ni);
  cudaFree(x);
  cudaFree(w);
  cudaFree(b);
  cudaFree(dy);
  cudaFree(dy2);
  cudaFree(dm);
}
template <ReduceOp Op, int NB>
__global__ void Q(const float *in, float *out, float *rf) {
  int lane = threadIdx.x % 32, c = blockIdx.x * 8 + lane / 4, tq = lane % 4;
  float v[NB / 4];
  for (int j = 0; j < NB / 8; ++j)
    for (int e = 0; e < 2; ++e)
      v[2 * j + e] = in[c * NB + 8 * j + 2 * tq + e];
#ifdef KILN_HAS_WGMMA
  float r = wg::quadReduce<Op, NB>(v);
  if (tq == 0) {
    out[c] = r;
    rf[c] = reduceOne<Op, NB, 1>(c, 0,
                                 [&](i64 o, i64 k) { return in[o * NB + k]; });
  }
#endif
}
template <ReduceOp Op, int NB> void q(const char *name) {
  const int cases = 64;
  std::vector<float> h(cases * NB), o(cases), f(cases);
  std::mt19937 r(3);
  std::uniform_real_distribution<float> u(-3, 3);
  for (int c = 0; c < cases; ++c)
    for (int k = 0; k < NB; ++k) {
      float v = u(r);
      int t = c % 8;
      if (t == 1)
        v = -INFINITY;
      if (t == 2 && k == c % NB)
        v = NAN;
      if (t == 3)
        v = (k % 2) ? INFINITY : -INFINITY;
      if (t == 4 && k == 5)
        v = INFINITY;
      if (t == 5)
        v = INFINITY;
      if (t == 6)
        v = (k % 2) ? 0.f : -0.f;
      if (t == 7 && k < 3)
        v = -INFINITY;
      h[c * NB + k] = v;
    }
  float *d, *dout, *dr;
  cudaMalloc(&d, h.size() * 4);
  cudaMalloc(&dout, cases * 4);
  cudaMalloc(&dr, cases * 4);
  cudaMemcpy(d, h.data(), h.size() * 4, cudaMemcpyHostToDevice);
  Q<Op, NB><<<cases / 8, 32>>>(d, dout, dr);
  cudaError_t e = cudaDeviceSynchronize();
  cudaMemcpy(o.data(), dout, cases * 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(f.data(), dr, cases * 4, cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int c = 0; c < cases; ++c)
    if (!same(o[c], f[c], 1e-6)) {
      if (bad < 3)
        printf("  case %d got %g want %g\n", c, o[c], f[c]);
      ++bad;
    }
  printf("quad %-10s NB%-3d %s bad %d\n", name, NB, cudaGetErrorString(e), bad);
}
#define RO ReduceOp
int main() {
  q<RO::Min, 8>("min");
  q<RO::Max, 32>("max");
  q<RO::Sum, 64>("sum");
  q<RO::Mean, 16>("mean");
  q<RO::LogSumExp, 32>("lse");
  q<RO::LogSumExp, 128>("lse");
  run<Conv2dParams<2, 64, 19, 24, 64, 3, 3, 1, 1, 1, 1>, 1, 64, false, true,
      RO::Min>("pp64 min nan", 1);
  run<Conv2dParams<3, 32, 21, 30, 32, 3, 3, 1, 1, 1, 1>, 3, 32, false, false,
      RO::LogSumExp>("3xtf32 lse", 0);
  run<Conv2dParams<3, 32, 21, 30, 32, 3, 3, 1, 1, 1, 1>, 3, 32, false, false,
      RO::LogSumExp>("3xtf32 lse nan", 1);
  run<ConvTranspose2dParams<2, 16, 15, 17, 32, 4, 4, 2, 2, 1, 1>, 1, 32, false,
      false, RO::Mean>("ct cp2 mean", 0);
  run<ConvTranspose2dParams<2, 16, 10, 11, 32, 3, 3, 2, 2, 1, 1>, 1, 32, false,
      false, RO::Sum>("ct cp2 oddWo sum", 1);
  run<Conv2dParams<2, 16, 37, 44, 32, 3, 3, 1, 1, 1, 1>, 1, 32, false, true,
      RO::Max>("pp32 max", 1);
  run<Conv2dParams<2, 16, 20, 18, 128, 3, 3, 1, 1, 1, 1>, 1, 128, false, false,
      RO::Sum>("nb128 sum", 0);
  run<ConvTranspose2dParams<2, 16, 9, 11, 16, 3, 3, 2, 2, 1, 1>, 3, 16, false,
      false, RO::Max>("ct 3xtf32 phases max", 1);
  run<ConvTranspose2dParams<2, 16, 9, 11, 8, 3, 3, 2, 2, 1, 1>, 1, 8, true,
      false, RO::LogSumExp>("ct phaseBlocks lse", 1);
  run<Conv2dParams<2, 16, 33, 35, 32, 3, 3, 2, 2, 1, 1>, 1, 32, false, true,
      RO::Min>("s2 pp min", 1);
  run<ConvTranspose2dParams<1, 16, 7, 9, 16, 3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1>,
      1, 16, false, false, RO::Mean>("ct s3d2 mean", 0);
}
