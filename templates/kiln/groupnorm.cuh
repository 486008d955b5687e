//===- groupnorm.cuh - GroupNorm in one pass over memory --------*- CUDA
//-*-===//
//
// GroupNorm over slices: slice s is sample s / G, group s % G, and holds
// SliceLen = C/G * spatial consecutive elements of the [N, C, *] input. The
// generated loadRaw(i, r) issues the loads of Vec consecutive elements at flat
// index i of every input streamed at the input's shape, finish(i, r, v)
// applies the fused prologue to them, and store(i, y) takes the normalised
// values, applies the per-channel affine and the fused epilogue and writes.
//
// Statistics are exact enough for large offsets: the moments of d = x - c
// are summed with a shift c near the slice's mean, so x = 1e4 + U(0,1) loses
// no digits. gnWarp centres each slice on its own rough mean and finishes in
// float (gnFinishFloat: slices of <= 1024 elements, in registers). gnTeam
// shifts by the previous slice's mean, so the moments of the next slice are
// summed while it is read; when that shift is more than a standard deviation
// from the new mean, the part is summed again about the mean. The mean is
// applied as a float pair (hi + lo): rounding a mean of 1e4 to one float
// would move every output by up to 1.7e-3.
//
// gnWarp: slices of up to 1024 elements; a team of Team lanes (a power of
// two, <= 32) holds a slice in registers, Chunks vectors per lane, and each
// team holds Rows slices at once so that enough loads are in flight. Launch:
// 1-D blocks (a multiple of 32 threads), any grid. Both kernels call
// roundDone() once per round of slices, where the whole warp is converged.
//
// gnTeam: any slice. A team of TeamBlocks blocks shares a slice; each block
// keeps its part (ChunkLen elements, the first SmemLen of them in dynamic
// shared memory, any rest re-read) on chip between the statistics and the
// normalisation, so the input is read from memory once. Writing a slice and
// reading the team's next one are one pass, so reads and writes overlap;
// the first vectors of the next slice are loaded before the team's barrier,
// so memory has work while a block waits, and prefetch(i, bytes) keeps the
// next prefetchLen elements of the part on their way into L2 ahead of the
// loads (Vec 4 or 8 only; 0: none). With TeamBlocks > 1 the blocks of
// a team add their moments into `sums` (6 doubles per team) and wait for
// each other on `counters` (2 words per team); both are zero at launch and
// the kernel leaves them zero. The launch must be cooperative (all blocks
// co-resident). Grid: a multiple of TeamBlocks; teams take slices
// round-robin. Block: Threads threads; dynamic shared memory SmemLen *
// sizeof(Part) bytes. Part is float, or the half type of a GroupNorm whose
// input is f16 or bf16 (the values finish() gives are then exact in it): a
// part of half the bytes, so teams of half the blocks (pass a Part pointer,
// null, as the last argument).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_GROUPNORM_CUH
#define KILN_GROUPNORM_CUH

#include "kiln/common.cuh"

