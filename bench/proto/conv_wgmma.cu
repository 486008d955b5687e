// Prototype (issue 27): conv_transpose2d, stride 1, 3 x 3, as an implicit
// GEMM on Hopper's tensor cores, reading and writing NCHW directly.
//
// y[n][co][oh][ow] = b[co] + sum over ci, kh, kw of
//                    x[n][ci][oh - kh][ow - kw] * w[ci][co][kh][kw]
// (x outside its image reads 0; Ho = H + 2, Wo = W + 2).
//
// GEMM: M = output pixels (tiles of 16 x 16), N = Cout (64), K = (tap, ci).
// A (pixels x K) comes from registers (wgmma's RS form): each consumer
// thread loads its fragments from an input patch in shared memory (the
// tile's 18 x 18 pixels of 16 channels, a plane padded to 8 mod 32 words,
// so the fragment loads are free of bank conflicts). B (K x Cout) is the
// whole weight, resident in shared memory for the block's life, K-major
// and 128-byte swizzled as wgmma reads it. A producer warpgroup copies the
// patches (4-byte cp.async, zero outside the image) into a 3-stage ring; two
// consumer warpgroups each multiply 128 pixels (8 rows of the tile).
//
//   nvcc -O3 -arch=sm_90a -std=c++17 -I templates -I bench/proto \
//        bench/proto/conv_wgmma.cu -o conv_wgmma -lcuda [-DV16=1 ...]
//   ./conv_wgmma            # checks against float64, then times L2_19's shape
//
// What it measured (H200, bench/NOTES.md v22): 4-byte copies 5.47 ms;
// 16-byte copies (V16) 3.68, 3.34 with the stores grouped as in the
// template (kiln/wgmma_conv.cuh, which this became); without stores
// (NOSTORE, a bound) 2.54. Loading fragments ahead (PIPE) and deferring
// the stores into the next tile (DEFER) were slower; TMA (TMA) stopped on
// an illegal instruction, not pursued.
#include "kiln/wgmma_conv.cuh"

#include "proto_util.cuh"

// Experiments: PIPE n loads the A fragments n steps ahead; NOSTORE skips
// the stores (a bound, not a result).
#ifndef PIPE
#define PIPE 0
#endif
#ifndef NOSTORE
#define NOSTORE 0
#endif
// TMA 1: the producer's one thread loads each patch with the tensor memory
// accelerator (cp.async.bulk.tensor, a 4-D box of x, zeros outside it).
#ifndef TMA
#define TMA 0
#endif
// DEFER 1: a tile's stores wait for the next tile's first chunk, one group
// a step, while its products run.
#ifndef DEFER
#define DEFER 0
#endif
// V16 1: 16-byte cp.async of whole 4-float chunks (W % 4 == 0).
#ifndef V16
#define V16 0
#endif
#include <cuda.h>

#include <cmath>

namespace cw {
using namespace kiln;

constexpr int Cin = 64, Cout = 64, KT = 9; // 3 x 3 taps
constexpr int TH = 16, TW = 16;            // output tile
constexpr int PH = TH + 2, PW = TW + 2;    // input patch
#if TMA || V16
// TMA's box, or 16-byte copies: 20 columns from 4 left of the tile (rows of
// 16-byte multiples), 18 rows, 16 channels; the plane of 360 words is 8 mod
// 32.
constexpr int RowW = 20, Left = 4;
constexpr int Plane = PH * RowW;
#else
constexpr int RowW = PW, Left = 2;
constexpr int Plane = 328; // PH * PW = 324, to 8 mod 32
#endif
constexpr int CC = 16; // channels a stage
constexpr int S = 3;   // stages
constexpr int StageFloats = CC * Plane;
constexpr int WSlices = KT * Cin / 32; // 64 x 32 floats each (8 KiB)
constexpr int WBytes = WSlices * 8192;
constexpr int SharedBytes = WBytes + S * StageFloats * 4 + 1024;
static_assert(StageFloats * 4 % 128 == 0, "TMA writes 128-byte aligned");

#ifdef KILN_HAS_WGMMA
using namespace kiln::wg;

// (The m64n64k8 RS wgmma and the copies' arrival: wgmma_conv.cuh's.)

__device__ __forceinline__ void copy4(unsigned dst, const float *src,
                                      bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(dst),
               "l"(src), "r"(valid ? 4 : 0)
               : "memory");
}

#endif

