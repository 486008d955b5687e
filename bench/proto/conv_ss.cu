// Prototype (issue 27): stride-1 convolutions with both wgmma operands in
// shared memory and the GEMM turned around: M = 64 output channels (the
// weight, K-major, 128-byte swizzled, as wgmma_conv.cuh keeps it), N = 256
// output pixels a consumer warpgroup (the input patch), K = (tap, input
// channel). TF32 wgmma reads only K-major operands, so the patch is stored
// channel-minor: planes of 4 channels, each pixel's 4 values in 16 bytes
// (no swizzle: a core matrix is 8 consecutive pixels, 128 contiguous
// bytes). Output rows are flattened with a row width RW >= Wo + the halo,
// so a tap is the patch shifted by dy RW + dx pixels: one descriptor
// offset, and a wgmma may span rows (the columns past Wo are computed and
// dropped). The loads read x (NCHW, 16 bytes a load), round to TF32 and
// transpose 4 x 4 among the 4 lanes of a quad with shuffles: the two
// consumer warpgroups load stage it + S - 1 right after issuing stage it's
// products (convSS2; the first version, a producer warpgroup doing it, ran
// 7.68 ms on L2_19 and is gone: bench/NOTES.md v25).
//
//   nvcc -O3 -arch=sm_90a -std=c++17 -I templates -I bench/proto \
//        bench/proto/conv_ss.cu -o conv_ss [-DNOSTORE=1 ...]
//   ./conv_ss      # checks convSS2 and the template (wgmmaConv) against
//                  # float64 (poisoned outputs), then times both
//
// What it measured (H100, bench/NOTES.md v25): correct, but slower than
// the template's RS kernel on every shape (L2_19 5.68 ms against 4.12):
// the transposing loads are latency-bound (ncu: 70% of the cycles waiting
// for global loads). Not wired in.
#include "kiln/wgmma_conv.cuh"

#include "proto_util.cuh"

#include <cmath>

// NOSTORE 1: sums the accumulators instead of storing them (a bound: ptxas
// drops a wgmma whose results are never read).
#ifndef NOSTORE
#define NOSTORE 0
#endif