namespace kiln {

/// Mean as a float pair and 1/sqrt(var + eps), from the moments of x - c;
/// lowShift = -meanLo * rstd, so that normalising is one add and one fma.
struct GnStats {
  float meanHi, meanLo, rstd, lowShift;
};

/// The stats of n values from their mean and M2 (invN = 1 / n). The variance
/// is rounded to float before the reciprocal square root: rsqrtf's 2 ulp
/// are far inside the tolerance, and double division and square root cost
/// NVRTC more than they are worth here.
__device__ __forceinline__ GnStats gnFinish(double mean, double m2, double invN,
                                            float eps) {
  double var = m2 * invN;
  var = var > 0 ? var : 0;
  GnStats st;
  st.meanHi = static_cast<float>(mean);
  st.meanLo = static_cast<float>(mean - st.meanHi);
  st.rstd = rsqrtf(static_cast<float>(var) + eps);
  st.lowShift = -st.meanLo * st.rstd;
  return st;
}

/// The same from float moments of d = x - c over n values: a slice in
/// registers is small, so float keeps every digit that matters here.
__device__ __forceinline__ GnStats gnFinishFloat(float c, float s1, float s2,
                                                 float invN, float eps) {
  const float dm = s1 * invN;
  float var = (s2 - s1 * dm) * invN;
  var = var > 0 ? var : 0;
  GnStats st;
  st.meanHi = c + dm;
  st.meanLo = (c - st.meanHi) + dm; // exact: |c| >= |dm| in practice
  st.rstd = rsqrtf(var + eps);
  st.lowShift = -st.meanLo * st.rstd;
  return st;
}

template <int Vec>
__device__ __forceinline__ void gnNormalize(const GnStats &st,
                                            float (&v)[Vec]) {
#pragma unroll
  for (int l = 0; l < Vec; ++l)
    v[l] = fmaf(v[l] - st.meanHi, st.rstd, st.lowShift);
}

template <i64 NumSlices, i64 SliceLen, int Team, int Vec, int Chunks, int Rows,
          class Raw, class LoadRaw, class Finish, class Store, class RoundDone>
__device__ __forceinline__ void gnWarp(LoadRaw loadRaw, Finish finish,
                                       Store store, RoundDone roundDone,
                                       float eps) {
  static_assert(Team <= 32 && (Team & (Team - 1)) == 0, "team: 2^k <= 32");
  static_assert(SliceLen % Vec == 0, "Vec must divide the slice");
  static_assert(static_cast<i64>(Chunks) * Team * Vec >= SliceLen,
                "the team must cover the slice");
  constexpr int teamsPerWarp = 32 / Team;
  constexpr i64 perWarp = static_cast<i64>(teamsPerWarp) * Rows;
  constexpr float invN = 1.0f / static_cast<float>(SliceLen);
  const int lane = threadIdx.x % Team, teamInWarp = (threadIdx.x % 32) / Team;
  const i64 warps = static_cast<i64>(gridDim.x) * (blockDim.x / 32);
  // A warp takes perWarp consecutive slices; for each row r its teams read
  // consecutive slices, so every load instruction of the warp is contiguous.
  // Every lane of a warp runs the same iterations (the shuffles need them).
  for (i64 wb = (static_cast<i64>(blockIdx.x) * (blockDim.x / 32) +
                 threadIdx.x / 32) *
                perWarp;
       wb < NumSlices; wb += warps * perWarp) {
    Raw raw[Rows][Chunks];
#pragma unroll
    for (int r = 0; r < Rows; ++r) {
      const i64 s = wb + r * teamsPerWarp + teamInWarp;
#pragma unroll
      for (int k = 0; k < Chunks; ++k) {
        const i64 e = (static_cast<i64>(k) * Team + lane) * Vec;
        if (s < NumSlices && e < SliceLen)
          loadRaw(s * SliceLen + e, raw[r][k]);
      }
    }
    float v[Rows][Chunks][Vec];
#pragma unroll
    for (int r = 0; r < Rows; ++r) {
      const i64 s = wb + r * teamsPerWarp + teamInWarp;
#pragma unroll
      for (int k = 0; k < Chunks; ++k) {
        const i64 e = (static_cast<i64>(k) * Team + lane) * Vec;
        if (s < NumSlices && e < SliceLen)
          finish(s * SliceLen + e, raw[r][k], v[r][k]);
      }
    }
#pragma unroll
    for (int r = 0; r < Rows; ++r) {
      const i64 s = wb + r * teamsPerWarp + teamInWarp;
      const bool live = s < NumSlices;
      float sum = 0;
#pragma unroll
      for (int k = 0; k < Chunks; ++k) {
        const i64 e = (static_cast<i64>(k) * Team + lane) * Vec;
        if (live && e < SliceLen) {
#pragma unroll
          for (int l = 0; l < Vec; ++l)
            sum += v[r][k][l];
        }
      }
      const float c = groupSum<Team>(sum) * invN;
      float s1 = 0, s2 = 0;
#pragma unroll
      for (int k = 0; k < Chunks; ++k) {
        const i64 e = (static_cast<i64>(k) * Team + lane) * Vec;
        if (live && e < SliceLen) {
#pragma unroll
          for (int l = 0; l < Vec; ++l) {
            float d = v[r][k][l] - c;
            s1 += d;
            s2 += d * d;
          }
        }
      }
      s1 = groupSum<Team>(s1);
      s2 = groupSum<Team>(s2);
      const GnStats st = gnFinishFloat(c, s1, s2, invN, eps);
#pragma unroll
      for (int k = 0; k < Chunks; ++k) {
        const i64 e = (static_cast<i64>(k) * Team + lane) * Vec;
        if (live && e < SliceLen) {
          gnNormalize<Vec>(st, v[r][k]);
          store(s * SliceLen + e, v[r][k]);
        }
      }
    }
    roundDone(); // every lane of the warp is here
  }
}

/// gnTeam's vectors per thread per group: the group's loads are all issued
/// before any is used. 2 is enough with the L2 prefetch running ahead of
/// them, and fewer registers: on the H200, L1_35 4.135-4.146 ms against
/// 4.146-4.172 at 4 (4.36-4.41 at 1), L2_19's GroupNorm 1.253-1.259 ms
/// against 1.400; and NVRTC compiles the smaller kernel sooner.
constexpr int kGnUnroll = 2;

/// Adds v to *p with release semantics at GPU scope: the thread's earlier
/// writes (and atomics) are visible to whoever sees the addition.
__device__ __forceinline__ void releaseAdd(unsigned *p, unsigned v) {
  asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(v)
               : "memory");
}

