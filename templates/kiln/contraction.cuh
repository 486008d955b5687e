//===- contraction.cuh - Tiled FFMA contraction main loop ------*- CUDA -*-===//
//
// The main loop shared by gemm.cuh and conv.cuh. A block computes the
// BP x BQ tile of D[p][q] = sum_k P(p, k) * Q(k, q) starting at (p0, q0):
//
//   PLoader pl(...); QLoader ql(...);     // per-thread operand gathers
//   float acc[TP][TQ] = {};
//   contractMainLoop<Cfg>(pl, ql, kTiles, acc);
//   // thread's accumulator acc[i][j] is D[p0 + tileP<Cfg>(i)][q0 +
//   tileQ<Cfg>(j)]
//
// A loader stages one BK-deep slice of its operand per fetch() (global memory
// -> registers, the next slice each call, zeros outside the operand) and
// writes it to shared memory with stash(s), laid out s[k * (B + kPad) + r]
// (k-major, r = p or q within the tile). Two shared buffers: the next slice
// is fetched while the current one is multiplied, one barrier per slice.
//
// Thread t owns p = t % (BP/TP) + i * (BP/TP), so consecutive lanes hold
// consecutive p (coalesced stores along p), and q = t / (BP/TP) * TQ + j.
// All fp32, fmaf accumulation in k order within a thread.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CONTRACTION_CUH
#define KILN_CONTRACTION_CUH

#include "kiln/common.cuh"
#include "kiln/tiling.cuh"

namespace kiln {

template <int BP_, int BQ_, int BK_, int TP_, int TQ_, int MinBlocks_ = 1>
struct TileConfig {
  static constexpr int BP = BP_, BQ = BQ_, BK = BK_, TP = TP_, TQ = TQ_;
  static constexpr int kThreadsP = BP / TP; // threads along p
  static constexpr int kThreads = kThreadsP * (BQ / TQ);
  static constexpr int kMinBlocks = MinBlocks_;
  static constexpr int kPad = 4; // float4-aligned rows, conflict-free stashes
  static constexpr int kSmemBytes = 2 * BK * (BP + BQ + 2 * kPad) * 4;
  static constexpr TileShape kShape{BP, BQ, BK, TP, TQ, MinBlocks_};

  static_assert(BP % TP == 0 && BQ % TQ == 0, "tiles split evenly");
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps");
  static_assert(TQ == 1 || TQ == 2 || TQ % 4 == 0, "TQ: 1, 2 or 4k");
  static_assert(kSmemBytes <= 48 * 1024, "static shared memory limit");
};

/// The TileConfig of a TileShape constant (tiling.cuh).
template <const TileShape &S>
using TileConfigOf = TileConfig<S.bp, S.bq, S.bk, S.tp, S.tq, S.minBlocks>;

/// Tile-relative p of the thread's accumulator row i.
template <class Cfg> __device__ __forceinline__ int tileP(int i) {
  return static_cast<int>(threadIdx.x) % Cfg::kThreadsP + i * Cfg::kThreadsP;
}

/// Tile-relative q of the thread's accumulator column j.
template <class Cfg> __device__ __forceinline__ int tileQ(int j) {
  return static_cast<int>(threadIdx.x) / Cfg::kThreadsP * Cfg::TQ + j;
}

/// Slices of BK in k, rounded up without k + BK - 1 (which overflows int
/// for k near 2^31).
template <class Cfg> __host__ __device__ constexpr int tilesOfK(int k) {
  return k / Cfg::BK + (k % Cfg::BK != 0);
}

/// acc += P(tile) * Q(tile) over kTiles (>= 1) slices of BK.
template <class Cfg, class PLoader, class QLoader>
__device__ __forceinline__ void
contractMainLoop(PLoader &pl, QLoader &ql, int kTiles,
                 float (&acc)[Cfg::TP][Cfg::TQ]) {
  constexpr int BK = Cfg::BK, TP = Cfg::TP, TQ = Cfg::TQ;
  constexpr int ldp = Cfg::BP + Cfg::kPad, ldq = Cfg::BQ + Cfg::kPad;
  __shared__ __align__(16) float ps[2][BK * ldp];
  __shared__ __align__(16) float qs[2][BK * ldq];
  const int tp = tileP<Cfg>(0), tq = tileQ<Cfg>(0);

  pl.fetch();
  ql.fetch();
  pl.stash(ps[0]);
  ql.stash(qs[0]);
  __syncthreads();
  for (int t = 0; t < kTiles; ++t) {
    const int cur = t & 1;
    const bool more = t + 1 < kTiles;
    if (more) {
      pl.fetch();
      ql.fetch();
    }
    const float *pc = ps[cur] + tp;
    const float *qc = qs[cur] + tq;
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TP], b[TQ];
#pragma unroll
      for (int i = 0; i < TP; ++i)
        a[i] = pc[k * ldp + i * Cfg::kThreadsP];
      if constexpr (TQ % 4 == 0) {
#pragma unroll
        for (int j = 0; j < TQ; j += 4) {
          float4 v = *reinterpret_cast<const float4 *>(qc + k * ldq + j);
          b[j] = v.x, b[j + 1] = v.y, b[j + 2] = v.z, b[j + 3] = v.w;
        }
      } else {
        loadVec<TQ>(qc + k * ldq, b);
      }
#pragma unroll
      for (int i = 0; i < TP; ++i)
#pragma unroll
        for (int j = 0; j < TQ; ++j)
          acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    if (more) {
      pl.stash(ps[cur ^ 1]);
      ql.stash(qs[cur ^ 1]);
    }
    __syncthreads();
  }
}