namespace ss {
using namespace kiln;

template <class G> struct Lay {
  static constexpr bool Tr = G::kTransposed;
  static constexpr WgmmaConvLayout L{Tr,    G::KH, G::KW,  1,  1, G::PH, G::PW,
                                     G::DH, G::DW, G::Cin, 64, 1, false};
  static constexpr int NT = 512, NW = 256;
  static constexpr int Bx = L.dxMin < 0 ? (-L.dxMin + 3) / 4 * 4 : 0;
  static constexpr int RW = (G::Wo + L.dxMax + Bx + 3) / 4 * 4;
  static constexpr int VP = G::Ho * RW;
  static constexpr int TilesPerImage = (VP + NT - 1) / NT;
  static constexpr int Tiles = G::N * TilesPerImage;
  static constexpr int Span = (L.dyMax - L.dyMin) * RW + L.dxMax + Bx;
  static constexpr int P = (NT + Span + 31) / 32 * 32;
  static constexpr int Chunks = (G::Cin + 7) / 8, CinP = Chunks * 8;
  static constexpr int SPT = (CinP + 31) / 32;
  static constexpr int WeightBytes = G::KHW * SPT * 64 * 128;
  static constexpr int StageBytes = 2 * P * 16;
  static constexpr int S =
      WeightBytes + 3 * StageBytes + 1024 <= 227 * 1024 - 256 ? 3 : 2;
  static constexpr int Shared = WeightBytes + S * StageBytes + 1024;
};

#ifdef KILN_HAS_WGMMA
__device__ __forceinline__ u64 plainDesc(unsigned addr, unsigned lbo,
                                         unsigned sbo) {
  return static_cast<u64>((addr & 0x3FFFF) >> 4) |
         (static_cast<u64>((lbo >> 4) & 0x3FFF) << 16) |
         (static_cast<u64>((sbo >> 4) & 0x3FFF) << 32);
}

// v: channel (lane % 4)'s pixels 0..3 -> pixel (lane % 4)'s channels 0..3,
// among the 4 lanes of a quad.
__device__ __forceinline__ void transpose4(float4 &v, int c) {
  const bool hi = c & 2;
  float s0 = hi ? v.x : v.z, s1 = hi ? v.y : v.w;
  float r0 = __shfl_xor_sync(~0u, s0, 2), r1 = __shfl_xor_sync(~0u, s1, 2);
  if (hi)
    v.x = r0, v.y = r1;
  else
    v.z = r0, v.w = r1;
  const bool odd = c & 1;
  float t0 = odd ? v.x : v.y, t1 = odd ? v.z : v.w;
  float q0 = __shfl_xor_sync(~0u, t0, 1), q1 = __shfl_xor_sync(~0u, t1, 1);
  if (odd)
    v.x = q0, v.z = q1;
  else
    v.y = q0, v.w = q1;
}
#endif

// No producer warpgroup: the two consumer warpgroups load stage it + S - 1
// into registers right after issuing stage it's products, and transpose it
// into shared memory once both have finished stage it - 1 (its buffer).
template <class G, bool HasBias>
__global__ void __launch_bounds__(256, 1)
    convSS2(const float *__restrict__ x, const float *__restrict__ w,
            const float *__restrict__ bias, float *__restrict__ y) {
#ifdef KILN_HAS_WGMMA
  using namespace wg;
  using Y = Lay<G>;
  constexpr bool Tr = G::kTransposed;
  constexpr int Cin = G::Cin, H = G::H, W = G::W, Ho = G::Ho, Wo = G::Wo;
  constexpr int Cout = G::Cout, Parts = Cout / 64, KT = G::KHW;
  constexpr int RW = Y::RW, P = Y::P, S = Y::S, Chunks = Y::Chunks;
  constexpr int SPT = Y::SPT, CinP = Y::CinP;
  constexpr int dyMin = Y::L.dyMin;
  constexpr int U = (2 * P + 255) / 256; // float4 loads a thread a stage
  const int part = blockIdx.x % Parts, rank = blockIdx.x / Parts;
  const int stride = gridDim.x / Parts;
  extern __shared__ unsigned char dyn[];
  unsigned char *base = reinterpret_cast<unsigned char *>(
      (reinterpret_cast<unsigned long long>(dyn) + 1023) & ~1023ull);
  unsigned char *patch = base + Y::WeightBytes;
  const int tid = threadIdx.x, c = tid % 4;
  for (int t = 0; t < KT; ++t)
    for (int i = tid; i < 64 * CinP; i += blockDim.x) {
      const int ci = i % CinP, r = i / CinP, co = part * 64 + r;
      const float v = ci >= Cin ? 0.f
                      : Tr      ? w[(ci * Cout + co) * KT + t]
                                : w[(co * Cin + ci) * KT + t];
      const int c32 = ci % 32;
      const unsigned off = (t * SPT + ci / 32) * 8192 + r * 128 +
                           (((c32 / 4) ^ (r % 8)) << 4) + (c32 % 4) * 4;
      *reinterpret_cast<float *>(base + off) = roundTf32(v);
    }
  const int myTiles =
      rank < Y::Tiles ? (Y::Tiles - rank + stride - 1) / stride : 0;
  const int total = myTiles * Chunks;
  auto load = [&](int it, float4(&v)[U]) {
    const int tile = rank + it / Chunks * stride, chunk = it % Chunks;
    const int n = tile / Y::TilesPerImage;
    const int z0 = tile % Y::TilesPerImage * Y::NT + dyMin * RW;
    const float *src = x + (static_cast<i64>(n) * Cin + chunk * 8) * H * W;
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int e = tid + 256 * u;
      v[u] = make_float4(0.f, 0.f, 0.f, 0.f);
      if (e < 2 * P) {
        const int k4 = e / P, r = e % P;
        const int z = z0 + r; // r = 4 pg + c: z0 + 4 pg is the group's
        const int zg = z - c;
        const int ih = (zg + 8 * RW) / RW - 8;
        const int iw = zg - ih * RW - Y::Bx;
        const int ci = k4 * 4 + c;
        if (ih >= 0 && ih < H && iw >= 0 && iw < W &&
            (Cin % 8 == 0 || chunk * 8 + ci < Cin))
          v[u] = __ldg(reinterpret_cast<const float4 *>(
              src + (static_cast<i64>(ci) * H + ih) * W + iw));
      }
    }
  };
  auto store = [&](int it, float4(&v)[U]) {
    unsigned char *dst = patch + it % S * Y::StageBytes;
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int e = tid + 256 * u;
      if (e < 2 * P) { // whole warps: 2 P % 32 == 0
        float4 t = v[u];
        t.x = roundTf32(t.x), t.y = roundTf32(t.y);
        t.z = roundTf32(t.z), t.w = roundTf32(t.w);
        transpose4(t, c);
        const int k4 = e / P, r = e % P;
        *reinterpret_cast<float4 *>(dst + (k4 * P + r) * 16) = t;
      }
    }
  };
  for (int it = 0; it < S - 1 && it < total; ++it) {
    float4 v[U];
    load(it, v);
    store(it, v);
  }
  fenceAsyncProxy();
  __syncthreads();
  const int cg = tid / 128, lane = tid % 32, wq = tid / 32 % 4;
  const int g = lane / 4, tq = lane % 4;
  const unsigned wBase = smem(base), pBase = smem(patch);
  float b[2];
  for (int h = 0; h < 2; ++h)
    b[h] = HasBias ? bias[part * 64 + 16 * wq + 8 * h + g] : 0.f;
  float acc[128];
  int it = 0;
  for (int k = 0; k < myTiles; ++k) {
    const int tile = rank + k * stride;
    for (int chunk = 0; chunk < Chunks; ++chunk, ++it) {
      const int s = it % S;
      mmaFence();
#pragma unroll
      for (int t = 0; t < KT; ++t) {
        const int kh = t / G::KW, kw = t % G::KW;
        const int dy = convTapShift(Tr, kh, 1, G::PH, G::DH, 0);
        const int dx = convTapShift(Tr, kw, 1, G::PW, G::DW, 0);
        const int sB = Y::NW * cg + (dy - dyMin) * RW + dx + Y::Bx;
        const u64 da =
            descriptor(wBase + (t * SPT + chunk / 4) * 8192) + 2 * (chunk % 4);
        const u64 db =
            plainDesc(pBase + s * Y::StageBytes + sB * 16, P * 16, 128);
        wgmmaSS<kWgmmaTf32, 256>(acc, da, db, t > 0 || chunk > 0);
      }
      mmaCommit();
      const bool pf = it + S - 1 < total;
      float4 v[U];
      if (pf)
        load(it + S - 1, v);
      mmaWait<1>();
      asm volatile("bar.sync 1, 256;" ::: "memory"); // stage it - 1 read
      if (pf) {
        store(it + S - 1, v);
        fenceAsyncProxy();
      }
      if (S == 2)
        asm volatile("bar.sync 1, 256;" ::: "memory"); // stage it + 1 written
    }
    mmaWait<0>();
    pin(acc);
    const int n = tile / Y::TilesPerImage;
    const int v0 = tile % Y::TilesPerImage * Y::NT;
#if !NOSTORE
#pragma unroll
    for (int j = 0; j < 32; ++j) {
      const int vv = v0 + Y::NW * cg + 8 * j + 2 * tq;
      const int oh = vv / RW, ow = vv - oh * RW;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int co = part * 64 + 16 * wq + 8 * h + g;
        const i64 i = ((static_cast<i64>(n) * Cout + co) * Ho + oh) * Wo + ow;
        const float a0 = acc[4 * j + 2 * h] + b[h];
        const float a1 = acc[4 * j + 2 * h + 1] + b[h];
        if (oh < Ho && ow < Wo) {
          if constexpr (Wo % 2 == 0) {
            *reinterpret_cast<float2 *>(y + i) = make_float2(a0, a1);
          } else {
            y[i] = a0;
            if (ow + 1 < Wo)
              y[i + 1] = a1;
          }
        }
      }
    }
