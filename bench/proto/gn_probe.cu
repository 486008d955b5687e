// Prototype: where L1_35's team kernel spends a round, and the changes to
// the round tried in session 5 (bench/NOTES.md v4). Standalone (nvcc -O3
// -std=c++17 -arch=sm_90 -Itemplates -Ibench/proto); argument: how many
// times to repeat the whole set (default 4).
//
// Each repetition times Kiln's template, Kiln's generated source for L1_35
// with its index variants (gen_l1_35.cuh), then every experiment, each once
// more with timestamps (%globaltimer per block and round: start, block sums
// done, arrival, barrier passed, stats ready, streaming done) summarised as
// the mean of each phase and where teams 1 and 2 start their rounds.
//
// gnProbe is gnTeam specialised to L1_35 (x [112, 64, 512, 512], 8 groups:
// 896 slices of 2 Mi elements, teams of 88 blocks of 512 threads), with
//  - Shift: the moments of the next slice are summed about the previous
//    slice's mean while it is read (no second pass over shared memory); a
//    team sums again when the shift is over 2 standard deviations off;
//  - Pref: the first PG x 4 vectors per thread of the next slice are loaded
//    into registers before the barrier;
//  - Atomic: the team's sums added with double atomics (Fence 0: around a
//    threadfence; 2: a release add and an acquire poll);
//  - TrailSync: a block barrier at the end of each round; Ctl: warp 0
//    streams nothing and publishes;
//  - a staggered start: team t starts t * stagger ns late.
// gnLean is the same round with a float warp reduction, and optionally
// (Tagged) sums published in tagged slots that the readers poll.
#include "gen_l1_35.cuh"
#include "kiln/common.cuh"
#include "kiln/groupnorm.cuh"
#include "proto_util.cuh"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

constexpr i64 kHw = 262144, kC = 64, kSlices = 896, kSliceLen = 2097152;
constexpr int kTB = 88, kThreads = 512, kChunk = 23832, kRounds = 300;

__device__ __forceinline__ void gxLoad(const float *x, i64 i, float (&v)[4]) {
  kiln::loadVec<4>(x + i, v);
}
__device__ __forceinline__ void gxStore(float *out, const float *gamma,
                                        const float *beta, i64 i,
                                        const float (&y)[4]) {
  const int ii = i;
  const float g = gamma[(ii / kHw) % kC], b = beta[(ii / kHw) % kC];
  float gy[4];
  for (int l = 0; l < 4; ++l)
    gy[l] = y[l] * g + b;
  kiln::storeVec<4>(out + ii, gy);
}

// Kiln's template, as the generated kernel instantiates it.
__global__ void __launch_bounds__(512, 2)
    gnTeamNow(const float *__restrict__ x, const float *__restrict__ gamma,
              const float *__restrict__ beta, float *__restrict__ out,
              double *__restrict__ partials, unsigned *counters) {
  struct Raw {
    float a0[4];
  };
  auto loadRaw = [&](i64 i, Raw &r) { gxLoad(x, i, r.a0); };
  auto finish = [&](i64, const Raw &r, float(&v)[4]) {
    for (int l = 0; l < 4; ++l)
      v[l] = r.a0[l];
  };
  auto store = [&](i64 i, float(&y)[4]) { gxStore(out, gamma, beta, i, y); };
  kiln::gnTeam<kSlices, kSliceLen, kTB, kThreads, 4, kChunk, kChunk, Raw>(
      loadRaw, finish, store, [] {}, 1e-5f, partials, counters);
}

