//===- wgmma_conv.cuh - stride-1 convolutions on tensor cores -*- CUDA -*-===//
//
// conv2d and conv_transpose2d with stride 1 and one group, 64 output
// channels, f32 NCHW tensors; TF32 products (Passes 1: Kiln's `high` and
// `medium`) or 3xTF32 (Passes 3: `highest`, as wgmma.cuh's linear; each
// block then keeps the weight's big and small parts for 32 of the output
// channels, alternating halves, and adds each tap's tensor-core sums into
// an fp32 total):
//   wgmmaConv<Conv2dParams<...> or ConvTranspose2dParams<...>, HasBias,
//             Passes>(x, w, bias, y)
// y[n][co][oh][ow] = bias[co] + sum over ci, kh, kw of x[n][ci][oh + dy]
// [ow + dx] * w(ci, co, kh, kw), x outside its image reading 0, where
// conv2d has dy = kh DH - PH and w[co][ci][kh][kw], conv_transpose2d
// dy = PH - kh DH and w[ci][co][kh][kw] (likewise dx; WgmmaConvLayout,
// tiling.cuh).
//
// An implicit GEMM read and written in NCHW: M = a tile's 16 x 16 output
// pixels of one image, N = the 64 output channels, K = (tap, input
// channel). Each block keeps the whole weight in shared memory, K-major and
// 128-byte swizzled (slices of 64 x 32 floats), which wgmma reads as its B
// operand. Warpgroup 0 (the producer) copies each tile's input patch, 16
// channels at a time, into a ring of 3 stages with 16-byte cp.async (zeros
// outside the image; 2 stages where 3 do not fit); warpgroups 1 and 2 (the
// consumers) each multiply 8 rows of the tile: their A operand comes from
// registers (wgmma's RS form), each thread loading its fragments from the
// patch with one shared-memory word per value (channel planes 8 or 24 mod
// 32 words apart: no bank conflicts). A tap's fragments are the patch shifted
// by (dy, dx), so no im2col copy exists. Persistent: block b runs tiles b, b +
// gridDim.x, ...
//
// Requires (the scheduler checks, the template asserts): stride 1, one
// group, Cout 64, Cin % 16 == 0, W % 4 == 0 (16-byte rows), 16-byte
// aligned x, the weight and the ring within shared memory
// (WgmmaConvLayout::sharedBytes()). H200, L2_19's [128, 64, 256, 256]
// conv_transpose2d: 3.3 ms, about 190 TFLOP/s (cuDNN's TF32 kernel on
// NHWC: 2.5 ms; PyTorch's NCHW call: 6.7 ms).
//
// Launch: block 384 (kWgmmaThreads), grid up to wgmmaConvTiles(N, Ho, Wo)
// (one per SM; Passes 3: twice that, and even), dynamic shared memory
// WgmmaConvLayout::sharedBytes(),
// __launch_bounds__(384, 1). Compiles to a trap off sm_90a (the scheduler
// never picks it there).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_WGMMA_CONV_CUH
#define KILN_WGMMA_CONV_CUH

#include "kiln/conv.cuh"
#include "kiln/wgmma.cuh"

namespace kiln {

#ifdef KILN_HAS_WGMMA
namespace wg {

/// d[32] (+)= A * B, m64n64k8 TF32, A from registers (wgmmaTf32RsN128's
/// layout), B from shared memory.
__device__ __forceinline__ void
wgmmaTf32RsN64(float (&d)[32], const unsigned (&a)[4], u64 descB) {
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, "
      "%30, %31}, {%32, %33, %34, %35}, %36, 1, 1, 1;\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
        "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]),
        "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]),
        "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]),
        "+f"(d[31])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(descB));
}

/// d[16] (+)= A * B, m64n32k8 TF32, A from registers, B from shared memory.
__device__ __forceinline__ void
wgmmaTf32RsN32(float (&d)[16], const unsigned (&a)[4], u64 descB) {
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, "
      "%15}, {%16, %17, %18, %19}, %20, 1, 1, 1;\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
        "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]),
        "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(descB));
}

/// d (+)= A * B with the accumulators' width: n64 or n32.
template <int NB>
__device__ __forceinline__ void convMma(float (&d)[NB / 2],
                                        const unsigned (&a)[4], u64 descB) {
  if constexpr (NB == 64)
    wgmmaTf32RsN64(d, a, descB);
  else
    wgmmaTf32RsN32(d, a, descB);
}

/// Arrives on b once this thread's cp.async copies so far have landed (the
/// barrier counts the arrival among those it expects).
__device__ __forceinline__ void arriveOnCopies(u64 *b) {
  asm volatile(
      "cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(smem(b))
      : "memory");
}

} // namespace wg
#endif

