// Prototype (issue 27): can L2_19's GroupNorm run beside its convolution on
// SMs of its own? The convolution is compute-bound (tensor cores) and the
// GroupNorm memory-bound, so the convolution on C of the 132 SMs and the
// GroupNorm (gnTeam, the whole part of a slice on chip) on the rest, at
// once, might finish in about max(conv on C SMs, GroupNorm on the rest)
// instead of their sum. Timing only: the two kernels do not wait for each
// other (the GroupNorm reads y as it stands), so this bounds what a
// synchronised version (the GroupNorm a sample behind) could reach.
// L2_19 at `high`: conv_transpose2d 64 -> 64 3 x 3 on [128, 64, 256, 256]
// (TF32, ping-pong, the kernel Kiln generates), then gelu + GroupNorm(8).
//   nvcc -std=c++17 -O3 -arch sm_90a -I templates -I bench/proto \
//        -o conv_split bench/proto/conv_split.cu
//   ./conv_split
#include "kiln/groupnorm.cuh"
#include "kiln/ops.cuh"
#include "kiln/wgmma_conv.cuh"
#include "proto_util.cuh"

constexpr int N = 128;
constexpr kiln::i64 nx = (kiln::i64)N * 64 * 256 * 256,
                    ny = (kiln::i64)N * 64 * 258 * 258;
constexpr kiln::i64 kSlices = N * 8, kSliceLen = 8ll * 258 * 258;

extern "C" __global__ void __launch_bounds__(384, 1)
    conv(const float *__restrict__ in_x, const float *__restrict__ in_w,
         const float *__restrict__ in_b, float *__restrict__ out_y,
         float *parts, unsigned long long *launches, unsigned *splitFlag,
         unsigned *tickets) {
  auto epilogue = [&](kiln::i64 i, float(&v)[2], bool live = true) {
    const unsigned ii = i;
    if (live)
      kiln::storeVec<2>(out_y + ii, v);
  };
  kiln::wgmmaConv<kiln::ConvTranspose2dParams<N, 64, 256, 256, 64, 3, 3, 1, 1,
                                              0, 0, 1, 1, 1, 0, 0>,
                  true, 1, 64, false, 2, true, true>(
      in_x, in_w, in_b, epilogue, parts, launches, splitFlag, tickets);
}

template <int TB>
__global__ void __launch_bounds__(512, 2)
    gn(const float *__restrict__ in_y, const float *__restrict__ in_gamma,
       const float *__restrict__ in_beta, float *__restrict__ out_out,
       double *sums, unsigned *counters) {
  constexpr kiln::i64 C = (kSliceLen + TB - 1) / TB;
  constexpr kiln::i64 Chunk = (C + 3) / 4 * 4;
  struct Raw {
    float a0[4];
  };
  auto loadRaw = [&](kiln::i64 i, Raw &r) { kiln::loadVec<4>(in_y + i, r.a0); };
  auto finish = [&](kiln::i64, const Raw &r, float(&v)[4]) {
#pragma unroll
    for (int l = 0; l < 4; ++l)
      v[l] = kiln::geluErf(r.a0[l]);
  };
  auto store = [&](kiln::i64 i, float(&y)[4]) {
    const unsigned ii = i;
    const float g = in_gamma[(ii / 66564) % 64], b = in_beta[(ii / 66564) % 64];
    float r[4];
#pragma unroll
    for (int l = 0; l < 4; ++l)
      r[l] = y[l] * g + b;
    kiln::storeVec<4>(out_out + ii, r);
  };
  auto step = [&] {};
  auto prefetch = [&](kiln::i64 i, unsigned bytes) {
    kiln::prefetchL2(in_y + i, bytes);
  };
  kiln::gnTeam<kSlices, kSliceLen, TB, 512, 4, Chunk, Chunk, Raw>(
      loadRaw, finish, store, step, 1e-05f, sums, counters, prefetch, 4096ll);
}