__device__ __forceinline__ u64 gtime() {
  u64 t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

template <int TB, int Threads, int BPS, int Chunk, bool Shift, bool Pref,
          bool Atomic, int Fence = 0, int PG = 1, bool TrailSync = true,
          bool Ctl = false>
__global__ void __launch_bounds__(Threads, BPS)
    gnProbe(const float *__restrict__ x, const float *__restrict__ gamma,
            const float *__restrict__ beta, float *__restrict__ out,
            double *__restrict__ partials, unsigned *counters, u64 *ts,
            unsigned stagger, unsigned *fallbacks, double *acc, float eps) {
  static_assert(!Atomic || Shift, "sums need one shift per team");
  // Ctl: warp 0 streams nothing and publishes (its stores have drained).
  constexpr int U = kiln::kGnUnroll, Vec = 4,
                step = (Threads - (Ctl ? 32 : 0)) * Vec;
  extern __shared__ float4 smemRaw[];
  float *part = reinterpret_cast<float *>(smemRaw);
  __shared__ double scratch[64];
  __shared__ double stats[2];
  const int team = blockIdx.x / TB, rank = blockIdx.x % TB;
  const int numTeams = gridDim.x / TB;
  const i64 begin = rank * (i64)Chunk;
  const i64 end = begin + Chunk < kSliceLen ? begin + Chunk : kSliceLen;
  const double n = static_cast<double>(end - begin);
  const int tid = threadIdx.x;
  const i64 myFirst = !Ctl        ? begin + tid * Vec
                      : tid >= 32 ? begin + (tid - 32) * Vec
                                  : end;
  if (stagger) {
    if (tid == 0) {
      const u64 t = gtime() + (u64)team * stagger;
      while (gtime() < t) {
      }
    }
    __syncthreads();
  }
  unsigned xk = 0;
  // Publishes this block's moments about cc, waits for the team, and leaves
  // the slice's mean and M2 in stats.
  auto exchange = [&](float cc, double m1, double m2, u64 *rt) {
    if (rt)
      rt[1] = gtime();
    if constexpr (Atomic) {
      // Every block's moments are about the same shift cc: the team's sums
      // are plain sums, accumulated with atomics in one of 3 buffers.
      double *mine = acc + (team * 3 + xk % 3) * 2;
      if (tid == 0) {
        atomicAdd(mine, m1);
        atomicAdd(mine + 1, m2);
        if constexpr (Fence == 0) {
          __threadfence();
          atomicAdd(counters + team, 1u);
        } else if constexpr (Fence == 1) {
          asm volatile("fence.acq_rel.gpu;" ::: "memory");
          atomicAdd(counters + team, 1u);
        } else {
          asm volatile(
              "red.release.gpu.global.add.u32 [%0], 1;" ::"l"(counters + team)
              : "memory");
        }
        if (rt)
          rt[2] = gtime();
        const unsigned target = (xk + 1) * TB;
        if constexpr (Fence == 2) {
          for (;;) {
            unsigned v;
            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];"
                         : "=r"(v)
                         : "l"(counters + team)
                         : "memory");
            if (v >= target)
              break;
            __nanosleep(64);
          }
        } else {
          while (*reinterpret_cast<volatile unsigned *>(counters + team) <
                 target)
            __nanosleep(64);
          if constexpr (Fence == 1)
            asm volatile("fence.acq_rel.gpu;" ::: "memory");
          else
            __threadfence();
        }
        if (rt)
          rt[3] = gtime();
        const double S1 = *reinterpret_cast<volatile double *>(mine);
        const double S2 = *reinterpret_cast<volatile double *>(mine + 1);
        const double dm = S1 / (double)kSliceLen;
        stats[0] = cc + dm;
        stats[1] = S2 - S1 * dm;
        // Every block has read the previous exchange's buffer (it arrived
        // here after doing so): clear it for the exchange after next.
        if (rank == 0 && xk > 0) {
          double *old = acc + (team * 3 + (xk - 1) % 3) * 2;
          old[0] = 0;
          old[1] = 0;
        }
      }
      __syncthreads();
    } else {
      double *mine = partials + ((team * 2 + (xk & 1)) * (i64)TB + rank) * 4;
      if (tid == 0) {
        mine[0] = n;
        mine[1] = cc;
        mine[2] = m1;
        mine[3] = m2;
        __threadfence();
        atomicAdd(counters + team, 1u);
        if (rt)
          rt[2] = gtime();
        const unsigned target = (xk + 1) * TB;
        while (*reinterpret_cast<volatile unsigned *>(counters + team) < target)
          __nanosleep(64);
        __threadfence();
        if (rt)
          rt[3] = gtime();
      }
      __syncthreads();
      if (tid < 32) {
        const double *all = partials + (team * 2 + (xk & 1)) * (i64)TB * 4;
        double a = 0;
        for (int b = tid; b < TB; b += 32) {
          volatile const double *p = all + b * 4;
          a += p[0] * p[1] + p[2];
        }
        const double mean = kiln::groupSum<32>(a) / (double)kSliceLen;
        double q = 0;
        for (int b = tid; b < TB; b += 32) {
          volatile const double *p = all + b * 4;
          double dc = mean - p[1];
          q += p[3] - 2 * dc * p[2] + p[0] * dc * dc;
        }
        q = kiln::groupSum<32>(q);
        if (tid == 0) {
          stats[0] = mean;
          stats[1] = q;
        }
      }
      __syncthreads();
    }
    if (rt)
      rt[4] = gtime();
    ++xk;
  };
  // Moments about cc of the part, from shared memory.
  auto centred = [&](float cc, float &s1, float &s2) {
    s1 = 0, s2 = 0;
    for (i64 e = myFirst; e < end; e += step) {
      float v[Vec];
      kiln::loadVec<Vec>(part + (e - begin), v);
#pragma unroll
      for (int l = 0; l < Vec; ++l) {
        float d = v[l] - cc;
        s1 += d;
        s2 += d * d;
      }
    }
  };

  float c = 0, s1 = 0, s2 = 0, sum = 0;
  if (team < kSlices) {
    const i64 base = team * kSliceLen;
    for (i64 e0 = myFirst; e0 < end; e0 += step * U) {
      float v[U][Vec];
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (e0 + u * step < end)
          gxLoad(x, base + e0 + u * step, v[u]);
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const i64 e = e0 + u * step;
        if (e < end) {
          kiln::storeVec<Vec>(part + (e - begin), v[u]);
#pragma unroll
          for (int l = 0; l < Vec; ++l) {
            sum += v[u][l];
            float d = v[u][l] - c;
            s1 += d;
            s2 += d * d;
          }
        }
      }
    }
  }
  unsigned round = 0;
  for (i64 s = team; s < kSlices; s += numTeams, ++round) {
    u64 *rt =
        ts && tid == 0 ? ts + ((i64)blockIdx.x * kRounds + round) * 8 : nullptr;
    if (rt)
      rt[0] = gtime();
    const i64 base = s * kSliceLen;
    const i64 next = s + numTeams;
    const bool more = next < kSlices;
    const i64 nextBase = next * kSliceLen;
    float pre[PG][U][Vec];
    const i64 first = myFirst;
    if constexpr (Pref) {
      if (more) {
#pragma unroll
        for (int g = 0; g < PG; ++g)
#pragma unroll
          for (int u = 0; u < U; ++u)
            if (first + (g * U + u) * step < end)
              gxLoad(x, nextBase + first + (g * U + u) * step, pre[g][u]);
      }
    }
    if constexpr (!Shift) {
      double t1[1] = {sum};
      kiln::blockSum<Threads>(t1, scratch);
      c = static_cast<float>(t1[0] / n);
      centred(c, s1, s2);
    }
    {
      double t2[2] = {s1, s2};
      kiln::blockSum<Threads>(t2, scratch);
      exchange(c, t2[0], t2[1], rt);
    }
    if constexpr (Shift) {
      const double dm = stats[0] - c;
      const double m2 = stats[1];
      if (!(dm * dm * kSliceLen <= 4 * m2 && m2 < 1e300)) {
        __syncthreads(); // stats are rewritten
        if (tid == 0 && fallbacks)
          atomicAdd(fallbacks, 1u);
        c = static_cast<float>(stats[0]);
        centred(c, s1, s2);
        double t2[2] = {s1, s2};
        kiln::blockSum<Threads>(t2, scratch);
        exchange(c, t2[0], t2[1], rt);
      }
    }
    const kiln::GnStats st =
        kiln::gnFinish(stats[0], stats[1], (double)kSliceLen, eps);
    const float cNext = Shift ? static_cast<float>(stats[0]) : 0.f;
    sum = 0, s1 = 0, s2 = 0;
    auto body = [&](i64 e0, float(&w)[U][Vec]) {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const i64 e = e0 + u * step;
        if (e >= end)
          continue;
        float v[Vec];
        kiln::loadVec<Vec>(part + (e - begin), v);
        kiln::gnNormalize<Vec>(st, v);
        gxStore(out, gamma, beta, base + e, v);
        if (more) {
          kiln::storeVec<Vec>(part + (e - begin), w[u]);
#pragma unroll
          for (int l = 0; l < Vec; ++l) {
            if constexpr (Shift) {
              float d = w[u][l] - cNext;
              s1 += d;
              s2 += d * d;
            } else {
              sum += w[u][l];
            }
          }
        }
      }
    };
    i64 e0 = first;
    if constexpr (Pref) {
#pragma unroll
      for (int g = 0; g < PG; ++g) {
        body(e0, pre[g]);
        e0 += step * U;
      }
    }
    for (; e0 < end; e0 += step * U) {
      float w[U][Vec];
      if (more) {
#pragma unroll
        for (int u = 0; u < U; ++u)
          if (e0 + u * step < end)
            gxLoad(x, nextBase + e0 + u * step, w[u]);
      }
      body(e0, w);
    }
    c = cNext;
    if constexpr (TrailSync)
      __syncthreads();
    else
      __syncwarp();
    if (rt)
      rt[5] = gtime();
  }
}