#else
    float sum = 0.f; // keeps the products live (ptxas drops dead wgmma)
#pragma unroll
    for (int i = 0; i < 128; ++i)
      sum += acc[i];
    if (sum == 1234.5f)
      y[tid] = sum;
#endif
  }
#endif
}

template <class G, bool HasBias>
__global__ void __launch_bounds__(384, 1)
    convBase(const float *__restrict__ x, const float *__restrict__ w,
             const float *__restrict__ bias, float *__restrict__ y) {
  wgmmaConv<G, HasBias, 1, 64>(x, w, bias, ConvStore{y});
}

// PyTorch's definitions, in double.
template <class G>
__global__ void reference(const float *x, const float *w, const float *bias,
                          double *ref, i64 step) {
  const i64 total = i64(G::N) * G::Cout * G::Ho * G::Wo;
  const i64 k = blockIdx.x * i64(blockDim.x) + threadIdx.x;
  if (k * step >= total)
    return;
  const i64 o = k * step;
  const int ow = o % G::Wo, oh = o / G::Wo % G::Ho;
  const int co = o / (i64(G::Wo) * G::Ho) % G::Cout;
  const int n = o / (i64(G::Wo) * G::Ho * G::Cout);
  double s = bias[co];
  for (int ci = 0; ci < G::Cin; ++ci)
    for (int kh = 0; kh < G::KH; ++kh)
      for (int kw = 0; kw < G::KW; ++kw) {
        int ih, iw;
        if (G::kTransposed) {
          ih = oh + G::PH - kh * G::DH, iw = ow + G::PW - kw * G::DW;
        } else {
          ih = oh - G::PH + kh * G::DH, iw = ow - G::PW + kw * G::DW;
        }
        if (ih < 0 || ih >= G::H || iw < 0 || iw >= G::W)
          continue;
        const double wv =
            G::kTransposed ? w[((ci * G::Cout + co) * G::KH + kh) * G::KW + kw]
                           : w[((co * G::Cin + ci) * G::KH + kh) * G::KW + kw];
        s += double(x[((i64(n) * G::Cin + ci) * G::H + ih) * G::W + iw]) * wv;
      }
  ref[k] = s;
}