template <class G, bool HasBias, int Passes = 1>
__device__ __forceinline__ void
wgmmaConv(const float *__restrict__ x, const float *__restrict__ w,
          const float *__restrict__ bias, float *__restrict__ y) {
  static_assert(G::SH == 1 && G::SW == 1 && G::G == 1 && G::Cout == 64,
                "stride 1, one group, 64 output channels");
  static_assert(G::Cin % kWgmmaConvChannels == 0 && G::W % 4 == 0,
                "whole stages, 16-byte rows");
  constexpr WgmmaConvLayout L(G::kTransposed, G::KH, G::KW, G::PH, G::PW, G::DH,
                              G::DW, G::Cin);
  static_assert(L.sharedBytes() <= kWgmmaConvSharedLimit, "fits shared memory");
#ifdef KILN_HAS_WGMMA
  using namespace wg;
  constexpr int Cin = G::Cin, H = G::H, W = G::W, Ho = G::Ho, Wo = G::Wo;
  static_assert(Passes == 1 || Passes == 3, "TF32 or 3xTF32");
  // Output channels a block: 3xTF32 keeps the weight's big and small parts
  // of half of them (its blocks alternate halves: gridDim.x even).
  constexpr int Cout = 64, NB = Passes == 3 ? 32 : 64, Halves = Cout / NB;
  constexpr int SliceBytes = NB * 128; // NB channels x 32 of K
  constexpr int KT = G::KHW, T = kWgmmaConvTile;
  constexpr int CC = kWgmmaConvChannels, S = L.stages;
  constexpr int SPT = (Cin + 31) / 32; // weight slices a tap
  constexpr int tilesR = (Ho + T - 1) / T, tilesC = (Wo + T - 1) / T;
  constexpr int tiles =
      static_cast<int>(wgmmaConvTiles(G::N, Ho, Wo)); // < 2^31: P is
  const int half = blockIdx.x % Halves; // this block's output channels
  const int first = blockIdx.x / Halves, stride = gridDim.x / Halves;
  extern __shared__ unsigned char wgmmaShared[];
  __shared__ u64 full[S], empty[S];
  unsigned char *base = reinterpret_cast<unsigned char *>(
      (reinterpret_cast<unsigned long long>(wgmmaShared) + kWgmmaAlign - 1) &
      ~static_cast<unsigned long long>(kWgmmaAlign - 1));
  float *patch = reinterpret_cast<float *>(base + L.weightBytes);
  if (threadIdx.x == 0)
    for (int s = 0; s < S; ++s) {
      // The producer's threads (once their copies land: arriveOnCopies);
      // every consumer thread (an arrival releases its own reads).
      barrierInit(&full[s], 128);
      barrierInit(&empty[s], 256);
    }
  // The weight (this block's NB output channels), once: slice t * SPT +
  // ci / 32, row r (channel half * NB + r), ci % 32 in the row's 16-byte
  // chunks swizzled by r % 8 (as the wgmma descriptor expects); 3xTF32: its
  // TF32 big parts, then the small ones (v - big, rounded) in as many
  // slices after them.
  for (int i = threadIdx.x; i < NB * KT * Cin; i += blockDim.x) {
    const int ci = i % Cin, r = i / Cin % NB, t = i / (Cin * NB);
    const int co = half * NB + r;
    const float v = G::kTransposed ? w[(ci * Cout + co) * KT + t]
                                   : w[(co * Cin + ci) * KT + t];
    const int c32 = ci % 32;
    const unsigned off = (t * SPT + ci / 32) * SliceBytes + r * 128 +
                         (((c32 / 4) ^ (r % 8)) << 4) + (c32 % 4) * 4;
    if constexpr (Passes == 3) {
      const float big = roundTf32(v);
      *reinterpret_cast<float *>(base + off) = big;
      *reinterpret_cast<float *>(base + KT * SPT * SliceBytes + off) =
          smallPart(v, big);
    } else {
      *reinterpret_cast<float *>(base + off) = v;
    }
  }
  fenceAsyncProxy();
  __syncthreads();
  const int role = threadIdx.x / 128;
  if (role == 0) {
    // The producer: each tile's patch, 16 channels a stage, 16 bytes a
    // copy (whole chunks of 4 columns: W % 4 == 0 and the patch starts at
    // a multiple of 4).
    // (The producer spilled on 72 with 3xTF32's code; 96 + 200 fits the
    // SM's registers: 128 x 96 + 256 x 200 < 64 Ki.)
    asm volatile("setmaxnreg.dec.sync.aligned.u32 96;");
    const int p = threadIdx.x;
    constexpr int chunksW = L.rowW / 4;
    int it = 0;
    for (int tile = first; tile < tiles; tile += stride) {
      const int n = tile / (tilesR * tilesC);
      const int ih0 = tile / tilesC % tilesR * T + L.dyMin;
      const int iw0 = tile % tilesC * T + L.left;
      for (int chunk = 0; chunk < Cin / CC; ++chunk, ++it) {
        const int s = it % S;
        if (it >= S)
          barrierWait(&empty[s], (it / S - 1) & 1);
        const unsigned dst = smem(patch) + s * L.stageBytes();
        const float *src = x + (static_cast<i64>(n) * Cin + chunk * CC) * H * W;
        for (int e = p; e < CC * L.rows * chunksW; e += 128) {
          const int row = e / chunksW, c4 = e % chunksW;
          const int ci = row / L.rows, r = row % L.rows;
          const int ih = ih0 + r, iw = iw0 + 4 * c4;
          const bool in = ih >= 0 && ih < H && iw >= 0 && iw < W;
          copy16(dst + (ci * L.plane + r * L.rowW + 4 * c4) * 4,
                 in ? src + (static_cast<i64>(ci) * H + ih) * W + iw : x, in);
        }
        arriveOnCopies(&full[s]);
      }
    }
    return;
  }
  asm volatile("setmaxnreg.inc.sync.aligned.u32 200;");
  // A consumer: pixel rows 8c + 4b + q of the tile (m64 block b = 0, 1),
  // columns g and g + 8 (fragment rows g, g + 8 of warp q); channels
  // 8j + 2tq + e of acc[b][4j + 2h + e].
  const int c = role - 1, lane = threadIdx.x % 32, q = threadIdx.x / 32 % 4;
  const int g = lane / 4, tq = lane % 4;
  const unsigned wBase = smem(base);
  float b[NB / 4];
#pragma unroll
  for (int j = 0; j < NB / 8; ++j)
#pragma unroll
    for (int e = 0; e < 2; ++e)
      b[2 * j + e] = HasBias ? bias[half * NB + 8 * j + 2 * tq + e] : 0.f;
  int it = 0;
  for (int tile = first; tile < tiles; tile += stride) {
    // TF32: the products accumulate in acc (buffer 0). 3xTF32: each tap's
    // (16 of K) accumulate in acc[tap % 2] from zero and are added into
    // total in fp32 once done, while the next tap's run (as the linear's
    // kWgmmaPromoteK: tensor-core sums over 144 of K, a stage's, left L2_19
    // 22% less accurate than fp32). TF32 never touches buffer 1 or total.
    float acc[2][2][NB / 2], total[2][NB / 2];
#pragma unroll
    for (int m = 0; m < 2; ++m)
#pragma unroll
      for (int i = 0; i < NB / 2; ++i)
        acc[0][m][i] = 0.f, acc[1][m][i] = 0.f, total[m][i] = 0.f;
    // total += acc[buf], then acc[buf] = 0 (its products are done).
    auto promote = [&](int buf) {
      pin(acc[buf][0]);
      pin(acc[buf][1]);
#pragma unroll
      for (int m = 0; m < 2; ++m)
#pragma unroll
        for (int i = 0; i < NB / 2; ++i)
          total[m][i] += acc[buf][m][i], acc[buf][m][i] = 0.f;
    };
    for (int chunk = 0; chunk < Cin / CC; ++chunk, ++it) {
      const int s = it % S;
      barrierWait(&full[s], (it / S) & 1);
      const float *P = patch + s * (L.stageBytes() / 4) + tq * L.plane + g;
      // Step u = 2 t + ks: tap t, channels 8 ks + tq and + 4 of the stage.
#pragma unroll
      for (int u = 0; u < 2 * KT; ++u) {
        const int t = u / 2, ks = u % 2;
        const int kh = t / G::KW, kw = t % G::KW;
        const int dy = G::kTransposed ? G::PH - kh * G::DH : kh * G::DH - G::PH;
        const int dx = G::kTransposed ? G::PW - kw * G::DW : kw * G::DW - G::PW;
        unsigned a[2][4];
#pragma unroll
        for (int m = 0; m < 2; ++m) {
          const float *at = P + ks * 8 * L.plane +
                            (8 * c + 4 * m + q + dy - L.dyMin) * L.rowW + dx -
                            L.left;
          a[m][0] = __float_as_uint(at[0]);
          a[m][1] = __float_as_uint(at[8]);
          a[m][2] = __float_as_uint(at[4 * L.plane]);
          a[m][3] = __float_as_uint(at[4 * L.plane + 8]);
        }
        // The 8-wide step's place in its 32-channel slice.
        const int k32 = (chunk * CC % 32) / 8 + ks;
        const unsigned slice = wBase + (t * SPT + chunk * CC / 32) * SliceBytes;
        const u64 db = descriptor(slice) + 2 * k32;
        const int buf = Passes == 3 ? t % 2 : 0;
        pin(acc[buf][0]);
        pin(acc[buf][1]);
        if constexpr (Passes == 3) {
          // x's big and small parts in registers, w's in shared memory:
          // small*big + big*small + big*big.
          const u64 dbSmall =
              descriptor(slice + KT * SPT * SliceBytes) + 2 * k32;
          unsigned big[2][4], small[2][4];
#pragma unroll
          for (int m = 0; m < 2; ++m) {
            float4 hi, lo;
            split(
                make_float4(__uint_as_float(a[m][0]), __uint_as_float(a[m][1]),
                            __uint_as_float(a[m][2]), __uint_as_float(a[m][3])),
                hi, lo);
            big[m][0] = __float_as_uint(hi.x),
            small[m][0] = __float_as_uint(lo.x);
            big[m][1] = __float_as_uint(hi.y),
            small[m][1] = __float_as_uint(lo.y);
            big[m][2] = __float_as_uint(hi.z),
            small[m][2] = __float_as_uint(lo.z);
            big[m][3] = __float_as_uint(hi.w),
            small[m][3] = __float_as_uint(lo.w);
          }
          mmaFence();
#pragma unroll
          for (int m = 0; m < 2; ++m) {
            convMma<NB>(acc[buf][m], small[m], db);
            convMma<NB>(acc[buf][m], big[m], dbSmall);
            convMma<NB>(acc[buf][m], big[m], db);
          }
        } else {
          mmaFence();
          convMma<NB>(acc[0][0], a[0], db);
          convMma<NB>(acc[0][1], a[1], db);
        }
        mmaCommit();
        mmaWait<1>(); // the step before is done: its fragments are free
        // 3xTF32: the tap before is done (its last step was the one before).
        if (Passes == 3 && ks == 0 && t > 0)
          promote((t - 1) % 2);
      }
      // This thread's fragment loads from the stage are done.
      barrierArrive(&empty[s]);
      if constexpr (Passes == 3) {
        mmaWait<0>();
        promote((KT - 1) % 2);
      }
    }
    mmaWait<0>();
    pin(acc[0][0]);
    pin(acc[0][1]);
    if constexpr (Passes == 3) {
#pragma unroll
      for (int m = 0; m < 2; ++m)
#pragma unroll
        for (int i = 0; i < NB / 2; ++i)
          acc[0][m][i] = total[m][i];
    }
    const int n = tile / (tilesR * tilesC);
    const int oh0 = tile / tilesC % tilesR * T, ow0 = tile % tilesC * T;
#pragma unroll
    for (int m = 0; m < 2; ++m)
#pragma unroll
      for (int j = 0; j < NB / 8; ++j) {
        const int oh = oh0 + 8 * c + 4 * m + q;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int ow = ow0 + g + 8 * h;
          if ((Ho % T != 0 && oh >= Ho) || (Wo % T != 0 && ow >= Wo))
            continue;
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int co = half * NB + 8 * j + 2 * tq + e;
            y[((static_cast<i64>(n) * Cout + co) * Ho + oh) * Wo + ow] =
                acc[0][m][4 * j + 2 * h + e] + b[2 * j + e];
          }
        }
      }
  }
#else
  (void)x, (void)w, (void)bias, (void)y;
  __trap(); // never scheduled off sm_90a
#endif
}

} // namespace kiln

#endif