#ifdef KILN_HAS_WGMMA
__device__ __forceinline__ void expectBytes(u64 *b, unsigned bytes) {
  asm volatile(
      "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem(b)),
      "r"(bytes)
      : "memory");
}
__device__ __forceinline__ void tmaLoad4(unsigned dst, const CUtensorMap *map,
                                         int c0, int c1, int c2, int c3,
                                         u64 *bar) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::"
      "complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];" ::"r"(dst),
      "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(smem(bar))
      : "memory");
}
#endif

template <int N, int H, int W>
__global__ void __launch_bounds__(384, 1)
    convT(const float *__restrict__ x, const float *__restrict__ w,
          const float *__restrict__ bias, float *__restrict__ y,
          const __grid_constant__ CUtensorMap map) {
#ifdef KILN_HAS_WGMMA
  constexpr int Ho = H + 2, Wo = W + 2;
  constexpr int tilesR = (Ho + TH - 1) / TH, tilesC = (Wo + TW - 1) / TW;
  constexpr int tiles = N * tilesR * tilesC;
  constexpr int chunks = Cin / CC;
  extern __shared__ unsigned char shared[];
  __shared__ u64 full[S], empty[S];
  unsigned char *base = reinterpret_cast<unsigned char *>(
      (reinterpret_cast<unsigned long long>(shared) + 1023) & ~1023ull);
  float *patch = reinterpret_cast<float *>(base + WBytes);
  if (threadIdx.x == 0)
    for (int s = 0; s < S; ++s) {
      barrierInit(&full[s], TMA ? 1 : 128);
      barrierInit(&empty[s], 8);
    }
  // The weight, K-major: slice tap * 2 + ci / 32, row co, ci % 32 in the
  // row's swizzled 16-byte chunks.
  for (int i = threadIdx.x; i < Cout * KT * Cin; i += blockDim.x) {
    const int ci = i % Cin, co = i / Cin % Cout, t = i / (Cin * Cout);
    const float v = w[(ci * Cout + co) * KT + t];
    const int c32 = ci % 32;
    const unsigned off = (t * 2 + ci / 32) * 8192 + co * 128 +
                         (((c32 / 4) ^ (co % 8)) << 4) + (c32 % 4) * 4;
    *reinterpret_cast<float *>(base + off) = v;
  }
  fenceAsyncProxy();
  __syncthreads();
  const int role = threadIdx.x / 128;
  if (role == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 72;");
    const int p = threadIdx.x;
    int it = 0;
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      const int n = tile / (tilesR * tilesC);
      const int tr = tile / tilesC % tilesR, tc = tile % tilesC;
      const int ih0 = tr * TH - 2, iw0 = tc * TW - Left;
      for (int chunk = 0; chunk < chunks; ++chunk, ++it) {
        const int s = it % S;
        if (it >= S)
          barrierWait(&empty[s], (it / S - 1) & 1);
        const unsigned dst = smem(patch + s * StageFloats);
#if TMA
        if (p == 0) {
          expectBytes(&full[s], StageFloats * 4);
          tmaLoad4(dst, &map, iw0, ih0, chunk * CC, n, &full[s]);
        }
#elif V16
        static_assert(W % 4 == 0, "whole 16-byte chunks");
        const float *src = x + (static_cast<i64>(n) * Cin + chunk * CC) * H * W;
        for (int e = p; e < CC * PH * (RowW / 4); e += 128) {
          const int row = e / (RowW / 4), q4 = e % (RowW / 4);
          const int ci = row / PH, r = row % PH;
          const int ih = ih0 + r, iw = iw0 + 4 * q4;
          const bool in = ih >= 0 && ih < H && iw >= 0 && iw < W;
          copy16(dst + (ci * Plane + r * RowW + 4 * q4) * 4,
                 in ? src + (static_cast<i64>(ci) * H + ih) * W + iw : x, in);
        }
        arriveOnCopies(&full[s]);
#else
        const float *src = x + (static_cast<i64>(n) * Cin + chunk * CC) * H * W;
        for (int e = p; e < CC * PH * PW; e += 128) {
          const int ci = e / (PH * PW), r = e / PW % PH, c = e % PW;
          const int ih = ih0 + r, iw = iw0 + c;
          const bool in = ih >= 0 && ih < H && iw >= 0 && iw < W;
          copy4(dst + (ci * Plane + r * RowW + c) * 4,
                in ? src + (static_cast<i64>(ci) * H + ih) * W + iw : x, in);
        }
        arriveOnCopies(&full[s]);
#endif
      }
    }
    return;
  }
  asm volatile("setmaxnreg.inc.sync.aligned.u32 216;");
  const int c = role - 1, lane = threadIdx.x % 32, q = threadIdx.x / 32 % 4;
  const int g = lane / 4, tq = lane % 4;
  const unsigned wBase = smem(base);
  // The stores of the last tile's (b, j) group u (16 groups of 4 values):
  // pixel row 8c + 4b + q, columns g and g + 8; channels 8j + 2tq + e
  // (acc[b][4 j + 2 h + e]).
  float prev[2][32];
  int prevTile = -1;
  auto storeGroup = [&](int u) {
    if (prevTile < 0)
      return;
    const int b = u / 8, j = u % 8;
    const int n = prevTile / (tilesR * tilesC);
    const int tr = prevTile / tilesC % tilesR, tc = prevTile % tilesC;
    const int oh = tr * TH + 8 * c + 4 * b + q;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int ow = tc * TW + g + 8 * h;
      if (oh >= Ho || ow >= Wo)
        continue;
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int co = 8 * j + 2 * tq + e;
#if NOSTORE
        if (prev[b][4 * j + 2 * h + e] == 12345.f)
#endif
          y[((static_cast<i64>(n) * Cout + co) * Ho + oh) * Wo + ow] =
              prev[b][4 * j + 2 * h + e] + bias[co];
      }
    }
  };
  int it = 0;
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    float acc[2][32];
#pragma unroll
    for (int b = 0; b < 2; ++b)