// gnLean: shift + prefetch + atomic sums, with a lighter block reduction
// (float warp sums, thread 0 finishes in double, no broadcast), no sync at
// the end of a round, and (Late) warp 0 issuing its prefetch only after
// thread 0 has published, so the publishing fence waits for no loads.
__device__ __forceinline__ u64 tagWord(double v, unsigned tag) {
  if (isinf(v))
    v = copysign(1.7976931348623157e308, v);
  return (static_cast<u64>(__double_as_longlong(v)) & ~0xffffull) | tag;
}
__device__ __forceinline__ double untag(u64 w) {
  return __longlong_as_double(static_cast<long long>(w & ~0xffffull));
}

template <int TB, int Threads, int BPS, int Chunk, bool Late,
          bool Stamps = true, bool Tagged = false>
__global__ void __launch_bounds__(Threads, BPS)
    gnLean(const float *__restrict__ x, const float *__restrict__ gamma,
           const float *__restrict__ beta, float *__restrict__ out,
           double *__restrict__ partials, unsigned *counters, u64 *ts,
           unsigned stagger, unsigned *fallbacks, double *acc, float eps) {
  constexpr int U = kiln::kGnUnroll, Vec = 4, step = Threads * Vec;
  constexpr int warps = Threads / 32;
  extern __shared__ float4 smemRaw[];
  float *part = reinterpret_cast<float *>(smemRaw);
  __shared__ float2 wsum[warps];
  __shared__ double2 tsum[(TB + 31) / 32];
  __shared__ double stats[2];
  const int team = blockIdx.x / TB, rank = blockIdx.x % TB;
  const int numTeams = gridDim.x / TB;
  const i64 begin = rank * (i64)Chunk;
  const i64 end = begin + Chunk < kSliceLen ? begin + Chunk : kSliceLen;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const i64 first = begin + tid * Vec;
  unsigned xk = 0;
  u64 *rt = nullptr;
  auto stamp = [&](int k) {
    if (Stamps && rt)
      rt[k] = gtime();
  };
  // The block's moments about the team-wide shift cc, summed over the team;
  // leaves mean and M2 in stats. issue() runs once per thread while the
  // block waits.
  auto exchange = [&](float cc, float s1, float s2, auto &&issue) {
    stamp(0);
    s1 = kiln::groupSum<32>(s1);
    s2 = kiln::groupSum<32>(s2);
    if (lane == 0)
      wsum[warp] = make_float2(s1, s2);
    __syncthreads();
    stamp(1);
    if constexpr (Tagged) {
      // Each block writes its sums to its own slot, tagged in the low 16
      // mantissa bits with the exchange's number: a slot is valid when its
      // tag is, so no fence or counter is needed.
      const u64 tag = (xk + 1) & 0xffff;
      u64 *slots = reinterpret_cast<u64 *>(partials) +
                   (team * 2 + (xk & 1)) * (i64)TB * 2;
      if (tid == 0) {
        double a = 0, b = 0;
#pragma unroll 2
        for (int w = 0; w < warps; ++w) {
          a += wsum[w].x;
          b += wsum[w].y;
        }
        const u64 ua = tagWord(a, tag), ub = tagWord(b, tag);
        asm volatile(
            "st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(slots + rank * 2),
            "l"(ua), "l"(ub)
            : "memory");
      }
      stamp(2);
      issue();
      // One slot per lane of the first warps; sums in a fixed order, so
      // every block of the team gets the same bits.
      constexpr int pollWarps = (TB + 31) / 32;
      if (warp < pollWarps) {
        const int slot = warp * 32 + lane;
        double a = 0, b = 0;
        if (slot < TB) {
          for (;;) {
            u64 w0, w1;
            asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];"
                         : "=l"(w0), "=l"(w1)
                         : "l"(slots + slot * 2)
                         : "memory");
            if ((w0 & 0xffff) == tag && (w1 & 0xffff) == tag) {
              a = untag(w0);
              b = untag(w1);
              break;
            }
            __nanosleep(64);
          }
        }
        a = kiln::groupSum<32>(a);
        b = kiln::groupSum<32>(b);
        if (lane == 0)
          tsum[warp] = make_double2(a, b);
      }
      stamp(3);
      __syncthreads();
      if (tid == 0) {
        double a = 0, b = 0;
#pragma unroll
        for (int w = 0; w < pollWarps; ++w) {
          a += tsum[w].x;
          b += tsum[w].y;
        }
        const double dm = a / (double)kSliceLen;
        stats[0] = cc + dm;
        stats[1] = b - a * dm;
      }
    } else {
      double *mine = acc + (team * 3 + xk % 3) * 2;
      if (tid == 0) {
        double a = 0, b = 0;
#pragma unroll 2
        for (int w = 0; w < warps; ++w) {
          a += wsum[w].x;
          b += wsum[w].y;
        }
        atomicAdd(mine, a);
        atomicAdd(mine + 1, b);
        __threadfence();
        atomicAdd(counters + team, 1u);
      }
      stamp(2);
      __syncwarp();
      issue();
      if (tid == 0) {
        const unsigned target = (xk + 1) * TB;
        while (*reinterpret_cast<volatile unsigned *>(counters + team) < target)
          __nanosleep(64);
        __threadfence();
        stamp(3);
        const double S1 = *reinterpret_cast<volatile double *>(mine);
        const double S2 = *reinterpret_cast<volatile double *>(mine + 1);
        const double dm = S1 / (double)kSliceLen;
        stats[0] = cc + dm;
        stats[1] = S2 - S1 * dm;
        if (rank == 0 && xk > 0) {
          double *old = acc + (team * 3 + (xk - 1) % 3) * 2;
          old[0] = 0;
          old[1] = 0;
        }
      }
    }
    __syncthreads();
    stamp(4);
    ++xk;
  };
  auto centred = [&](float cc, float &s1, float &s2) {
    s1 = 0, s2 = 0;
    for (i64 e = first; e < end; e += step) {
      float v[Vec];
      kiln::loadVec<Vec>(part + (e - begin), v);
#pragma unroll
      for (int l = 0; l < Vec; ++l) {
        float d = v[l] - cc;
        s1 += d;
        s2 += d * d;
      }
    }
  };
  if (stagger) {
    if (tid == 0) {
      const u64 t = gtime() + (u64)team * stagger;
      while (gtime() < t) {
      }
    }
    __syncthreads();
  }

  float c = 0, s1 = 0, s2 = 0;
  if (team < kSlices) {
    const i64 base = team * kSliceLen;
    for (i64 e0 = first; e0 < end; e0 += step * U) {
      float v[U][Vec];
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (e0 + u * step < end)
          gxLoad(x, base + e0 + u * step, v[u]);
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const i64 e = e0 + u * step;
        if (e < end) {
          kiln::storeVec<Vec>(part + (e - begin), v[u]);
#pragma unroll
          for (int l = 0; l < Vec; ++l) {
            float d = v[u][l] - c;
            s1 += d;
            s2 += d * d;
          }
        }
      }
    }
  }
  unsigned round = 0;
  for (i64 s = team; s < kSlices; s += numTeams, ++round) {
    rt =
        ts && tid == 0 ? ts + ((i64)blockIdx.x * kRounds + round) * 8 : nullptr;
    const i64 base = s * kSliceLen;
    const i64 next = s + numTeams;
    const bool more = next < kSlices;
    const i64 nextBase = next * kSliceLen;
    float pre[U][Vec];
    auto issue = [&] {
      if (more) {
#pragma unroll
        for (int u = 0; u < U; ++u)
          if (first + u * step < end)
            gxLoad(x, nextBase + first + u * step, pre[u]);
      }
    };
    if (!Late || warp != 0)
      issue();
    exchange(c, s1, s2, [&] {
      if (Late && warp == 0)
        issue();
    });
    {
      const double dm = stats[0] - c;
      const double m2 = stats[1];
      if (!(dm * dm * kSliceLen <= 4 * m2 && m2 < 1e300)) {
        if (tid == 0 && fallbacks)
          atomicAdd(fallbacks, 1u);
        c = static_cast<float>(stats[0]);
        centred(c, s1, s2);
        exchange(c, s1, s2, [] {});
      }
    }
    const kiln::GnStats st =
        kiln::gnFinish(stats[0], stats[1], (double)kSliceLen, eps);
    const float cNext = static_cast<float>(stats[0]);
    s1 = 0, s2 = 0;
    auto body = [&](i64 e0, float(&w)[U][Vec]) {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const i64 e = e0 + u * step;
        if (e >= end)
          continue;
        float v[Vec];
        kiln::loadVec<Vec>(part + (e - begin), v);
        kiln::gnNormalize<Vec>(st, v);
        gxStore(out, gamma, beta, base + e, v);
        if (more) {
          kiln::storeVec<Vec>(part + (e - begin), w[u]);
#pragma unroll
          for (int l = 0; l < Vec; ++l) {
            float d = w[u][l] - cNext;
            s1 += d;
            s2 += d * d;
          }
        }
      }
    };
    body(first, pre);
    for (i64 e0 = first + step * U; e0 < end; e0 += step * U) {
      float w[U][Vec];
      if (more) {
#pragma unroll
        for (int u = 0; u < U; ++u)
          if (e0 + u * step < end)
            gxLoad(x, nextBase + e0 + u * step, w[u]);
      }
      body(e0, w);
    }
    c = cNext;
    stamp(5);
  }
}

