//===- gemm.cuh - fp32 GEMM for linear and batched matmul ------*- CUDA -*-===//
//
// linear (F.linear), x [M, K], w [N, K], bias [N], y [M, N], all row-major:
//   gemmNT<GemmShape<M, N, K>, HasBias, Cfg, Epi>(x, w, bias, y, epi)
//   y[m][n] = epi(sum_k x[m][k] * w[n][k] + bias[n], m, n)
// bias is not read when !HasBias (pass nullptr).
//
// matmul (torch.matmul on >= 2-D operands, batch dims already broadcast):
//   gemmNN<GemmShape<M, N, K>, Batch, Cfg, Epi>(a, b, c, epi)
//   c[t][m][n] = epi(sum_k a[offA(t) + m*K + k] * b[offB(t) + k*N + n],
//                    t, m, n)
// for output batch t in [0, Batch::kCount); c is contiguous [kCount, M, N].
// Batch is a BatchMap<N0, SA0, SB0, N1, SA1, SB1, N2, SA2, SB2>: the output
// batch dims, outer to inner, merged into at most three runs (N0, N1, N2),
// with the element stride of each run in a and b -- 0 where that operand is
// broadcast. E.g. a [3, 1, M, K] x b [4, K, N]: BatchMap<3, M*K, 0, 4, 0, K*N>;
// a [B, M, K] x b [K, N]: BatchMap<B, M*K, 0> -- or, better, no batch at
// all: GemmShape<B*M, N, K> with NoBatch (a contiguous is one [B*M, K]).
//
// Epi, the fused epilogue hook, is any functor float(float v, int m, int n)
// (gemmNN: float(float v, int t, int m, int n)) returning the value to store;
// by default the value itself. Cfg is a TileConfig (contraction.cuh), by
// default the one pickGemmTile (tiling.cuh) chooses.
//
// Launch: block (Cfg::kThreads) = 256 threads, no dynamic shared memory;
// grid (gemmBlocks(M, N, Cfg::kShape), batches) where batches is 1 for
// gemmNT and Batch::kCount (<= 65535) for gemmNN. Declare the kernel with
// __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks).
//
// Constraints: pointers 16-byte aligned (cudaMalloc's are); operand sizes
// are anything (guards handle M, N, K not dividing the tile; offsets are
// 64-bit); 16-byte loads along k where K % 4 == 0, along n where N % 4 == 0
// (and batch strides % 4 == 0), scalar loads otherwise. K == 0 gives
// epi(bias) (or epi(0)).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_GEMM_CUH
#define KILN_GEMM_CUH

#include "kiln/contraction.cuh"

namespace kiln {

template <int M_, int N_, int K_> struct GemmShape {
  static constexpr int M = M_, N = N_, K = K_;
  static_assert(M > 0 && N > 0 && K >= 0, "launch no gemm of empty output");
};

template <class Shape> struct GemmAuto {
  static constexpr TileShape kS = pickGemmTile(Shape::M, Shape::N, Shape::K);
  using type = TileConfig<kS.bp, kS.bq, kS.bk, kS.tp, kS.tq, kS.minBlocks>;
};

using GemmLarge = TileConfigOf<kGemmLarge>;
using GemmSmall = TileConfigOf<kGemmSmall>;

template <int N0, i64 SA0, i64 SB0, int N1 = 1, i64 SA1 = 0, i64 SB1 = 0,
          int N2 = 1, i64 SA2 = 0, i64 SB2 = 0>
struct BatchMap {
  static constexpr int kCount = N0 * N1 * N2;
  /// The matrices of b (contiguous): the runs b is not broadcast over.
  static constexpr int kCountB =
      (SB0 ? N0 : 1) * (SB1 ? N1 : 1) * (SB2 ? N2 : 1);
  static constexpr bool kAlignedA =
      SA0 % 4 == 0 && SA1 % 4 == 0 && SA2 % 4 == 0;
  static constexpr bool kAlignedB =
      SB0 % 4 == 0 && SB1 % 4 == 0 && SB2 % 4 == 0;
  static_assert(kCount >= 1, "a batch at least");

