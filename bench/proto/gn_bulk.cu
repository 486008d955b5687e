// Prototype: GroupNorm kernels whose reads go through the bulk copy engine
// into shared memory, against Kiln's current kernels (the templates), on the
// L1_35, L2_37 and L2_62 GroupNorm shapes. Standalone (nvcc -arch=sm_90
// -I templates -I bench/proto); prints one line per variant: median ms,
// fraction of a same-size device copy, max |diff| against the current kernel.
#include "bulk.cuh"
#include "kiln/groupnorm.cuh"
#include "kiln/ops.cuh"
#include "proto_util.cuh"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

//===----------------------------------------------------------------------===//
// L1_35: x [112, 64, 512, 512], 8 groups; gamma/beta per channel (hw 262144).

constexpr i64 kHw = 262144, kC = 64;

// Baseline: Kiln's generated kernel today.
__global__ void __launch_bounds__(512, 2)
    gnTeamNow(const float *__restrict__ in_x, const float *__restrict__ gamma,
              const float *__restrict__ beta, float *__restrict__ out,
              double *__restrict__ partials, unsigned *counters) {
  struct Raw {
    float a0[4];
  };
  auto loadRaw = [&](i64 i, Raw &r) {
    const int ii = i;
    kiln::loadVec<4>(in_x + ii, r.a0);
  };
  auto finish = [&](i64 i, const Raw &r, float(&v)[4]) {
    for (int l = 0; l < 4; ++l)
      v[l] = r.a0[l];
  };
  auto store = [&](i64 i, float(&y)[4]) {
    const int ii = i;
    const float g = gamma[(ii / kHw) % kC], b = beta[(ii / kHw) % kC];
    float gy[4];
    for (int l = 0; l < 4; ++l)
      gy[l] = y[l] * g + b;
    kiln::storeVec<4>(out + ii, gy);
  };
  auto step = [&] {};
  kiln::gnTeam<896ll, 2097152ll, 88, 512, 4, 23832ll, 23832ll, Raw>(
      loadRaw, finish, store, step, 1e-5f, partials, counters);
}

// Bulk: each warp owns a contiguous range of its block's part in shared
// memory; it refills each 2 KiB piece with the team's next slice as soon as
// it has normalised and written the piece.
template <i64 NumSlices, i64 SliceLen, int TeamBlocks, int Threads, int BPS,
          i64 ChunkLen, int Unroll>