// Per-round phases from the timestamps of one launch (mean us over blocks and
// rounds 5..289), and how the teams' round starts sit relative to team 0's
// (a histogram over deciles of a round).
static void phases(const std::vector<u64> &ts, int grid, int tb) {
  const int teams = grid / tb;
  double d[5] = {};
  long cnt = 0;
  for (int blk = 0; blk < grid; ++blk)
    for (int r = 5; r < 290; ++r) {
      const u64 *t = &ts[((i64)blk * kRounds + r) * 8];
      for (int k = 0; k < 5; ++k)
        d[k] += (double)(t[k + 1] - t[k]) * 1e-3;
      ++cnt;
    }
  std::printf("    us per round: block sums %.2f, publish %.2f, wait %.2f, "
              "combine %.2f, stream %.2f\n",
              d[0] / cnt, d[1] / cnt, d[2] / cnt, d[3] / cnt, d[4] / cnt);
  auto start = [&](int team, int r) {
    u64 m = ~0ull;
    for (int k = 0; k < tb; ++k)
      m = std::min(m, ts[((i64)(team * tb + k) * kRounds + r) * 8]);
    return (double)m;
  };
  const double period = (start(0, 290) - start(0, 10)) / 280.0;
  if (!(period > 0))
    return;
  std::printf("    round %.2f us; phase vs team 0 in deciles:", period * 1e-3);
  for (int t = 1; t < teams; ++t) {
    int hist[10] = {};
    for (int r = 10; r < 290; ++r) {
      double f = (start(t, r) - start(0, r)) / period;
      f -= std::floor(f);
      ++hist[std::min(9, (int)(f * 10))];
    }
    std::printf(" |");
    for (int h : hist)
      std::printf(" %d", h);
  }
  std::printf("\n");
}