/// Adds v to *p with acquire-release semantics at GPU scope and returns the
/// old value: a departure that must see every earlier one (the last block
/// out resets what the others no longer read).
__device__ __forceinline__ unsigned acqRelAdd(unsigned *p, unsigned v) {
  unsigned old;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;"
               : "=r"(old)
               : "l"(p), "r"(v)
               : "memory");
  return old;
}

/// Loads *p with acquire semantics at GPU scope.
__device__ __forceinline__ unsigned acquireLoad(const unsigned *p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];"
               : "=r"(v)
               : "l"(p)
               : "memory");
  return v;
}

template <i64 NumSlices, i64 SliceLen, int TeamBlocks, int Threads, int Vec,
          i64 ChunkLen, i64 SmemLen, class Raw, class LoadRaw, class Finish,
          class Store, class RoundDone, class Prefetch = NoPrefetch,
          class Part = float>
__device__ __forceinline__ void
gnTeam(LoadRaw loadRaw, Finish finish, Store store, RoundDone roundDone,
       float eps, double *sums, unsigned *counters, Prefetch prefetch = {},
       i64 prefetchLen = 0, Part * /*partType*/ = nullptr) {
  auto load = [&](i64 i, float(&v)[Vec]) {
    Raw r;
    loadRaw(i, r);
    finish(i, r, v);
  };
  static_assert(SliceLen % Vec == 0 && ChunkLen % Vec == 0 &&
                    SmemLen % Vec == 0,
                "Vec must divide the slice, the chunk and the shared part");
  static_assert((TeamBlocks - 1) * ChunkLen < SliceLen,
                "every block of a team needs a non-empty part");
  constexpr int U = kGnUnroll, step = Threads * Vec;
  constexpr double invLen = 1.0 / static_cast<double>(SliceLen);
  extern __shared__ float4 smemRaw[];
  Part *part = reinterpret_cast<Part *>(smemRaw);
  __shared__ double scratch[32 * 2];
  __shared__ double stats[2];

  const int team = blockIdx.x / TeamBlocks, rank = blockIdx.x % TeamBlocks;
  const int numTeams = gridDim.x / TeamBlocks;
  // Offsets within a slice in 32 bits where they fit (fewer instructions
  // per vector); slice bases and element indices stay 64-bit.
  // The loops step up to step * U past `end`, and the prefetch window starts
  // prefetchLen (4096) past a load: OffsetFor's margin covers both.
  using Off = OffsetFor<SliceLen>;
  const Off begin = rank * ChunkLen;
  const Off end = begin + ChunkLen < SliceLen ? begin + ChunkLen : SliceLen;
  const Off first = begin + threadIdx.x * Vec;
  // Whether element e of the part is kept in shared memory (always, when
  // the whole part fits: then no test and no re-read path is compiled).
  auto onChip = [&](Off e) {
    return SmemLen >= ChunkLen || e - begin < SmemLen;
  };

  // Moments of d = x - c, with c the same for the whole team. A mean of NaN
  // or inf (a slice holding one) is no shift: carried to the team's next
  // slice it made that slice's statistics NaN too.
  float c = 0, s1 = 0, s2 = 0;
  auto finiteShift = [](double mean) {
    return isfinite(mean) ? static_cast<float>(mean) : 0.f;
  };
  auto moments = [&](const float(&v)[Vec]) {
#pragma unroll
    for (int l = 0; l < Vec; ++l) {
      const float d = v[l] - c;
      s1 += d;
      s2 += d * d;
    }
  };
  // The slice's mean and M2 into stats, from every block's moments about c:
  // plain sums, added up with atomics in one of 3 buffers per team (the
  // buffer of exchange k is cleared by rank 0 once every block has read it,
  // and used again at k + 3).
  unsigned exchanges = 0;
  auto combine = [&] {
    // Within warps in float (each lane's sums are float already), across
    // warps in double by the publishing thread alone, the only one that
    // needs the totals.
    const float w1 = groupSum<32>(s1), w2 = groupSum<32>(s2);
    if (threadIdx.x % 32 == 0) {
      scratch[threadIdx.x / 32 * 2] = w1;
      scratch[threadIdx.x / 32 * 2 + 1] = w2;
    }
    __syncthreads();
    double t[2] = {0, 0};
    // The last thread publishes: it has the fewest vectors of the part (the
    // last round of the streaming pass is the partial one), so its release
    // waits least for its own stores (L1_35 0.8% faster than thread 0).
    if (threadIdx.x == Threads - 1) {
#pragma unroll 1
      for (int w = 0; w < Threads / 32; ++w) {
        t[0] += scratch[w * 2];
        t[1] += scratch[w * 2 + 1];
      }
      if constexpr (TeamBlocks > 1) {
        double *acc = sums + (team * 3 + exchanges % 3) * 2;
        atomicAdd(acc, t[0]);
        atomicAdd(acc + 1, t[1]);
        releaseAdd(counters + team, 1u);
        const unsigned target = (exchanges + 1) * TeamBlocks;
        while (acquireLoad(counters + team) < target)
          __nanosleep(64);
        t[0] = *reinterpret_cast<volatile double *>(acc);
        t[1] = *reinterpret_cast<volatile double *>(acc + 1);
        if (rank == 0 && exchanges > 0) {
          double *old = sums + (team * 3 + (exchanges - 1) % 3) * 2;
          old[0] = 0;
          old[1] = 0;
        }
      }
      const double dm = t[0] * invLen;
      stats[0] = c + dm;
      stats[1] = t[1] - t[0] * dm;
    }
    ++exchanges;
    __syncthreads();
  };

  // The raw inputs of the U vectors of this thread at e0, e0 + step, ...
  // that lie in the part, of the slice at sliceBase: all loads are issued
  // before any is used, and the prologue runs where they are used.
  auto loadGroup = [&](i64 sliceBase, Off e0, Raw(&r)[U]) {
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (e0 + u * step < end)
        loadRaw(sliceBase + e0 + u * step, r[u]);
  };

  // A team's round 0 only reads its first slice (pass 1: keep the part on
  // chip and sum it). Every later round finishes the statistics of slice s
  // and then, in one streaming pass, normalises and writes s from on-chip
  // memory while it reads the team's next slice into the same place and sums
  // its moments about s's mean (pass 3: reads and writes in flight together,
  // as in a copy). Both passes are the one loop body below: each copy of it
  // costs NVRTC about as much time as the rest of the kernel.
  for (i64 s = static_cast<i64>(team) - numTeams; s < NumSlices;
       s += numTeams) {
    const bool cur = s >= 0;
    const i64 base = s * SliceLen;
    const i64 next = s + numTeams;
    const bool more = next < NumSlices;
    const i64 nextBase = next * SliceLen;
    // The next slice's first vectors, in flight while the team waits.
    Raw w[U];
    if (more)
      loadGroup(nextBase, first, w);
    // And the next prefetchLen elements of the part into L2.
    if constexpr (Vec >= 4) {
      const Off a = begin + step * U;
      const Off b = a + prefetchLen < end ? a + prefetchLen : end;
      if (more && threadIdx.x == 0 && a < b)
        prefetch(nextBase + a, static_cast<unsigned>((b - a) * 4));
    }
    GnStats st{};
    if (cur) {
      // The shift is the previous slice's mean. Summed about it, the
      // moments keep their digits while it lies within a standard deviation
      // of this slice's mean; otherwise (the first slice, a change of level,
      // NaN or inf) the part is summed again about the mean, up to twice:
      // after a slice 1e12 or more times this one's spread, the first sum
      // about the old shift leaves only rounding noise of the mean, and one
      // sum about that left the variance 1e3-1e4 times too large (a CPU
      // emulation, bench/NOTES.md v42). The stats are the same in every
      // block of the team, so is the choice.
      for (int resums = 0;; ++resums) {
        combine();
        const double dm = stats[0] - c, m2 = stats[1];
        if (resums == 2 ||
            (dm * dm * static_cast<double>(SliceLen) <= m2 && m2 < 1e300))
          break;
        c = finiteShift(stats[0]);
        s1 = 0, s2 = 0;
#pragma unroll 1
        for (Off e = first; e < end; e += step) {
          float v[Vec];
          if (onChip(e))
            loadVec<Vec>(part + static_cast<int>(e - begin), v);
          else
            load(base + e, v);
          moments(v);
        }
      }
      if constexpr (TeamBlocks > 1) {
        // After its last wait a block departs; the last to depart zeroes
        // the team's words for the next launch (no block reads them again).
        // The acquire-release departure orders this block's reads of the
        // sums before the last block's zeroing, as in tailRestore (measured
        // the same as a full fence: L1_35 4.160-4.191 against 4.176-4.178
        // ms).
        if (!more && threadIdx.x == 0) {
          if (acqRelAdd(counters + numTeams + team, 1u) == TeamBlocks - 1) {
            counters[team] = 0;
            counters[numTeams + team] = 0;
#pragma unroll
            for (int i = 0; i < 6; ++i)
              sums[team * 6 + i] = 0;
          }
        }
      }
      st = gnFinish(stats[0], stats[1], invLen, eps);
      c = finiteShift(st.meanHi);
      s1 = 0, s2 = 0;
    }
    // cur and more pass through an empty asm so that the optimiser does not
    // clone the loop for each of their values (four copies of the body).
    unsigned curBits = cur, moreBits = more;
    for (Off e0 = first; e0 < end; e0 += step * U) {
      asm volatile("" : "+r"(curBits), "+r"(moreBits));
      if (moreBits && e0 != first) {
        if constexpr (Vec >= 4) {
          // Keep the prefetch prefetchLen ahead of thread 0's loads.
          const Off a = e0 + static_cast<Off>(prefetchLen);
          const Off b = a + step * U < end ? a + step * U : end;
          if (threadIdx.x == 0 && prefetchLen > 0 && a < b)
            prefetch(nextBase + a, static_cast<unsigned>((b - a) * 4));
        }
        loadGroup(nextBase, e0, w);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const Off e = e0 + u * step;
        if (e >= end)
          continue;
        const bool kept = onChip(e);
        if (curBits) {
          float v[Vec];
          if (kept)
            loadVec<Vec>(part + static_cast<int>(e - begin), v);
          else
            load(base + e, v);
          gnNormalize<Vec>(st, v);
          store(base + e, v);
        }
        if (moreBits) {
          float v[Vec];
          finish(nextBase + e, w[u], v);
          if (kept)
            storeVec<Vec>(part + static_cast<int>(e - begin), v);
          moments(v);
        }
      }
    }
    if (cur) {
      // No block barrier here: stats and scratch are rewritten only after
      // the next round's first barrier, which every thread reaches after
      // reading them (a barrier here measured 1% slower on L1_35).
      __syncwarp();
      roundDone(); // every lane of the warp is here
    }
  }
}