  /// Element offsets of output batch t in a and b.
  static __host__ __device__ void offsets(int t, i64 &a, i64 &b) {
    const int i2 = t % N2, i1 = t / N2 % N1, i0 = t / N2 / N1;
    a = i0 * SA0 + i1 * SA1 + i2 * SA2;
    b = i0 * SB0 + i1 * SB1 + i2 * SB2;
  }
};

using NoBatch = BatchMap<1, 0, 0>;

/// Stores the accumulators of tile (n0, m0) of y [M, N]: y[m][n] =
/// epi(acc + bias[n], args..., m, n).
template <class Cfg, int M, int N, bool HasBias, class Epi, class... Args>
__device__ __forceinline__ void
storeGemmTile(const float (&acc)[Cfg::TP][Cfg::TQ], int n0, int m0,
              const float *__restrict__ bias, float *__restrict__ y, Epi &epi,
              Args... args) {
#pragma unroll
  for (int i = 0; i < Cfg::TP; ++i) {
    const int n = n0 + tileP<Cfg>(i);
    if (N % Cfg::BP != 0 && n >= N)
      continue;
    const float b = HasBias ? bias[n] : 0.f;
#pragma unroll
    for (int j = 0; j < Cfg::TQ; ++j) {
      const int m = m0 + tileQ<Cfg>(j);
      if (M % Cfg::BQ != 0 && m >= M)
        continue;
      y[static_cast<i64>(m) * N + n] = epi(acc[i][j] + b, args..., m, n);
    }
  }
}

template <class Shape, bool HasBias, class Cfg = typename GemmAuto<Shape>::type,
          class Epi = KeepValue>
__device__ __forceinline__ void
gemmNT(const float *__restrict__ x, const float *__restrict__ w,
       const float *__restrict__ bias, float *__restrict__ y, Epi epi = Epi()) {
  constexpr int M = Shape::M, N = Shape::N, K = Shape::K;
  static_assert(gemmBlocks(M, N, Cfg::kShape) < (1ll << 31), "grid.x");
  constexpr int tilesN = (N + Cfg::BP - 1) / Cfg::BP;
  const int n0 = static_cast<int>(blockIdx.x % tilesN) * Cfg::BP;
  const int m0 = static_cast<int>(blockIdx.x / tilesN) * Cfg::BQ;

  float acc[Cfg::TP][Cfg::TQ] = {};
  if constexpr (K > 0) {
    KContigLoader<Cfg, Cfg::BP, N, K, K, true> pl(w, n0);
    KContigLoader<Cfg, Cfg::BQ, M, K, K, true> ql(x, m0);
    contractMainLoop<Cfg>(pl, ql, tilesOfK<Cfg>(K), acc);
  }
  storeGemmTile<Cfg, M, N, HasBias>(acc, n0, m0, bias, y, epi);
}

template <class Shape, class Batch = NoBatch,
          class Cfg = typename GemmAuto<Shape>::type, class Epi = KeepValue>
__device__ __forceinline__ void gemmNN(const float *__restrict__ a,
                                       const float *__restrict__ b,
                                       float *__restrict__ c, Epi epi = Epi()) {
  constexpr int M = Shape::M, N = Shape::N, K = Shape::K;
  static_assert(gemmBlocks(M, N, Cfg::kShape) < (1ll << 31), "grid.x");
  static_assert(Batch::kCount <= 65535, "batches go on grid.y");
  constexpr int tilesN = (N + Cfg::BP - 1) / Cfg::BP;
  const int n0 = static_cast<int>(blockIdx.x % tilesN) * Cfg::BP;
  const int m0 = static_cast<int>(blockIdx.x / tilesN) * Cfg::BQ;
  const int t = static_cast<int>(blockIdx.y);
  i64 offA, offB;
  Batch::offsets(t, offA, offB);

  float acc[Cfg::TP][Cfg::TQ] = {};
  if constexpr (K > 0) {
    // p = n runs along b's rows, q = m along a's.
    RContigLoader<Cfg, Cfg::BP, N, K, N, Batch::kAlignedB> pl(b + offB, n0);
    KContigLoader<Cfg, Cfg::BQ, M, K, K, Batch::kAlignedA> ql(a + offA, m0);
    contractMainLoop<Cfg>(pl, ql, tilesOfK<Cfg>(K), acc);
  }
  storeGemmTile<Cfg, M, N, false>(acc, n0, m0, nullptr,
                                  c + static_cast<i64>(t) * M * N, epi, t);
}

} // namespace kiln

#endif