int main(int argc, char **argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const int reps = argc > 1 ? std::atoi(argv[1]) : 4;
  Timer tm;
  const i64 n = kSlices * kSliceLen;
  float *x, *xo, *o0, *o1, *g, *b;
  double *partials;
  unsigned *counters, *fallbacks;
  u64 *ts;
  CK(cudaMalloc(&x, n * 4));
  CK(cudaMalloc(&xo, n * 4));
  CK(cudaMalloc(&o0, n * 4));
  CK(cudaMalloc(&o1, n * 4));
  CK(cudaMalloc(&g, 64 * 4));
  CK(cudaMalloc(&b, 64 * 4));
  CK(cudaMalloc(&partials, 1 << 20));
  CK(cudaMalloc(&counters, 4096));
  CK(cudaMalloc(&fallbacks, 4));
  const size_t tsLen = (size_t)396 * kRounds * 8;
  CK(cudaMalloc(&ts, tsLen * 8));
  fillRandom<<<4096, 256>>>(x, n, 1, 0.f);
  fillRandom<<<4096, 256>>>(xo, n, 9, 1e4f);
  fillRandom<<<1, 64>>>(g, 64, 2, 0.5f);
  fillRandom<<<1, 64>>>(b, 64, 3, -0.5f);
  CK(cudaDeviceSynchronize());
  const double copyMs = tm.median(
      [&] { CK(cudaMemcpyAsync(o1, x, n * 4, cudaMemcpyDeviceToDevice)); }, 2,
      10);
  std::printf("L1_35 copy of %.2f GB: %.4f ms (%.3f TB/s r+w)\n", n * 4 / 1e9,
              copyMs, 2 * n * 4 / copyMs / 1e9);
  const size_t smem = kChunk * 4;
  CK(cudaFuncSetAttribute(gnTeamNow,
                          cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  auto runNow = [&](const float *in, float *o) {
    CK(cudaMemsetAsync(counters, 0, 4096));
    CK(cudaMemsetAsync(partials, 0, 4096));
    void *args[] = {&in, &g, &b, &o, &partials, &counters};
    CK(cudaLaunchCooperativeKernel((void *)gnTeamNow, 264, 512, args, smem));
  };
  void *gens[] = {(void *)gn_8be871, (void *)gnGenA, (void *)gnGenB,
                  (void *)gnGenC};
  const char *genNames[] = {"generated, nvcc", "generated, i64 loads",
                            "generated, i64 loads+stores",
                            "generated, restrict sums"};
  for (void *f : gens)
    CK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            smem));
  auto runGen = [&](void *f, const float *in, float *o) {
    CK(cudaMemsetAsync(counters, 0, 4096));
    CK(cudaMemsetAsync(partials, 0, 4096));
    void *args[] = {&in, &g, &b, &o, &partials, &counters};
    CK(cudaLaunchCooperativeKernel(f, 264, 512, args, smem));
  };
  // Reference outputs from the template, for both inputs.
  float *ref0 = o0, *refOff;
  CK(cudaMalloc(&refOff, n * 4));
  runNow(x, ref0);
  runNow(xo, refOff);
  CK(cudaDeviceSynchronize());

  struct Variant {
    const char *name;
    void *fn;
    int grid, threads, tb, chunk;
    unsigned stagger;
  };
  // One entry per experiment of bench/NOTES.md v4. Probe<...> takes
  // gnProbe's template arguments after the team shape: Shift, Pref,
  // Atomic, Fence (0 threadfence, 2 release/acquire), prefetch groups,
  // end-of-round block barrier, control warp.
#define PROBE(TB, T, BPS, CH, ...)                                             \
  (void *)gnProbe<TB, T, BPS, CH, __VA_ARGS__>, (int)(TB * 3), T, TB, CH
#define LEAN(...)                                                              \
  (void *)gnLean<88, 512, 2, 23832, __VA_ARGS__>, 264, 512, 88, 23832
  std::vector<Variant> vs = {
      {"v2: partials, second pass",
       PROBE(88, 512, 2, 23832, false, false, false), 0},
      {"v2, team t starts t x 5 us late",
       PROBE(88, 512, 2, 23832, false, false, false), 5000},
      {"shift", PROBE(88, 512, 2, 23832, true, false, false), 0},
      {"shift + prefetch", PROBE(88, 512, 2, 23832, true, true, false), 0},
      {"+ atomics, threadfence", PROBE(88, 512, 2, 23832, true, true, true, 0),
       0},
      {"+ atomics, release/acquire",
       PROBE(88, 512, 2, 23832, true, true, true, 2), 0},
      {"+ no end-of-round barrier (kept)",
       PROBE(88, 512, 2, 23832, true, true, true, 2, 1, false), 0},
      {"lean reduction, warp 0 late", LEAN(true), 0},
      {"tagged slots", LEAN(true, true, true), 0},
      {"3 teams of 132 blocks", PROBE(132, 320, 3, 15888, true, true, true, 2),
       0},
      {"384 threads, 8 prefetched",
       PROBE(88, 384, 2, 23832, true, true, true, 2, 2), 0},
      {"control warp",
       PROBE(88, 512, 2, 23832, true, true, true, 2, 1, true, true), 0},
  };

  for (auto &v : vs)
    CK(cudaFuncSetAttribute(v.fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            v.chunk * 4));
  float e = 1e-5f;
  double *acc;
  CK(cudaMalloc(&acc, 4096));
  auto runProbe = [&](const Variant &v, const float *in, float *o, u64 *t,
                      unsigned *fb) {
    CK(cudaMemsetAsync(counters, 0, 4096));
    CK(cudaMemsetAsync(acc, 0, 4096));
    CK(cudaMemsetAsync(partials, 0, 1 << 20));
    unsigned st = v.stagger;
    void *args[] = {&in, &g,  &b,  &o,   &partials, &counters,
                    &t,  &st, &fb, &acc, &e};
    CK(cudaLaunchCooperativeKernel(v.fn, v.grid, v.threads, args,
                                   (size_t)v.chunk * 4));
  };
  // Correctness against the template, on both inputs, with fallback counts.
  for (auto &v : vs) {
    for (int k = 0; k < 2; ++k) {
      const float *in = k ? xo : x;
      CK(cudaMemset(o1, 0xff, n * 4));
      CK(cudaMemset(fallbacks, 0, 4));
      runProbe(v, in, o1, nullptr, fallbacks);
      CK(cudaDeviceSynchronize());
      unsigned fb;
      CK(cudaMemcpy(&fb, fallbacks, 4, cudaMemcpyDeviceToHost));
      std::printf("check %-26s %s input: maxdiff vs template %.3g, "
                  "fallback exchanges %u\n",
                  v.name, k ? "1e4-offset" : "U(0,1)",
                  diffOf(k ? refOff : ref0, o1, n), fb);
    }
  }
  std::vector<u64> host(tsLen);
  for (int r = 0; r < reps; ++r) {
    std::printf("--- repetition %d\n", r);
    const double ms = tm.median([&] { runNow(x, o0); }, 2, 9);
    std::printf("  %-36s %.4f ms  %5.1f%% of copy\n", "template", ms,
                100 * copyMs / ms);
    for (int k = 0; k < 4; ++k) {
      const double gms = tm.median([&] { runGen(gens[k], x, o1); }, 2, 9);
      std::printf("  %-36s %.4f ms  %5.1f%% of copy, maxdiff %.3g\n",
                  genNames[k], gms, 100 * copyMs / gms, diffOf(o0, o1, n));
    }
    for (auto &v : vs) {
      const double pm =
          tm.median([&] { runProbe(v, x, o1, nullptr, nullptr); }, 2, 9);
      // One timed launch with timestamps.
      CK(cudaMemset(ts, 0, tsLen * 8));
      const double tmMs =
          tm.median([&] { runProbe(v, x, o1, ts, nullptr); }, 0, 1);
      CK(cudaMemcpy(host.data(), ts, tsLen * 8, cudaMemcpyDeviceToHost));
      std::printf("  %-36s %.4f ms  %5.1f%% of copy (with timestamps %.4f)\n",
                  v.name, pm, 100 * copyMs / pm, tmMs);
      phases(host, v.grid, v.tb);
    }
  }
  return 0;
}