/// A GroupNorm kernel's tail: a per-sample min or max, accumulated with
/// 32-bit atomicMax on keys that grow as the value falls (IsMin) or rises.
/// NaN has the largest key, so it wins as in PyTorch; 0, the zeroed
/// workspace, is below every key.
template <bool IsMin> __device__ __forceinline__ unsigned tailKey(float x) {
  if (x != x)
    return 0xffffffffu;
  unsigned u = __float_as_uint(x);
  u = (u & 0x80000000u) ? ~u : (u | 0x80000000u); // grows with x
  return IsMin ? ~u : u;
}

template <bool IsMin> __device__ __forceinline__ float tailValue(unsigned key) {
  if (key == 0xffffffffu)
    return __uint_as_float(0x7fc00000u);
  unsigned u = IsMin ? ~key : key;
  u = (u & 0x80000000u) ? (u & 0x7fffffffu) : ~u;
  return __uint_as_float(u);
}

/// A thread's running key for the sample it is in: an atomic when the
/// sample changes, else one per warp and sample at the kernels' steps.
struct GnTail {
  unsigned *keys;
  i64 sample = -1;
  unsigned key = 0;

  __device__ __forceinline__ void add(i64 s, unsigned k) {
    if (s != sample) {
      flush();
      sample = s;
      key = k;
    } else {
      key = k > key ? k : key;
    }
  }
  __device__ __forceinline__ void flush() {
    if (sample >= 0)
      atomicMax(keys + sample, key);
    sample = -1;
  }
  /// At a point every lane of the warp reaches: the lanes in one sample
  /// combine their keys and one of them does the atomic.
  __device__ __forceinline__ void flushWarp() {
    const unsigned same = __match_any_sync(0xffffffffu, sample);
    const unsigned k = __reduce_max_sync(same, key);
    if (sample >= 0 && threadIdx.x % 32 == __ffs(same) - 1)
      atomicMax(keys + sample, k);
    sample = -1;
  }
};