// A copy of n floats by bulk copies (the copy engine, no registers), each
// block a contiguous range through a ring of S stages of B bytes in shared
// memory, Lag stages between a chunk's load and its store: how many bytes
// a second can a few SMs move? One thread drives it all.
template <int S, int B, int Lag>
__global__ void bulkCopy(const float *src, float *dst, kiln::i64 n) {
#ifdef KILN_HAS_WGMMA
  extern __shared__ __align__(128) unsigned char ring[];
  __shared__ kiln::u64 bars[S];
  if (threadIdx.x != 0)
    return;
  const kiln::i64 n4 = n / 4;
  const kiln::i64 lo = n4 * blockIdx.x / gridDim.x * 4,
                  hi = n4 * (blockIdx.x + 1) / gridDim.x * 4;
  constexpr int F = B / 4;
  const kiln::i64 chunks = (hi - lo + F - 1) / F;
  for (int s = 0; s < S; ++s)
    kiln::wg::barrierInit(&bars[s], 1);
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  auto bytesOf = [&](kiln::i64 c) {
    return static_cast<unsigned>(
        min(static_cast<kiln::i64>(F), hi - lo - c * F) * 4);
  };
  for (kiln::i64 c = 0; c < chunks + Lag; ++c) {
    if (c < chunks) {
      if (c >= S)
        asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(S - 1 - Lag)
                     : "memory");
      float *st = reinterpret_cast<float *>(ring + (c % S) * B);
      kiln::wg::barrierArriveIf(&bars[c % S], true);
      kiln::wg::expectBytes(&bars[c % S], bytesOf(c));
      kiln::wg::bulkCopy(kiln::wg::smem(st), src + lo + c * F, bytesOf(c),
                         &bars[c % S]);
    }
    const kiln::i64 d = c - Lag;
    if (d >= 0) {
      kiln::wg::barrierWait(&bars[d % S], (d / S) & 1);
      asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], "
                   "%2;" ::"l"(dst + lo + d * F),
                   "r"(kiln::wg::smem(ring + (d % S) * B)), "r"(bytesOf(d))
                   : "memory");
      asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    }
  }
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
#endif
}

template <int S, int B, int Lag>
static void launchCopy(const float *src, float *dst, int grid, cudaStream_t s) {
  CK(cudaFuncSetAttribute(bulkCopy<S, B, Lag>,
                          cudaFuncAttributeMaxDynamicSharedMemorySize, S * B));
  bulkCopy<S, B, Lag><<<grid, 32, S * B, s>>>(src, dst, ny);
}

struct Bufs {
  float *x, *w, *b, *y, *gamma, *beta, *out, *parts;
  unsigned long long *launches;
  unsigned *flag, *tickets, *counters;
  double *sums;
};

static void launchConv(Bufs &d, int grid, cudaStream_t s) {
  void *args[] = {&d.x,     &d.w,        &d.b,    &d.y,
                  &d.parts, &d.launches, &d.flag, &d.tickets};
  CK(cudaLaunchCooperativeKernel((void *)conv, grid, 384, args,
                                 kiln::WgmmaConvLayout(true, 3, 3, 1, 1, 0, 0,
                                                       1, 1, 64, 64, 1, false,
                                                       4, true, 0)
                                         .sharedBytes() +
                                     1024,
                                 s));
}

template <int TB> static void launchGn(Bufs &d, int teams, cudaStream_t s) {
  constexpr kiln::i64 C = (kSliceLen + TB - 1) / TB;
  constexpr int smem = (C + 3) / 4 * 4 * 4;
  CK(cudaFuncSetAttribute(gn<TB>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          smem));
  gn<TB><<<teams * TB, 512, smem, s>>>(d.y, d.gamma, d.beta, d.out, d.sums,
                                       d.counters);
}