/// Loads tiles of B rows (of R) of an operand whose rows are contiguous in
/// k: element (r, k) at base[r * Ld + k], 0 <= k < K. Vector loads along k
/// when Aligned4 (base 16-byte aligned) and K, Ld are multiples of 4.
template <class Cfg, int B, i64 R, int K, i64 Ld, bool Aligned4>
struct KContigLoader {
  static constexpr int BK = Cfg::BK, kThreads = Cfg::kThreads;
  static constexpr int kElems = B * BK / kThreads;
  static constexpr bool kVec = Aligned4 && K % 4 == 0 && Ld % 4 == 0;
  static constexpr int V = kVec ? (kElems < 4 ? kElems : 4) : 1;
  static constexpr int kVecs = kElems / V;
  static constexpr int kPerRow = BK / V;              // vectors per row slice
  static constexpr int kRowStep = kThreads / kPerRow; // rows between vectors
  static_assert(kElems >= 1 && kElems * kThreads == B * BK, "even split");
  static_assert(BK % V == 0 && kThreads % kPerRow == 0, "vector layout");

  const float *src; // element (row, k) of this thread's first vector
  int row;          // tile-relative row of the first vector
  int rowLeft;      // R - (first tile row + row)
  int kk;           // k within the tile of every vector
  int k;            // k of the next fetch
  float regs[kVecs][V];

  __device__ __forceinline__ KContigLoader(const float *base, i64 r0) {
    row = static_cast<int>(threadIdx.x) / kPerRow;
    kk = static_cast<int>(threadIdx.x) % kPerRow * V;
    k = kk;
    const i64 r = r0 + row;
    rowLeft = static_cast<int>(R - r < B ? R - r : B);
    src = base + r * Ld + k;
  }

  __device__ __forceinline__ void fetch() {
#pragma unroll
    for (int s = 0; s < kVecs; ++s) {
      bool ok = true;
      if constexpr (R % B != 0)
        ok = s * kRowStep < rowLeft;
      if constexpr (K % BK != 0)
        ok = ok && k < K; // V divides K when V > 1
      if (ok) {
        loadVec<V>(src + s * kRowStep * Ld, regs[s]);
      } else {
#pragma unroll
        for (int c = 0; c < V; ++c)
          regs[s][c] = 0.f;
      }
    }
    src += BK;
    k += BK;
  }

  __device__ __forceinline__ void stash(float *s) const {
    constexpr int ld = B + Cfg::kPad;
#pragma unroll
    for (int v = 0; v < kVecs; ++v)
#pragma unroll
      for (int c = 0; c < V; ++c)
        s[(kk + c) * ld + row + v * kRowStep] = regs[v][c];
  }
};

/// Loads tiles of B rows (of R) of an operand contiguous in r: element
/// (r, k) at base[k * Ld + r], 0 <= k < K. Vector loads along r when
/// Aligned4 and R, Ld are multiples of 4.
template <class Cfg, int B, i64 R, int K, i64 Ld, bool Aligned4>
struct RContigLoader {
  static constexpr int BK = Cfg::BK, kThreads = Cfg::kThreads;
  static constexpr int kElems = B * BK / kThreads;
  static constexpr bool kVec = Aligned4 && R % 4 == 0 && Ld % 4 == 0;
  static constexpr int V = kVec ? (kElems < 4 ? kElems : 4) : 1;
  static constexpr int kVecs = kElems / V;
  static constexpr int kPerK = B / V;             // vectors per k
  static constexpr int kKStep = kThreads / kPerK; // k between vectors
  static_assert(kElems >= 1 && kElems * kThreads == B * BK, "even split");
  static_assert(B % V == 0 && kThreads % kPerK == 0, "vector layout");

  const float *src; // element (r, k) of this thread's first vector
  int r;            // tile-relative r
  bool rowOk;       // r (all V of them) inside R
  int kk;           // k within the tile of the first vector
  int k;            // k of the next fetch's first vector
  float regs[kVecs][V];

  __device__ __forceinline__ RContigLoader(const float *base, i64 r0) {
    r = static_cast<int>(threadIdx.x) % kPerK * V;
    kk = static_cast<int>(threadIdx.x) / kPerK;
    k = kk;
    rowOk = r0 + r < R; // V divides R when V > 1
    src = base + kk * Ld + r0 + r;
  }

  __device__ __forceinline__ void fetch() {
#pragma unroll
    for (int s = 0; s < kVecs; ++s) {
      bool ok = true;
      if constexpr (R % B != 0)
        ok = rowOk;
      if constexpr (K % BK != 0)
        ok = ok && k + s * kKStep < K;
      if (ok) {
        loadVec<V>(src + s * kKStep * Ld, regs[s]);
      } else {
#pragma unroll
        for (int c = 0; c < V; ++c)
          regs[s][c] = 0.f;
      }
    }
    src += BK * Ld;
    k += BK;
  }

  __device__ __forceinline__ void stash(float *s) const {
    constexpr int ld = B + Cfg::kPad;
#pragma unroll
    for (int v = 0; v < kVecs; ++v)
#pragma unroll
      for (int c = 0; c < V; ++c)
        s[(kk + v * kKStep) * ld + r + c] = regs[v][c];
  }
};

/// The epilogue that keeps the value: (acc, indices...) -> acc.
struct KeepValue {
  template <class... I>
  __device__ __forceinline__ float operator()(float v, I...) const {
    return v;
  }
};

} // namespace kiln

#endif