/// The threads of each block that take part in gridBarrier and
/// tailRestore: all of them (the GroupNorm kernels). A Team has sync() (a
/// barrier of its threads), leader() (one of them), thread() (0 up) and
/// threads().
struct WholeBlock {
  static __device__ __forceinline__ void sync() { __syncthreads(); }
  static __device__ __forceinline__ bool leader() { return threadIdx.x == 0; }
  static __device__ __forceinline__ int thread() { return threadIdx.x; }
  static __device__ __forceinline__ int threads() { return blockDim.x; }
};

/// Every block of the grid waits here for all the others (the launch must
/// be cooperative; `counter` zero at launch, and tailRestore zeroes it
/// again; the `round`-th barrier of a launch on it waits for round * grid
/// arrivals). Writes and atomics before it are visible to every block after it:
/// the team's barrier orders its threads' accesses before the leader's
/// release, and the leader's acquire before the team's accesses after it.
/// (Release and acquire instead of two sequentially consistent fences took
/// L2_75's fused kernel from 0.0386-0.0388 to 0.0372 ms: bench/NOTES.md
/// v7.)
template <class Team = WholeBlock>
__device__ __forceinline__ void gridBarrier(unsigned *counter,
                                            unsigned round = 1) {
  Team::sync();
  if (Team::leader()) {
    releaseAdd(counter, 1u);
    while (acquireLoad(counter) < round * gridDim.x)
      __nanosleep(64);
  }
  Team::sync();
}

/// The end of a kernel with a tail: the last block to get here (every other
/// block has finished reading the keys) zeroes the `n` keys and the
/// barrier's two words, so the next launch needs no memset. Every thread of
/// the team of every block calls it.
template <class Team = WholeBlock>
__device__ __forceinline__ void tailRestore(unsigned *keys, i64 n,
                                            unsigned *barrier) {
  __shared__ bool last;
  Team::sync();
  if (Team::leader())
    last = acqRelAdd(barrier + 1, 1u) == gridDim.x - 1;
  Team::sync();
  if (last) {
    for (i64 i = Team::thread(); i < n; i += Team::threads())
      keys[i] = 0;
    if (Team::leader()) {
      barrier[0] = 0;
      barrier[1] = 0;
    }
  }
}

} // namespace kiln

#endif