int main() {
  Bufs d;
  CK(cudaMalloc(&d.x, nx * 4));
  CK(cudaMalloc(&d.y, ny * 4));
  CK(cudaMalloc(&d.out, ny * 4));
  CK(cudaMalloc(&d.w, 64 * 64 * 9 * 4));
  CK(cudaMalloc(&d.b, 256));
  CK(cudaMalloc(&d.gamma, 256));
  CK(cudaMalloc(&d.beta, 256));
  CK(cudaMalloc(&d.parts, 1 << 20));
  CK(cudaMalloc(&d.launches, 8));
  CK(cudaMalloc(&d.flag, 4));
  CK(cudaMalloc(&d.tickets, 256));
  CK(cudaMalloc(&d.counters, 1 << 16));
  CK(cudaMalloc(&d.sums, 1 << 20));
  CK(cudaMemset(d.launches, 0, 8));
  CK(cudaMemset(d.tickets, 0, 256));
  CK(cudaMemset(d.counters, 0, 1 << 16));
  CK(cudaMemset(d.sums, 0, 1 << 20));
  const unsigned one = 1;
  CK(cudaMemcpy(d.flag, &one, 4, cudaMemcpyHostToDevice));
  fillRandom<<<1024, 256>>>(d.x, nx, 1, 0.f);
  fillRandom<<<64, 256>>>(d.w, 64 * 64 * 9, 2, -0.5f);
  fillRandom<<<1, 64>>>(d.b, 64, 3, -0.5f);
  fillRandom<<<1, 64>>>(d.gamma, 64, 4, 0.5f);
  fillRandom<<<1, 64>>>(d.beta, 64, 5, -0.5f);
  const int smem = kiln::WgmmaConvLayout(true, 3, 3, 1, 1, 0, 0, 1, 1, 64, 64,
                                         1, false, 4, true, 0)
                       .sharedBytes() +
                   1024;
  CK(cudaFuncSetAttribute(conv, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          smem));
  cudaStream_t a, b;
  CK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  cudaEvent_t forkE, joinE, t0, t1;
  CK(cudaEventCreateWithFlags(&forkE, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&joinE, cudaEventDisableTiming));
  CK(cudaEventCreate(&t0));
  CK(cudaEventCreate(&t1));
  // Median ms of 15 runs (3 warm-up) of f on stream a (b forked from it).
  auto time = [&](const char *what, auto f) {
    std::vector<float> ms;
    for (int r = 0; r < 18; ++r) {
      CK(cudaEventRecord(t0, a));
      CK(cudaEventRecord(forkE, a));
      CK(cudaStreamWaitEvent(b, forkE));
      f();
      CK(cudaEventRecord(joinE, b));
      CK(cudaStreamWaitEvent(a, joinE));
      CK(cudaEventRecord(t1, a));
      CK(cudaEventSynchronize(t1));
      float t;
      CK(cudaEventElapsedTime(&t, t0, t1));
      if (r >= 3)
        ms.push_back(t);
    }
    CK(cudaGetLastError());
    std::sort(ms.begin(), ms.end());
    std::printf("%-44s %.4f ms (min %.4f)\n", what, ms[ms.size() / 2], ms[0]);
  };
  char label[128];
  for (int g : {132, 120, 116, 110, 104, 100}) {
    std::snprintf(label, sizeof label, "conv on %d blocks", g);
    time(label, [&] { launchConv(d, g, a); });
  }
  time("gn 13 teams of 20 (Kiln's, 260 blocks)",
       [&] { launchGn<20>(d, 13, a); });
  time("gn 1 team of 32 (16 SMs)", [&] { launchGn<32>(d, 1, a); });
  time("gn 2 teams of 16 (16 SMs)", [&] { launchGn<16>(d, 2, a); });
  time("gn 2 teams of 22 (22 SMs)", [&] { launchGn<22>(d, 2, a); });
  time("gn 1 team of 44 (22 SMs)", [&] { launchGn<44>(d, 1, a); });
  time("gn 2 teams of 28 (28 SMs)", [&] { launchGn<28>(d, 2, a); });
  time("gn 2 teams of 32 (32 SMs)", [&] { launchGn<32>(d, 2, a); });
  for (int g : {132, 32, 22, 16}) {
    std::snprintf(label, sizeof label, "bulk copy y -> out on %d blocks", g);
    time(label, [&] { launchCopy<12, 16384, 6>(d.y, d.out, g, a); });
    std::snprintf(label, sizeof label, "same, stages of 32 KiB on %d", g);
    time(label, [&] { launchCopy<6, 32768, 3>(d.y, d.out, g, a); });
  }
  time("together: conv 116 + bulk copy 16", [&] {
    launchConv(d, 116, a);
    launchCopy<12, 16384, 6>(d.y, d.out, 16, b);
  });
  time("together: conv 110 + bulk copy 22", [&] {
    launchConv(d, 110, a);
    launchCopy<12, 16384, 6>(d.y, d.out, 22, b);
  });
  time("serial: conv 132 then gn 260", [&] {
    launchConv(d, 132, a);
    launchGn<20>(d, 13, a);
  });
  time("together: conv 116 + gn 2x16", [&] {
    launchConv(d, 116, a);
    launchGn<16>(d, 2, b);
  });
  time("together: conv 110 + gn 2x22", [&] {
    launchConv(d, 110, a);
    launchGn<22>(d, 2, b);
  });
  time("together: conv 110 + gn 1x44", [&] {
    launchConv(d, 110, a);
    launchGn<44>(d, 1, b);
  });
  time("together: conv 104 + gn 2x28", [&] {
    launchConv(d, 104, a);
    launchGn<28>(d, 2, b);
  });
  time("together: conv 100 + gn 2x32", [&] {
    launchConv(d, 100, a);
    launchGn<32>(d, 2, b);
  });
}