template <class G> struct Problem {
  static constexpr i64 xn = i64(G::N) * G::Cin * G::H * G::W;
  static constexpr i64 yn = i64(G::N) * G::Cout * G::Ho * G::Wo;
  static constexpr int wn = G::Cin * G::Cout * G::KHW;
  static constexpr WgmmaConvLayout BL{
      G::kTransposed, G::KH, G::KW,  G::SH, G::SW, G::PH, G::PW,
      G::DH,          G::DW, G::Cin, 64,    1,     false};
  float *x, *w, *b, *y;
  int sms;
  Problem(int sms_) : sms(sms_) {
    CK(cudaMalloc(&x, xn * 4));
    CK(cudaMalloc(&w, wn * 4));
    CK(cudaMalloc(&b, G::Cout * 4));
    CK(cudaMalloc(&y, yn * 4));
    fillRandom<<<1024, 256>>>(x, xn, 1, 0.f); // [0, 1): one sign
    fillRandom<<<64, 256>>>(w, wn, 2, -0.5f);
    fillRandom<<<1, 128>>>(b, G::Cout, 3, -0.5f);
    CK(cudaFuncSetAttribute(convSS2<G, true>,
                            cudaFuncAttributeMaxDynamicSharedMemorySize,
                            Lay<G>::Shared));
    CK(cudaFuncSetAttribute(convBase<G, true>,
                            cudaFuncAttributeMaxDynamicSharedMemorySize,
                            BL.sharedBytes()));
  }
  ~Problem() { cudaFree(x), cudaFree(w), cudaFree(b), cudaFree(y); }
  int grid(i64 items, int parts) const {
    i64 g = sms / parts * parts;
    return int(std::min<i64>(g, items * parts));
  }
  void runSS2() {
    convSS2<G, true>
        <<<grid(Lay<G>::Tiles, G::Cout / 64), 256, Lay<G>::Shared>>>(x, w, b,
                                                                     y);
  }
  void runBase() {
    const i64 items = wgmmaConvItems(G::N, G::Ho, G::Wo, 1, 1);
    convBase<G, true>
        <<<grid(items, G::Cout / 64), 384, BL.sharedBytes()>>>(x, w, b, y);
  }
  template <class F> double check(F run, i64 step) {
    CK(cudaMemset(y, 0xff, yn * 4)); // NaN
    run();
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    const i64 count = (yn + step - 1) / step;
    double *ref;
    CK(cudaMalloc(&ref, count * 8));
    reference<G><<<(count + 255) / 256, 256>>>(x, w, b, ref, step);
    CK(cudaDeviceSynchronize());
    const double err = relErrEvery(y, yn, ref, step);
    CK(cudaFree(ref));
    return err;
  }
  void go(const char *name, i64 step, bool time) {
    using Y = Lay<G>;
    std::printf("%-28s RW %d P %d stages %d smem %d tiles %d | ", name, Y::RW,
                Y::P, Y::S, Y::Shared, Y::Tiles);
    const double eS2 = check([&] { runSS2(); }, step);
    const double eB = check([&] { runBase(); }, step);
    std::printf("err ss2 %.2e base %.2e", eS2, eB);
    if (time) {
      Timer timer;
      const double t2 = timer.median([&] { runSS2(); }, 3, 15);
      const double tB = timer.median([&] { runBase(); }, 3, 15);
      const double fl = 2.0 * yn * G::Cin * G::KHW;
      std::printf(" | ss2 %.3f ms (%.0f TF/s) base %.3f ms (%.0f)", t2,
                  fl / t2 / 1e9, tB, fl / tB / 1e9);
    }
    std::printf("\n");
    std::fflush(stdout);
  }
};

} // namespace ss

