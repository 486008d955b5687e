// Prototype: schedule variants of Kiln's generated GroupNorm kernels
// (bench/NOTES.md v5, v6). Standalone (nvcc -O3 -std=c++17 -arch=sm_90
// -Itemplates -Ibench/proto); arguments: how many times to repeat the set
// (default 3), and optionally a word of the family to run alone (e.g. L2_37).
//
// gen_pf.cuh, written by `python3 bench/proto/make_gen_pf.py
// build/frontend/kiln` from the repository root, holds each flagship
// GroupNorm kernel as Kiln generates it, in variants that differ in one
// thing: gnTeam's L2 prefetch length (pf0: none), team size (tB: B blocks
// per team, parts partly re-read when they do not fit; tBxT: blocks of T
// threads), gnWarp's slices per team and blocks per SM (rRbB), and the
// as-generated kernel with cache hints (gen, stcs, ldcs, cs) or unsigned
// index arithmetic (uidx). Each variant is checked against the family's
// first variant on random input (bit for bit, except team sizes, which sum
// in another order: ~5e-7) and timed (CUDA events, median of 9) beside a
// device-to-device copy of the same bytes.
#include "gen_pf.cuh"
#include "proto_util.cuh"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <vector>

struct Family {
  const char *name;
  std::vector<GenVariant> variants;
  i64 n;           // elements of x and of the output
  int channels;    // gamma, beta (and bias) length
  int grid, block; // launch (grid 0: each variant's own, from the table)
  int smem;        // dynamic shared bytes (team kernels)
  bool team, bias; // workspace args; a bias argument after x
};

int main(int argc, char **argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const int reps = argc > 1 ? std::atoi(argv[1]) : 3;
#define VARIANTS(t) std::vector<GenVariant>(std::begin(t), std::end(t))
  std::vector<Family> fams = {
      {"L1_35 gnTeam", VARIANTS(l1_35_variants), 112ll * 64 * 512 * 512, 64,
       264, 512, 23832 * 4, true, false},
      {"L2_19 gnTeam (gelu)", VARIANTS(l2_19_variants), 128ll * 64 * 258 * 258,
       64, 260, 512, 26628 * 4, true, false},
      {"L2_37 gnWarp (swish, bias)", VARIANTS(l2_37_variants), 32768ll * 4096,
       4096, 0, 256, 0, false, true},
      {"L2_62 gnWarp (leaky, x+x)", VARIANTS(l2_62_variants), 1024ll * 8192,
       8192, 0, 256, 0, false, false},
  };
  Timer tm;
  double *sums;
  unsigned *counters;
  CK(cudaMalloc(&sums, 1 << 16));
  CK(cudaMalloc(&counters, 1 << 16));
  CK(cudaMemset(sums, 0, 1 << 16));
  CK(cudaMemset(counters, 0, 1 << 16));
  for (auto &f : fams) {
    if (argc > 2 && !std::strstr(f.name, argv[2]))
      continue;
    float *x, *o, *ref, *g, *b, *bias;
    CK(cudaMalloc(&x, f.n * 4));
    CK(cudaMalloc(&o, f.n * 4));
    CK(cudaMalloc(&ref, f.n * 4));
    CK(cudaMalloc(&g, f.channels * 4));
    CK(cudaMalloc(&b, f.channels * 4));
    CK(cudaMalloc(&bias, f.channels * 4));
    fillRandom<<<4096, 256>>>(x, f.n, 1, -0.5f);
    fillRandom<<<64, 256>>>(g, f.channels, 2, 0.5f);
    fillRandom<<<64, 256>>>(b, f.channels, 3, -0.5f);
    fillRandom<<<64, 256>>>(bias, f.channels, 4, -0.5f);
    CK(cudaDeviceSynchronize());
    auto launch = [&](const GenVariant &v, float *out) {
      void *fn = v.fn;
      const int grid = v.grid ? v.grid : f.grid;
      const int smem = v.smem ? v.smem : f.smem;
      const int block = v.block ? v.block : f.block;
      std::vector<void *> args = {&x};
      if (f.bias)
        args.push_back(&bias);
      args.push_back(&g);
      args.push_back(&b);
      args.push_back(&out);
      if (f.team) {
        args.push_back(&sums);
        args.push_back(&counters);
        CK(cudaLaunchCooperativeKernel(fn, grid, block, args.data(), smem));
      } else {
        CK(cudaLaunchKernel(fn, grid, block, args.data(), 0, 0));
      }
    };
    for (auto &v : f.variants)
      if (v.smem || f.smem)
        CK(cudaFuncSetAttribute(v.fn,
                                cudaFuncAttributeMaxDynamicSharedMemorySize,
                                v.smem ? v.smem : f.smem));
    launch(f.variants[0], ref);
    CK(cudaDeviceSynchronize());
    for (auto &v : f.variants) {
      CK(cudaMemset(o, 0xff, f.n * 4));
      launch(v, o);
      CK(cudaDeviceSynchronize());
      std::printf("check %-28s %-10s maxdiff vs first %.3g\n", f.name, v.name,
                  diffOf(ref, o, f.n));
    }
    for (int r = 0; r < reps; ++r) {
      const double copy = tm.median(
          [&] { CK(cudaMemcpyAsync(o, x, f.n * 4, cudaMemcpyDeviceToDevice)); },
          2, 9);
      std::printf("%-28s rep %d: copy %.4f ms (%.3f TB/s r+w)\n", f.name, r,
                  copy, 2.0 * f.n * 4 / copy / 1e9);
      for (auto &v : f.variants) {
        const double ms = tm.median([&] { launch(v, o); }, 2, 9);
        std::printf("  %-10s %.4f ms  %5.1f%% of this copy, %.3f TB/s\n",
                    v.name, ms, 100 * copy / ms, 2.0 * f.n * 4 / ms / 1e9);
      }
    }
    for (float *p : {x, o, ref, g, b, bias})
      CK(cudaFree(p));
  }
  return 0;
}