#pragma unroll
      for (int i = 0; i < 32; ++i)
        acc[b][i] = 0.f;
    for (int chunk = 0; chunk < chunks; ++chunk, ++it) {
      const int s = it % S;
      barrierWait(&full[s], (it / S) & 1);
      const float *P = patch + s * StageFloats + tq * Plane + g;
      // Step u = 2 t + ks: tap t, channels 8 ks + tq (and + 4) of the
      // stage's 16. Its fragments: pixel row 8c + 4b + q of the tile,
      // columns g and g + 8.
      auto load = [&](int u, unsigned(&a)[2][4]) {
        const int t = u / 2, ks = u % 2, kh = t / 3, kw = t % 3;
#pragma unroll
        for (int b = 0; b < 2; ++b) {
          const float *at = P + ks * 8 * Plane +
                            (8 * c + 4 * b + q + 2 - kh) * RowW + Left - kw;
          a[b][0] = __float_as_uint(at[0]);
          a[b][1] = __float_as_uint(at[8]);
          a[b][2] = __float_as_uint(at[4 * Plane]);
          a[b][3] = __float_as_uint(at[4 * Plane + 8]);
        }
      };
#pragma unroll
      for (int u = 0; u < 2 * KT; ++u) {
        unsigned a[2][4];
        load(u, a);
        const int t = u / 2, ks = u % 2;
        const int k32 = (chunk % 2) * 2 + ks; // 8-wide step in the slice
        const u64 db = descriptor(wBase + (t * 2 + chunk / 2) * 8192) + 2 * k32;
        pin(acc[0]);
        pin(acc[1]);
        mmaFence();
        wgmmaTf32RsN64(acc[0], a[0], db);
        wgmmaTf32RsN64(acc[1], a[1], db);
        mmaCommit();
#if DEFER
        // The last tile's stores, a group a step, while the products run.
        if (chunk == 0 && u < 16)
          storeGroup(u);
#endif
        mmaWait<1>();
      }
      __syncwarp();
      if (lane == 0)
        barrierArrive(&empty[s]);
    }
    mmaWait<0>();
    pin(acc[0]);
    pin(acc[1]);
#pragma unroll
    for (int b = 0; b < 2; ++b)
#pragma unroll
      for (int i = 0; i < 32; ++i)
        prev[b][i] = acc[b][i];
    prevTile = tile;
#if !DEFER
#pragma unroll
    for (int u = 0; u < 16; ++u)
      storeGroup(u);
    prevTile = -1;
#endif
  }
#pragma unroll
  for (int u = 0; u < 16; ++u)
    storeGroup(u);
#endif
}