__global__ void __launch_bounds__(Threads, BPS)
    gnTeamBulk(const float *__restrict__ x, const float *__restrict__ gamma,
               const float *__restrict__ beta, float *__restrict__ out,
               double *__restrict__ partials, unsigned *counters, float eps) {
  extern __shared__ float4 smemRaw[];
  float *part = reinterpret_cast<float *>(smemRaw);
  __shared__ u64 bars[Threads / 32];
  __shared__ double scratch[64];
  __shared__ double stats[2];
  constexpr int warps = Threads / 32;
  constexpr i64 W = ((ChunkLen + warps - 1) / warps + 3) / 4 * 4;
  constexpr i64 Piece = 128 * Unroll;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int team = blockIdx.x / TeamBlocks, rank = blockIdx.x % TeamBlocks;
  const int numTeams = gridDim.x / TeamBlocks;
  const i64 begin = rank * ChunkLen;
  const i64 end = begin + ChunkLen < SliceLen ? begin + ChunkLen : SliceLen;
  const i64 len = end - begin;
  const i64 wOff = warp * W < len ? warp * W : len;
  const i64 wLen = wOff + W < len ? W : len - wOff;
  const double n = static_cast<double>(len);
  u64 *bar = &bars[warp];
  if (lane == 0)
    kiln::barrierInit(bar, 1);
  __syncthreads();
  auto issueAll = [&](i64 base) {
    kiln::barrierArm(bar, static_cast<unsigned>(wLen * 4));
    for (i64 q = 0; q < wLen; q += Piece)
      kiln::copyIn(
          part + wOff + q, x + base + begin + wOff + q,
          static_cast<unsigned>((wLen - q < Piece ? wLen - q : Piece) * 4),
          bar);
  };
  if (team < NumSlices && lane == 0)
    issueAll(team * SliceLen);
  unsigned parity = 0, round = 0;
  const float *mine = part + wOff;
  for (i64 s = team; s < NumSlices; s += numTeams, ++round) {
    const i64 base = s * SliceLen;
    kiln::barrierWait(bar, parity);
    parity ^= 1;
    float sum = 0;
    for (i64 e = lane * 4; e < wLen; e += 128) {
      float v[4];
      kiln::loadVec<4>(mine + e, v);
      sum += (v[0] + v[1]) + (v[2] + v[3]);
    }
    double t1[1] = {sum};
    kiln::blockSum<Threads>(t1, scratch);
    const float c = static_cast<float>(t1[0] / n);
    float s1 = 0, s2 = 0;
    for (i64 e = lane * 4; e < wLen; e += 128) {
      float v[4];
      kiln::loadVec<4>(mine + e, v);
      for (int l = 0; l < 4; ++l) {
        float d = v[l] - c;
        s1 += d;
        s2 += d * d;
      }
    }
    double t2[2] = {s1, s2};
    kiln::blockSum<Threads>(t2, scratch);
    {
      double *my =
          partials +
          ((static_cast<i64>(team) * 2 + (round & 1)) * TeamBlocks + rank) * 4;
      if (threadIdx.x == 0) {
        my[0] = n;
        my[1] = c;
        my[2] = t2[0];
        my[3] = t2[1];
        __threadfence();
        atomicAdd(counters + team, 1u);
        const unsigned target = (round + 1) * TeamBlocks;
        while (*reinterpret_cast<volatile unsigned *>(counters + team) < target)
          __nanosleep(64);
        __threadfence();
      }
      __syncthreads();
      if (threadIdx.x < 32) {
        const double *all =
            partials +
            (static_cast<i64>(team) * 2 + (round & 1)) * TeamBlocks * 4;
        double a = 0;
        for (int b = threadIdx.x; b < TeamBlocks; b += 32) {
          volatile const double *p = all + b * 4;
          a += p[0] * p[1] + p[2];
        }
        const double mean =
            kiln::groupSum<32>(a) / static_cast<double>(SliceLen);
        double m2 = 0;
        for (int b = threadIdx.x; b < TeamBlocks; b += 32) {
          volatile const double *p = all + b * 4;
          double dc = mean - p[1];
          m2 += p[3] - 2 * dc * p[2] + p[0] * dc * dc;
        }
        m2 = kiln::groupSum<32>(m2);
        if (threadIdx.x == 0) {
          stats[0] = mean;
          stats[1] = m2;
        }
      }
    }
    __syncthreads();
    const kiln::GnStats st =
        kiln::gnFinish(stats[0], stats[1], static_cast<double>(SliceLen), eps);
    const i64 next = s + numTeams;
    const bool more = next < NumSlices;
    if (more && lane == 0)
      kiln::barrierArm(bar, static_cast<unsigned>(wLen * 4));
    for (i64 q = 0; q < wLen; q += Piece) {
#pragma unroll
      for (int u = 0; u < Unroll; ++u) {
        const i64 e = q + (lane + 32 * u) * 4;
        if (e < wLen) {
          float v[4];
          kiln::loadVec<4>(mine + e, v);
          kiln::gnNormalize<4>(st, v);
          const i64 i = base + begin + wOff + e;
          const float g = gamma[(i / kHw) % kC], b = beta[(i / kHw) % kC];
          for (int l = 0; l < 4; ++l)
            v[l] = v[l] * g + b;
          kiln::storeVec<4>(out + i, v);
        }
      }
      __syncwarp();
      if (more && lane == 0)
        kiln::copyIn(
            part + wOff + q, x + next * SliceLen + begin + wOff + q,
            static_cast<unsigned>((wLen - q < Piece ? wLen - q : Piece) * 4),
            bar);
    }
    __syncthreads(); // stats are rewritten next round
  }
}

