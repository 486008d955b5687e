//===- depthwise.cuh - depthwise conv2d, direct ------------*- CUDA -*-===//
//
// conv2d with one input channel a group (depthwise: groups == Cin; Cout /
// Cin output channels a group, the channel multiplier), NCHW tensors of
// one type TX (deduced: f32, or f16 and bf16 of kiln/half.cuh, converted to
// f32 as loaded), any stride, padding and dilation:
//   depthwiseConv2d<Conv2dParams<...>, HasBias, Rows>(x, w, bias, epilogue)
// y[n][co][oh][ow] = bias[co] + sum over kh, kw of x[n][co / M][oh SH - PH +
// kh DH][ow SW - PW + kw DW] * w[co][0][kh][kw] (M = Cout / Cin; x outside
// its image reads 0), each value handed to epilogue(i, v) with its NCHW
// index i in y and v[1], which stores it (the fused elementwise nodes).
//
// A depthwise convolution multiplies each input value KH x KW times at
// most, so it is bound by memory, not by the products (as an implicit GEMM
// its K would be the taps alone, and the FFMA tiles' 32 output channels a
// tile would hold one). Each block takes a Rows x 64 output tile of one
// channel plane (Rows: depthwiseRows, tiling.cuh): its 256 threads copy the
// input rows and columns the tile reads (zeros outside the image) into
// shared memory, a warp's loads 32 consecutive floats of a row; then each
// thread computes Rows / 4 outputs of one column (rows ty, ty + 4, ...)
// with the channel's taps in registers and hands them to the epilogue (a
// warp: 32 consecutive columns of a row).
//
// Requires (the scheduler checks, the template asserts): Cin == groups,
// Rows 16, 32 or 64, the tile's input within kDepthwiseSharedLimit
// (depthwiseSharedBytes, tiling.cuh), KH x KW <= 64 taps, fewer than 2^31
// blocks.
//
// Launch: block kDepthwiseThreads (256), grid depthwiseBlocks(N, Cout, Ho,
// Wo, Rows), no dynamic shared memory; __launch_bounds__(256).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DEPTHWISE_CUH
#define KILN_DEPTHWISE_CUH

#include "kiln/conv.cuh"

namespace kiln {

template <class G, bool HasBias, int Rows, class Epi, class TX>
__device__ __forceinline__ void
depthwiseConv2d(const TX *__restrict__ x, const TX *__restrict__ w,
                const typename SameType<TX>::type *__restrict__ bias, Epi epi) {
  static_assert(!G::kTransposed && G::CinG == 1, "depthwise conv2d");
  constexpr int H = G::H, W = G::W, Ho = G::Ho, Wo = G::Wo, Cout = G::Cout;
  constexpr int KH = G::KH, KW = G::KW, SH = G::SH, SW = G::SW, DH = G::DH,
                DW = G::DW, M = G::CoutG;
  static_assert(Rows == 16 || Rows == 32 || Rows == 64, "tile rows");
  constexpr int TR = Rows, TC = kDepthwiseCols;
  constexpr int IR = depthwiseSpan(TR, KH, SH, DH);
  constexpr int IC = depthwiseSpan(TC, KW, SW, DW);
  static_assert(IR * IC * 4 ==
                        depthwiseSharedBytes(TR, KH, KW, SH, SW, DH, DW) &&
                    IR * IC * 4 <= kDepthwiseSharedLimit,
                "the tile's input fits shared memory");
  static_assert(KH * KW <= 64, "the taps in registers");
  static_assert(depthwiseBlocks(G::N, Cout, Ho, Wo, TR) < (1ll << 31),
                "blocks");
  constexpr int tilesC = (Wo + TC - 1) / TC, tilesR = (Ho + TR - 1) / TR;
  __shared__ float in[IR * IC];
  // Block b: tile b % (tilesR tilesC) of plane (n, co) = b / (tilesR tilesC).
  const int tile = blockIdx.x % (tilesR * tilesC);
  const i64 plane = blockIdx.x / (tilesR * tilesC); // n Cout + co
  const int co = static_cast<int>(plane % Cout);
  const int oh0 = tile / tilesC * TR, ow0 = tile % tilesC * TC;
  const int ih0 = oh0 * SH - G::PH, iw0 = ow0 * SW - G::PW;
  const TX *src = x + (plane / Cout * G::Cin + co / M) * (i64{H} * W);
  // f32 through the read-only cache; halves converted.
  auto load = [](const TX *p) {
    if constexpr (sizeof(TX) == 4)
      return __ldg(p);
    else
      return toFloat(*p);
  };
  for (int e = threadIdx.x; e < IR * IC; e += kDepthwiseThreads) {
    const int r = e / IC, c = e % IC, ih = ih0 + r, iw = iw0 + c;
    in[e] =
        ih >= 0 && ih < H && iw >= 0 && iw < W ? load(src + ih * W + iw) : 0.f;
  }
  float tap[KH * KW];
#pragma unroll
  for (int t = 0; t < KH * KW; ++t)
    tap[t] = load(w + co * (KH * KW) + t);
  const float b = HasBias ? load(bias + co) : 0.f;
  __syncthreads();
  const int col = threadIdx.x % TC, row0 = threadIdx.x / TC;
  constexpr int Steps = kDepthwiseThreads / TC; // rows a pass
  const int ow = ow0 + col;
#pragma unroll
  for (int i = 0; i < TR / Steps; ++i) {
    const int r = row0 + Steps * i, oh = oh0 + r;
    float s = b;
#pragma unroll
    for (int kh = 0; kh < KH; ++kh)
#pragma unroll
      for (int kw = 0; kw < KW; ++kw)
        s = fmaf(in[(r * SH + kh * DH) * IC + col * SW + kw * DW],
                 tap[kh * KW + kw], s);
    if ((Ho % TR == 0 || oh < Ho) && (Wo % TC == 0 || ow < Wo)) {
      float v[1] = {s};
      epi((plane * Ho + oh) * Wo + ow, v);
    }
  }
}

} // namespace kiln

#endif
