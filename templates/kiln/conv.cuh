//===- conv.cuh - conv2d and conv_transpose2d as implicit GEMM -*- CUDA -*-===//
//
// conv2d (F.conv2d): x [N, Cin, H, W], w [Cout, Cin/G, KH, KW], bias [Cout],
// y [N, Cout, Ho, Wo], Ho = (H + 2*PH - DH*(KH-1) - 1) / SH + 1:
//   conv2d<Conv2dParams<N, Cin, H, W, Cout, KH, KW, SH, SW, PH, PW, DH, DW,
//                       G>, HasBias, Cfg, Epi>(x, w, bias, y, epi)
// conv_transpose2d (F.conv_transpose2d): w [Cin, Cout/G, KH, KW],
// Ho = (H-1)*SH - 2*PH + DH*(KH-1) + OPH + 1:
//   convTranspose2d<ConvTranspose2dParams<N, Cin, H, W, Cout, KH, KW, SH, SW,
//                   PH, PW, DH, DW, G, OPH, OPW>, HasBias, Cfg, Epi>(...)
// Stride, padding, dilation, groups and output padding default to PyTorch's
// (1, 0, 1, 1, 0). y[n][c][oh][ow] = epi(sum + bias[c], n, c, oh * Wo + ow)
// with Epi, the fused epilogue hook, any functor float(float, int, int, int)
// (default: the value itself); bias is not read when !HasBias (pass
// nullptr). All tensors contiguous and of one storage type TX (deduced:
// f32, or f16 and bf16 of kiln/half.cuh, converted to f32 as loaded, the
// sums f32, y rounded to TX once).
//
// Both are one implicit GEMM per group g (contraction.cuh): p = output pixel
// (n, oh, ow) of the P = N*Ho*Wo, q = output channel co within the group,
// k = (kh, kw, ci) with ci fastest, K = Cin/G * KH * KW. The operands are
// gathered: conv2d reads x[n][g*Cin/G + ci][oh*SH - PH + kh*DH][ow*SW - PW +
// kw*DW]; conv_transpose2d reads x[n][g*Cin/G + ci][ih][iw] where
// oh = ih*SH - PH + kh*DH, i.e. ih = (oh + PH - kh*DH) / SH when that
// divides and lands inside x (else the term is 0, likewise for iw).
// conv_transpose2d with stride s thus spends s*s times the useful FLOPs.
// When Cin/G is a multiple of 8 (the k slice) a slice shares one tap, so the
// bounds test is made once per slice.
//
// Launch: block (Cfg::kThreads) = 256 threads, no dynamic shared memory;
// grid (convBlocks(N*Ho*Wo, Cout/G, Cfg::kShape), G); Cfg by default the one
// pickConvTile (tiling.cuh) chooses. Declare the kernel with
// __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks).
//
// Constraints: offsets are 64-bit across images; one image of x or y, and
// N*Ho*Wo, stay below 2^31 elements; G <= 65535.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CONV_CUH
#define KILN_CONV_CUH

#include "kiln/contraction.cuh"

namespace kiln {

template <bool Transposed, int N_, int Cin_, int H_, int W_, int Cout_, int KH_,
          int KW_, int SH_, int SW_, int PH_, int PW_, int DH_, int DW_, int G_,
          int OPH_, int OPW_>
struct ConvGeometry {
  static constexpr bool kTransposed = Transposed;
  static constexpr int N = N_, Cin = Cin_, H = H_, W = W_, Cout = Cout_;
  static constexpr int KH = KH_, KW = KW_, SH = SH_, SW = SW_, PH = PH_,
                       PW = PW_, DH = DH_, DW = DW_, G = G_;
  static constexpr int Ho =
      Transposed ? convTranspose2dOutSize(H, KH, SH, PH, DH, OPH_)
                 : conv2dOutSize(H, KH, SH, PH, DH);
  static constexpr int Wo =
      Transposed ? convTranspose2dOutSize(W, KW, SW, PW, DW, OPW_)
                 : conv2dOutSize(W, KW, SW, PW, DW);
  static constexpr int CinG = Cin / G, CoutG = Cout / G;
  static constexpr int HW = H * W, HoWo = Ho * Wo, KHW = KH * KW;
  static constexpr int K = CinG * KHW;
  static constexpr int P = // output pixels (checked below)
      static_cast<int>(static_cast<i64>(N) * HoWo);