__global__ void spin(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

__global__ void __launch_bounds__(512, 2) whereAmI(unsigned *smOf) {
  extern __shared__ float4 smemRaw[];
  if (threadIdx.x == 0) {
    unsigned id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    smOf[blockIdx.x] = id;
    smemRaw[0].x = 0;
  }
}

//===----------------------------------------------------------------------===//
// L2_37 / L2_62: [rows, C] with G groups, prologue sigmoid(y) * y + bias[c].

template <int C, bool Prologue>
__global__ void __launch_bounds__(256, 4)
    gnWarpNow(const float *__restrict__ in_y, const float *__restrict__ bias,
              const float *__restrict__ gamma, const float *__restrict__ beta,
              float *__restrict__ out, i64 slices) {
  struct Raw {
    float a0[4];
  };
  auto loadRaw = [&](i64 i, Raw &r) { kiln::loadVec<4>(in_y + i, r.a0); };
  auto finish = [&](i64 i, const Raw &r, float(&v)[4]) {
    float bb[4];
    if (Prologue)
      kiln::loadVec<4>(bias + (int)(i % C), bb);
    for (int l = 0; l < 4; ++l)
      v[l] = Prologue ? kiln::sigmoid(r.a0[l]) * r.a0[l] + bb[l] : r.a0[l];
  };
  auto store = [&](i64 i, float(&y)[4]) {
    float gw[4], gb[4];
    kiln::loadVec<4>(gamma + (int)(i % C), gw);
    kiln::loadVec<4>(beta + (int)(i % C), gb);
    for (int l = 0; l < 4; ++l)
      y[l] = y[l] * gw[l] + gb[l];
    kiln::storeVec<4>(out + i, y);
  };
  auto step = [&] {};
  if constexpr (C == 4096)
    kiln::gnWarp<2097152ll, 64ll, 16, 4, 1, 4, Raw>(loadRaw, finish, store,
                                                    step, 1e-5f);
  else
    kiln::gnWarp<524288ll, 16ll, 4, 4, 1, 4, Raw>(loadRaw, finish, store, step,
                                                  1e-5f);
}

// Bulk: each warp streams rounds of perWarp consecutive slices through a
// ring of Stages shared-memory buffers; lane 0 keeps Stages - 1 rounds of
// copies in flight ahead of the round being computed.
template <int C, bool Prologue, i64 NumSlices, i64 SliceLen, int Team, int Rows,
          int Stages, int BPS>
__global__ void __launch_bounds__(256, BPS)
    gnWarpBulk(const float *__restrict__ y, const float *__restrict__ bias,
               const float *__restrict__ gamma, const float *__restrict__ beta,
               float *__restrict__ out, float eps) {
  constexpr int Vec = 4;
  static_assert(Team * Vec == SliceLen, "one vector per lane");
  constexpr int teamsPerWarp = 32 / Team;
  constexpr i64 perWarp = static_cast<i64>(teamsPerWarp) * Rows;
  constexpr i64 RoundLen = perWarp * SliceLen;
  extern __shared__ float4 smemRaw[];
  __shared__ u64 barsAll[8 * Stages];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int teamLane = lane % Team, teamInWarp = lane / Team;
  float *ring = reinterpret_cast<float *>(smemRaw) + warp * Stages * RoundLen;
  u64 *bars = barsAll + warp * Stages;
  if (lane < Stages)
    kiln::barrierInit(bars + lane, 1);
  __syncthreads();
  const i64 warpId = static_cast<i64>(blockIdx.x) * 8 + warp;
  const i64 warps = static_cast<i64>(gridDim.x) * 8;
  auto first = [&](i64 i) { return (warpId + i * warps) * perWarp; };
  auto issue = [&](i64 i) {
    const i64 wb = first(i);
    if (wb >= NumSlices)
      return;
    const i64 cnt = NumSlices - wb < perWarp ? NumSlices - wb : perWarp;
    u64 *b = bars + i % Stages;
    kiln::barrierArm(b, static_cast<unsigned>(cnt * SliceLen * 4));
    kiln::copyIn(ring + (i % Stages) * RoundLen, y + wb * SliceLen,
                 static_cast<unsigned>(cnt * SliceLen * 4), b);
  };
  if (lane == 0)
    for (int i = 0; i < Stages; ++i)
      issue(i);
  for (i64 i = 0; first(i) < NumSlices; ++i) {
    const i64 wb = first(i);
    const float *buf = ring + (i % Stages) * RoundLen;
    kiln::barrierWait(bars + i % Stages, static_cast<unsigned>(i / Stages) & 1);
    float v[Rows][Vec];
#pragma unroll
    for (int r = 0; r < Rows; ++r) {
      const i64 local = r * teamsPerWarp + teamInWarp;
      if (wb + local < NumSlices)
        kiln::loadVec<Vec>(buf + local * SliceLen + teamLane * Vec, v[r]);
    }
    __syncwarp();
    if (lane == 0)
      issue(i + Stages);
#pragma unroll
    for (int r = 0; r < Rows; ++r) {
      const i64 s = wb + r * teamsPerWarp + teamInWarp;
      const bool live = s < NumSlices;
      const i64 idx = s * SliceLen + teamLane * Vec;
      if (Prologue && live) {
        float bb[4];
        kiln::loadVec<4>(bias + (int)(idx % C), bb);
        for (int l = 0; l < 4; ++l)
          v[r][l] = kiln::sigmoid(v[r][l]) * v[r][l] + bb[l];
      }
      float sum = 0;
      if (live)
        for (int l = 0; l < Vec; ++l)
          sum += v[r][l];
      const float c = kiln::groupSum<Team>(sum) / static_cast<float>(SliceLen);
      float s1 = 0, s2 = 0;
      if (live)
        for (int l = 0; l < Vec; ++l) {
          float d = v[r][l] - c;
          s1 += d;
          s2 += d * d;
        }
      s1 = kiln::groupSum<Team>(s1);
      s2 = kiln::groupSum<Team>(s2);
      const double n = static_cast<double>(SliceLen);
      const double dm = s1 / n;
      const kiln::GnStats st = kiln::gnFinish(c + dm, s2 - s1 * dm, n, eps);
      if (live) {
        kiln::gnNormalize<Vec>(st, v[r]);
        float gw[4], gb[4];
        kiln::loadVec<4>(gamma + (int)(idx % C), gw);
        kiln::loadVec<4>(beta + (int)(idx % C), gb);
        for (int l = 0; l < 4; ++l)
          v[r][l] = v[r][l] * gw[l] + gb[l];
        kiln::storeVec<4>(out + idx, v[r]);
      }
    }
  }
}

//===----------------------------------------------------------------------===//

static void report(const char *name, double ms, double copyMs, float diff) {
  std::printf("%-44s %8.4f ms  %5.1f%% of copy  maxdiff %.3g\n", name, ms,
              100.0 * copyMs / ms, diff);
}

template <class K>
void coop(K kernel, int grid, int block, size_t smem, void **args) {
  CK(cudaLaunchCooperativeKernel((void *)kernel, grid, block, args, smem));
}

int main(int argc, char **argv) {
  const bool doL1 = argc < 2 || std::atoi(argv[1]) & 1;
  const bool doW = argc < 2 || std::atoi(argv[1]) & 2;
  Timer tm;
  const float eps = 1e-5f;
  if (argc > 1 && std::atoi(argv[1]) & 4) {
    // Host time of the launch paths Kiln uses (GPU idle before each).
    unsigned *ws;
    CK(cudaMalloc(&ws, 1 << 20));
    CK(cudaFuncSetAttribute(
        whereAmI, cudaFuncAttributeMaxDynamicSharedMemorySize, 23832 * 4));
    auto host = [&](const char *what, auto f) {
      std::vector<double> t;
      for (int i = 0; i < 50; ++i) {
        CK(cudaDeviceSynchronize());
        auto a = std::chrono::steady_clock::now();
        f();
        t.push_back(std::chrono::duration<double, std::micro>(
                        std::chrono::steady_clock::now() - a)
                        .count());
      }
      std::sort(t.begin(), t.end());
      std::printf("host %-48s %7.2f us (median of 50)\n", what, t[25]);
    };
    host("memset 4 KiB", [&] { CK(cudaMemsetAsync(ws, 0, 4096)); });
    host("launch 264x512 (95 KB smem)",
         [&] { whereAmI<<<264, 512, 23832 * 4>>>(ws); });
    host("cooperative launch 264x512 (95 KB smem)", [&] {
      void *args[] = {&ws};
      coop(whereAmI, 264, 512, 23832 * 4, args);
    });
    host("memset + cooperative launch", [&] {
      CK(cudaMemsetAsync(ws, 0, 4096));
      void *args[] = {&ws};
      coop(whereAmI, 264, 512, 23832 * 4, args);
    });
    auto busy = [&](const char *what, auto f) {
      std::vector<double> t;
      for (int i = 0; i < 30; ++i) {
        CK(cudaDeviceSynchronize());
        spin<<<1, 1>>>(2000000); // ~1 ms
        auto a = std::chrono::steady_clock::now();
        f();
        t.push_back(std::chrono::duration<double, std::micro>(
                        std::chrono::steady_clock::now() - a)
                        .count());
      }
      std::sort(t.begin(), t.end());
      std::printf("host, GPU busy: %-40s %7.2f us (median of 30)\n", what,
                  t[15]);
    };
    busy("launch 264x512", [&] { whereAmI<<<264, 512, 23832 * 4>>>(ws); });
    busy("cooperative launch 264x512", [&] {
      void *args[] = {&ws};
      coop(whereAmI, 264, 512, 23832 * 4, args);
    });
    busy("launchEx with cooperative attribute", [&] {
      cudaLaunchConfig_t cfg = {};
      cfg.gridDim = 264;
      cfg.blockDim = 512;
      cfg.dynamicSmemBytes = 23832 * 4;
      cudaLaunchAttribute at[1];
      at[0].id = cudaLaunchAttributeCooperative;
      at[0].val.cooperative = 1;
      cfg.attrs = at;
      cfg.numAttrs = 1;
      CK(cudaLaunchKernelEx(&cfg, whereAmI, ws));
    });
    busy("memset", [&] { CK(cudaMemsetAsync(ws, 0, 4096)); });
    host("2 memsets + cooperative launch", [&] {
      CK(cudaMemsetAsync(ws, 0, 4096));
      CK(cudaMemsetAsync(ws + 4096, 0, 4));
      void *args[] = {&ws};
      coop(whereAmI, 264, 512, 23832 * 4, args);
    });
  }
  if (doL1) {
    const i64 n = 112ll * 64 * 512 * 512;
    float *x, *o0, *o1, *g, *b;
    double *partials;
    unsigned *counters;
    CK(cudaMalloc(&x, n * 4));
    CK(cudaMalloc(&o0, n * 4));
    CK(cudaMalloc(&o1, n * 4));
    CK(cudaMalloc(&g, 64 * 4));
    CK(cudaMalloc(&b, 64 * 4));
    CK(cudaMalloc(&partials, 64 << 20));
    CK(cudaMalloc(&counters, 4096));
    fillRandom<<<4096, 256>>>(x, n, 1, 0.f);
    fillRandom<<<1, 64>>>(g, 64, 2, 0.5f);
    fillRandom<<<1, 64>>>(b, 64, 3, -0.5f);
    CK(cudaDeviceSynchronize());
    const double copyMs = tm.median(
        [&] { CK(cudaMemcpyAsync(o1, x, n * 4, cudaMemcpyDeviceToDevice)); }, 2,
        10);
    std::printf("L1_35 copy of %.2f GB: %.4f ms (%.3f TB/s r+w)\n", n * 4 / 1e9,
                copyMs, 2 * n * 4 / copyMs / 1e9);
    auto team = [&](auto kernel, const char *name, float *o) {
      CK(cudaFuncSetAttribute(
          kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 23832 * 4));
      CK(cudaMemset(o, 0xff, n * 4));
      auto run = [&] {
        CK(cudaMemsetAsync(counters, 0, 4096));
        void *args[] = {&x, &g, &b, &o, &partials, &counters};
        coop(kernel, 264, 512, 23832 * 4, args);
      };
      const double ms = tm.median(run, 3, 15);
      report(name, ms, copyMs, o == o0 ? 0.f : diffOf(o0, o1, n));
    };
    {
      CK(cudaFuncSetAttribute(
          whereAmI, cudaFuncAttributeMaxDynamicSharedMemorySize, 23832 * 4));
      for (int t = 0; t < 3; ++t) {
        void *args[] = {&counters};
        coop(whereAmI, 264, 512, 23832 * 4, args);
        unsigned h[264];
        CK(cudaMemcpy(h, counters, sizeof h, cudaMemcpyDeviceToHost));
        int sameTeam = 0, pairs = 0, maxId = 0;
        for (int i = 0; i < 264; ++i)
          for (int j = i + 1; j < 264; ++j)
            if (h[i] == h[j]) {
              ++pairs;
              sameTeam += i / 88 == j / 88;
            }
        for (int i = 0; i < 264; ++i)
          maxId = std::max<int>(maxId, h[i]);
        std::printf("placement: %d SM pairs, %d in one team; block 0..5 on "
                    "SMs %u %u %u %u %u %u, block 132 on %u, max smid %d\n",
                    pairs, sameTeam, h[0], h[1], h[2], h[3], h[4], h[5], h[132],
                    maxId);
      }
    }
    team(gnTeamNow, "L1_35 gnTeam (Kiln's template)", o0);
    {
      auto bulk = [&](auto kernel, const char *name, int grid, int threads,
                      long chunk) {
        const size_t smem = chunk * 4;
        CK(cudaFuncSetAttribute(
            kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        CK(cudaMemset(o1, 0xff, n * 4));
        float e = eps;
        auto run = [&] {
          CK(cudaMemsetAsync(counters, 0, 4096));
          void *args[] = {&x, &g, &b, &o1, &partials, &counters, &e};
          coop(kernel, grid, threads, smem, args);
        };
        const double ms = tm.median(run, 2, 10);
        report(name, ms, copyMs, diffOf(o0, o1, n));
      };
      bulk(gnTeamBulk<896, 2097152, 88, 512, 2, 23832, 4>,
           "L1_35 bulk 2x512, 3 teams of 88", 264, 512, 23832);
      bulk(gnTeamBulk<896, 2097152, 132, 384, 3, 15888, 4>,
           "L1_35 bulk 3x384, 3 teams of 132", 396, 384, 15888);
      bulk(gnTeamBulk<896, 2097152, 176, 256, 4, 11916, 4>,
           "L1_35 bulk 4x256, 3 teams of 176", 528, 256, 11916);
    }
    CK(cudaFree(x));
    CK(cudaFree(o0));
    CK(cudaFree(o1));
  }
  if (doW) {
    for (int shape = 0; shape < 2; ++shape) {
      const i64 rows = shape == 0 ? 32768 : 1024,
                cols = shape == 0 ? 4096 : 8192;
      const i64 n = rows * cols;
      const char *tag = shape == 0 ? "L2_37" : "L2_62";
      float *y, *o0, *o1, *bias, *g, *b;
      CK(cudaMalloc(&y, n * 4));
      CK(cudaMalloc(&o0, n * 4));
      CK(cudaMalloc(&o1, n * 4));
      CK(cudaMalloc(&bias, cols * 4));
      CK(cudaMalloc(&g, cols * 4));
      CK(cudaMalloc(&b, cols * 4));
      fillRandom<<<4096, 256>>>(y, n, 4, -0.5f);
      fillRandom<<<64, 256>>>(bias, cols, 5, -0.5f);
      fillRandom<<<64, 256>>>(g, cols, 6, 0.5f);
      fillRandom<<<64, 256>>>(b, cols, 7, -0.5f);
      CK(cudaDeviceSynchronize());
      const int reps = shape == 0 ? 20 : 100;
      const double copyMs = tm.median(
          [&] { CK(cudaMemcpyAsync(o1, y, n * 4, cudaMemcpyDeviceToDevice)); },
          3, reps);
      std::printf("%s copy of %.1f MB: %.4f ms (%.3f TB/s r+w)\n", tag,
                  n * 4 / 1e6, copyMs, 2 * n * 4 / copyMs / 1e9);
      int sms;
      CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
      const i64 slices = shape == 0 ? 2097152 : 524288;
      const i64 perBlock = shape == 0 ? 64 : 256;
      const int gridNow =
          (int)std::min<i64>((slices + perBlock - 1) / perBlock, 4 * sms);
      char name[96];
      auto warpRun = [&](auto kernel, const char *what, float *o) {
        CK(cudaMemset(o, 0xff, n * 4));
        auto run = [&] { kernel<<<gridNow, 256>>>(y, bias, g, b, o, slices); };
        const double ms = tm.median(run, 3, reps);
        std::snprintf(name, sizeof name, "%s %s", tag, what);
        report(name, ms, copyMs, o == o0 ? 0.f : diffOf(o0, o1, n));
      };
      if (shape == 0)
        warpRun(gnWarpNow<4096, true>, "gnWarp (Kiln's template)", o0);
      else
        warpRun(gnWarpNow<8192, false>, "gnWarp (Kiln's template)", o0);
      auto bulk = [&](auto kernel, const char *what, int bps, size_t smem) {
        CK(cudaFuncSetAttribute(
            kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        CK(cudaMemset(o1, 0xff, n * 4));
        float e = eps;
        auto run = [&] {
          kernel<<<bps * sms, 256, smem>>>(y, bias, g, b, o1, e);
        };
        const double ms = tm.median(run, 3, reps);
        CK(cudaGetLastError());
        std::snprintf(name, sizeof name, "%s bulk %s", tag, what);
        report(name, ms, copyMs, diffOf(o0, o1, n));
      };
      if (shape == 0) {
        bulk(gnWarpBulk<4096, true, 2097152, 64, 16, 4, 4, 3>,
             "rows 4 stages 4 x3", 3, 8 * 4 * 2048);
        bulk(gnWarpBulk<4096, true, 2097152, 64, 16, 4, 3, 4>,
             "rows 4 stages 3 x4", 4, 8 * 3 * 2048);
        bulk(gnWarpBulk<4096, true, 2097152, 64, 16, 2, 6, 4>,
             "rows 2 stages 6 x4", 4, 8 * 6 * 1024);
      } else {
        bulk(gnWarpBulk<8192, false, 524288, 16, 4, 4, 4, 3>,
             "rows 4 stages 4 x3", 3, 8 * 4 * 2048);
        bulk(gnWarpBulk<8192, false, 524288, 16, 4, 2, 4, 4>,
             "rows 2 stages 4 x4", 4, 8 * 4 * 1024);
      }
      CK(cudaFree(y));
      CK(cudaFree(o0));
      CK(cudaFree(o1));
    }
  }
  return 0;
}