int main() {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  using namespace kiln;
  {
    ss::Problem<Conv2dParams<3, 64, 37, 44, 64, 3, 3, 1, 1, 1, 1>> p(sms);
    p.go("c2d 64->64 [3,37,44]", 1, false);
  }
  {
    ss::Problem<ConvTranspose2dParams<2, 32, 19, 20, 128, 3, 3>> p(sms);
    p.go("ct2d 32->128 [2,19,20]", 1, false);
  }
  {
    ss::Problem<Conv2dParams<2, 24, 13, 12, 64, 3, 3, 1, 1, 0, 2, 1, 2>> p(sms);
    p.go("c2d 24->64 pw2 dw2 [2,13,12]", 1, false);
  }
  {
    ss::Problem<ConvTranspose2dParams<128, 64, 256, 256, 64, 3, 3>> p(sms);
    p.go("L2_19 ct2d 64->64", 101, true);
  }
  {
    ss::Problem<Conv2dParams<32, 32, 256, 256, 64, 3, 3, 1, 1, 1, 1>> p(sms);
    p.go("c2d 32->64 [32,256]", 101, true);
  }
  {
    ss::Problem<Conv2dParams<32, 64, 256, 256, 64, 3, 3, 1, 1, 1, 1>> p(sms);
    p.go("c2d 64->64 [32,256]", 101, true);
  }
  {
    ss::Problem<Conv2dParams<16, 64, 256, 256, 128, 3, 3, 1, 1, 1, 1>> p(sms);
    p.go("c2d 64->128 [16,256]", 101, true);
  }
  {
    ss::Problem<Conv2dParams<64, 16, 256, 256, 64, 3, 3, 1, 1, 1, 1>> p(sms);
    p.go("c2d 16->64 [64,256]", 101, true);
  }
  return 0;
}