  static_assert(N > 0 && Cin > 0 && Cout > 0 && H > 0 && W > 0, "shape");
  static_assert(KH > 0 && KW > 0 && SH > 0 && SW > 0 && DH > 0 && DW > 0 &&
                    PH >= 0 && PW >= 0,
                "kernel size, stride and dilation positive, padding >= 0");
  static_assert(G > 0 && G <= 65535 && Cin % G == 0 && Cout % G == 0,
                "groups divide both channel counts");
  static_assert(OPH_ >= 0 && OPW_ >= 0 &&
                    (OPH_ == 0 || OPH_ < SH || OPH_ < DH) &&
                    (OPW_ == 0 || OPW_ < SW || OPW_ < DW),
                "output_padding smaller than stride or dilation");
  static_assert(Transposed || (OPH_ == 0 && OPW_ == 0), "conv2d: no outpad");
  static_assert(Ho > 0 && Wo > 0, "empty output");
  static_assert(static_cast<i64>(Cin) * HW < (1ll << 31) &&
                    static_cast<i64>(Cout) * HoWo < (1ll << 31) &&
                    static_cast<i64>(N) * HoWo < (1ll << 31) &&
                    static_cast<i64>(CinG) * Cout * KHW < (1ll << 31),
                "an image, the pixel count and w below 2^31 elements");
};

template <int N, int Cin, int H, int W, int Cout, int KH, int KW, int SH = 1,
          int SW = 1, int PH = 0, int PW = 0, int DH = 1, int DW = 1, int G = 1>
using Conv2dParams = ConvGeometry<false, N, Cin, H, W, Cout, KH, KW, SH, SW, PH,
                                  PW, DH, DW, G, 0, 0>;

template <int N, int Cin, int H, int W, int Cout, int KH, int KW, int SH = 1,
          int SW = 1, int PH = 0, int PW = 0, int DH = 1, int DW = 1, int G = 1,
          int OPH = 0, int OPW = 0>
using ConvTranspose2dParams = ConvGeometry<true, N, Cin, H, W, Cout, KH, KW, SH,
                                           SW, PH, PW, DH, DW, G, OPH, OPW>;

template <class Prm> struct ConvAuto {
  static constexpr TileShape kS = pickConvTile(Prm::P, Prm::CoutG);
  using type = TileConfig<kS.bp, kS.bq, kS.bk, kS.tp, kS.tq, kS.minBlocks>;
};

/// Gathers the P operand: element (p, k) is the x value that output pixel p
/// meets at k = (kh, kw, ci). Thread t owns pixel t % BP of the tile and
/// k rows t / BP + e * kStep of each slice.
template <class Prm, class Cfg, class TX> struct ConvInputLoader {
  static constexpr int BP = Cfg::BP, BK = Cfg::BK;
  static constexpr int kStep = Cfg::kThreads / BP;
  static constexpr int kElems = BK / kStep;
  static constexpr bool kTapPerSlice = Prm::CinG % BK == 0;
  static_assert(Cfg::kThreads % BP == 0 && BK % kStep == 0, "gather layout");

  const TX *img; // x[n][g * CinG][0][0] of the thread's pixel
  int oy, ox;    // conv2d: oh*SH - PH, ow*SW - PW; transposed: oh+PH, ow+PW
  bool pixOk;
  int kk; // k row within the slice of element 0
  int k0; // first k of the next slice
  float regs[kElems];

  __device__ __forceinline__ ConvInputLoader(const TX *x, int p0, int g) {
    const int p = p0 + static_cast<int>(threadIdx.x) % BP;
    pixOk = p < Prm::P;
    const int pc = pixOk ? p : 0;
    const int n = pc / Prm::HoWo, pix = pc % Prm::HoWo;
    const int oh = pix / Prm::Wo, ow = pix % Prm::Wo;
    img = x + (static_cast<i64>(n) * Prm::Cin + g * Prm::CinG) * Prm::HW;
    if constexpr (Prm::kTransposed) {
      oy = oh + Prm::PH, ox = ow + Prm::PW;
    } else {
      oy = oh * Prm::SH - Prm::PH, ox = ow * Prm::SW - Prm::PW;
    }
    kk = static_cast<int>(threadIdx.x) / BP;
    k0 = 0;
  }

  /// Offset in a channel plane of x of tap (kh, kw) for this pixel, or -1
  /// where the tap misses x (or, transposed, falls between strided inputs).
  __device__ __forceinline__ int tapOffset(int tap) const {
    const int kh = tap / Prm::KW, kw = tap % Prm::KW;
    int ih, iw;
    bool ok = pixOk;
    if constexpr (Prm::kTransposed) {
      const int ty = oy - kh * Prm::DH, tx = ox - kw * Prm::DW;
      ok = ok && ty >= 0 && tx >= 0;
      if constexpr (Prm::SH > 1)
        ok = ok && ty % Prm::SH == 0;
      if constexpr (Prm::SW > 1)
        ok = ok && tx % Prm::SW == 0;
      ih = ty / Prm::SH, iw = tx / Prm::SW;
      ok = ok && ih < Prm::H && iw < Prm::W;
    } else {
      ih = oy + kh * Prm::DH, iw = ox + kw * Prm::DW;
      ok = ok && static_cast<unsigned>(ih) < static_cast<unsigned>(Prm::H) &&
           static_cast<unsigned>(iw) < static_cast<unsigned>(Prm::W);
    }
    return ok ? ih * Prm::W + iw : -1;
  }

  __device__ __forceinline__ void fetch() {
    if constexpr (kTapPerSlice) {
      const int off = tapOffset(k0 / Prm::CinG);
      const TX *src = img + (k0 % Prm::CinG + kk) * Prm::HW + off;
#pragma unroll
      for (int e = 0; e < kElems; ++e)
        regs[e] = off >= 0 ? toFloat(src[e * kStep * Prm::HW]) : 0.f;
    } else {
#pragma unroll
      for (int e = 0; e < kElems; ++e) {
        const int k = k0 + kk + e * kStep;
        const int off = k < Prm::K ? tapOffset(k / Prm::CinG) : -1;
        regs[e] = off >= 0 ? toFloat(img[k % Prm::CinG * Prm::HW + off]) : 0.f;
      }
    }
    k0 += BK;
  }

  __device__ __forceinline__ void stash(float *s) const {
    const int p = static_cast<int>(threadIdx.x) % BP;
#pragma unroll
    for (int e = 0; e < kElems; ++e)
      s[(kk + e * kStep) * (BP + Cfg::kPad) + p] = regs[e];
  }
};

/// Gathers the Q operand: element (k, co) = w at (ci, kh, kw) of output
/// channel g*CoutG + co. Thread t owns channel t % BQ of the tile and k rows
/// t / BQ + e * kStep of each slice.
template <class Prm, class Cfg, class TX> struct ConvWeightLoader {
  static constexpr int BQ = Cfg::BQ, BK = Cfg::BK;
  static constexpr int kStep = Cfg::kThreads / BQ;
  static constexpr int kElems = BK / kStep;
  // Distance in w between consecutive ci at one (co, kh, kw).
  static constexpr int kCiStride =
      Prm::kTransposed ? Prm::CoutG * Prm::KHW : Prm::KHW;
  static_assert(Cfg::kThreads % BQ == 0 && BK % kStep == 0, "gather layout");

  const TX *wc; // w at (ci = 0, kh = 0, kw = 0) of the thread's channel
  bool coOk;
  int kk, k0;
  float regs[kElems];

  __device__ __forceinline__ ConvWeightLoader(const TX *w, int q0, int g) {
    const int co = q0 + static_cast<int>(threadIdx.x) % BQ;
    coOk = co < Prm::CoutG;
    if constexpr (Prm::kTransposed)
      wc = w + (g * Prm::CinG * Prm::CoutG + co) * Prm::KHW;
    else
      wc = w + (g * Prm::CoutG + co) * Prm::CinG * Prm::KHW;
    kk = static_cast<int>(threadIdx.x) / BQ;
    k0 = 0;
  }

  __device__ __forceinline__ void fetch() {
#pragma unroll
    for (int e = 0; e < kElems; ++e) {
      const int k = k0 + kk + e * kStep;
      const bool ok = coOk && (Prm::K % BK == 0 || k < Prm::K);
      const int tap = k / Prm::CinG, ci = k % Prm::CinG;
      regs[e] = ok ? toFloat(wc[ci * kCiStride + tap]) : 0.f;
    }
    k0 += BK;
  }

  __device__ __forceinline__ void stash(float *s) const {
    const int q = static_cast<int>(threadIdx.x) % BQ;
#pragma unroll
    for (int e = 0; e < kElems; ++e)
      s[(kk + e * kStep) * (BQ + Cfg::kPad) + q] = regs[e];
  }
};

template <class Prm, bool HasBias, class Cfg, class Epi, class TX>
__device__ __forceinline__ void
convImplicitGemm(const TX *__restrict__ x, const TX *__restrict__ w,
                 const TX *__restrict__ bias, TX *__restrict__ y, Epi &epi) {
  static_assert(convBlocks(Prm::P, Prm::CoutG, Cfg::kShape) < (1ll << 31),
                "grid.x");
  constexpr int tilesQ = (Prm::CoutG + Cfg::BQ - 1) / Cfg::BQ;
  const int q0 = static_cast<int>(blockIdx.x % tilesQ) * Cfg::BQ;
  const int p0 = static_cast<int>(blockIdx.x / tilesQ) * Cfg::BP;
  const int g = static_cast<int>(blockIdx.y);

  float acc[Cfg::TP][Cfg::TQ] = {};
  ConvInputLoader<Prm, Cfg, TX> pl(x, p0, g);
  ConvWeightLoader<Prm, Cfg, TX> ql(w, q0, g);
  contractMainLoop<Cfg>(pl, ql, tilesOfK<Cfg>(Prm::K), acc);

  float b[Cfg::TQ];
#pragma unroll
  for (int j = 0; j < Cfg::TQ; ++j) {
    const int co = q0 + tileQ<Cfg>(j);
    b[j] =
        HasBias && co < Prm::CoutG ? toFloat(bias[g * Prm::CoutG + co]) : 0.f;
  }
#pragma unroll
  for (int i = 0; i < Cfg::TP; ++i) {
    const int p = p0 + tileP<Cfg>(i);
    if (Prm::P % Cfg::BP != 0 && p >= Prm::P)
      continue;
    const int n = p / Prm::HoWo, pix = p % Prm::HoWo;
    TX *yp = y +
             (static_cast<i64>(n) * Prm::Cout + g * Prm::CoutG) * Prm::HoWo +
             pix;
#pragma unroll
    for (int j = 0; j < Cfg::TQ; ++j) {
      const int co = q0 + tileQ<Cfg>(j);
      if (Prm::CoutG % Cfg::BQ != 0 && co >= Prm::CoutG)
        continue;
      const float v[1] = {epi(acc[i][j] + b[j], n, g * Prm::CoutG + co, pix)};
      storeVec<1>(yp + co * Prm::HoWo, v);
    }
  }
}

template <class Prm, bool HasBias, class Cfg = typename ConvAuto<Prm>::type,
          class Epi = KeepValue, class TX = float>
__device__ __forceinline__ void
conv2d(const TX *__restrict__ x, const TX *__restrict__ w,
       const typename SameType<TX>::type *__restrict__ bias, TX *__restrict__ y,
       Epi epi = Epi()) {
  static_assert(!Prm::kTransposed, "conv2d takes Conv2dParams");
  convImplicitGemm<Prm, HasBias, Cfg>(x, w, bias, y, epi);
}

template <class Prm, bool HasBias, class Cfg = typename ConvAuto<Prm>::type,
          class Epi = KeepValue, class TX = float>
__device__ __forceinline__ void
convTranspose2d(const TX *__restrict__ x, const TX *__restrict__ w,
                const typename SameType<TX>::type *__restrict__ bias,
                TX *__restrict__ y, Epi epi = Epi()) {
  static_assert(Prm::kTransposed,
                "convTranspose2d takes ConvTranspose2dParams");
  convImplicitGemm<Prm, HasBias, Cfg>(x, w, bias, y, epi);
}

} // namespace kiln

#endif