/// The same in float64, every `step`-th output element.
__global__ void reference(const float *x, const float *w, const float *bias,
                          double *ref, int N, int H, int W, i64 step) {
  const int Ho = H + 2, Wo = W + 2;
  const i64 total = i64(N) * Cout * Ho * Wo;
  const i64 k = blockIdx.x * i64(blockDim.x) + threadIdx.x;
  if (k * step >= total)
    return;
  const i64 o = k * step;
  const int ow = o % Wo, oh = o / Wo % Ho, co = o / (i64(Wo) * Ho) % Cout;
  const int n = o / (i64(Wo) * Ho * Cout);
  double s = bias[co];
  for (int ci = 0; ci < Cin; ++ci)
    for (int kh = 0; kh < 3; ++kh)
      for (int kw = 0; kw < 3; ++kw) {
        const int ih = oh - kh, iw = ow - kw;
        if (ih < 0 || ih >= H || iw < 0 || iw >= W)
          continue;
        s += double(x[((i64(n) * Cin + ci) * H + ih) * W + iw]) *
             double(w[(ci * Cout + co) * 9 + kh * 3 + kw]);
      }
  ref[k] = s;
}

template <int N, int H, int W> struct Problem {
  static constexpr int Ho = H + 2, Wo = W + 2;
  static constexpr i64 xn = i64(N) * Cin * H * W, yn = i64(N) * Cout * Ho * Wo;
  float *x, *w, *b, *y;
  Problem() {
    CK(cudaMalloc(&x, xn * 4));
    CK(cudaMalloc(&w, Cin * Cout * 9 * 4));
    CK(cudaMalloc(&b, Cout * 4));
    CK(cudaMalloc(&y, yn * 4));
    fillRandom<<<1024, 256>>>(x, xn, 1, -0.5f);
    fillRandom<<<64, 256>>>(w, Cin * Cout * 9, 2, -0.5f);
    fillRandom<<<1, 64>>>(b, Cout, 3, -0.5f);
    encode();
    CK(cudaFuncSetAttribute(convT<N, H, W>,
                            cudaFuncAttributeMaxDynamicSharedMemorySize,
                            SharedBytes));
  }
  CUtensorMap map{};
  void encode() {
#if TMA
    cuuint64_t dims[4] = {W, H, Cin, N};
    cuuint64_t strides[3] = {cuuint64_t(W) * 4, cuuint64_t(H) * W * 4,
                             cuuint64_t(Cin) * H * W * 4};
    cuuint32_t box[4] = {RowW, PH, CC, 1}, unit[4] = {1, 1, 1, 1};
    CUresult r = cuTensorMapEncodeTiled(
        &map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, x, dims, strides, box, unit,
        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
        CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
      std::printf("cuTensorMapEncodeTiled: %d\n", int(r));
      std::exit(1);
    }
#endif
  }
  void run(int grid) {
    convT<N, H, W><<<grid, 384, SharedBytes>>>(x, w, b, y, map);
  }
  /// Relative L2 error over every step-th element; outputs poisoned first.
  double check(int grid, i64 step) {
    CK(cudaMemset(y, 0xff, yn * 4)); // NaN
    run(grid);
    CK(cudaGetLastError());
    const i64 count = (yn + step - 1) / step;
    double *ref;
    CK(cudaMalloc(&ref, count * 8));
    reference<<<(count + 255) / 256, 256>>>(x, w, b, ref, N, H, W, step);
    CK(cudaDeviceSynchronize());
    const double err = relErrEvery(y, yn, ref, step);
    CK(cudaFree(ref));
    return err;
  }
};

} // namespace cw

int main() {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  {
    // Odd sizes cross every tile edge (TMA: rows of 16-byte multiples).
    constexpr int SW = TMA || V16 ? 44 : 45;
    cw::Problem<3, 37, SW> small;
    std::printf("small [3, 64, 37, %d]: rel err %.3e (TF32)\n", SW,
                small.check(sms, 1));
  }
  cw::Problem<128, 256, 256> big; // L2_19
  std::printf("L2_19 [128, 64, 256, 256]: rel err %.3e (every 97th)\n",
              big.check(sms, 97));
  Timer timer;
  const double ms = timer.median([&] { big.run(sms); }, 3, 20);
  const double flops = 2.0 * big.yn * 64 * 9;
  std::printf("L2_19 conv: %.3f ms, %.1f TFLOP/s (the real multiply-adds "
              "%.1f)\n",
              ms, flops / ms / 1e9,
              2.0 * 128 * 64 * 256 * 256 * 64 * 9 / ms / 1e9);
  return 0;
}
