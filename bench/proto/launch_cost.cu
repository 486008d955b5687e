// Host time of one launch through the Driver API, the way Kiln launches
// (cuLaunchKernel, cuLaunchKernelEx with the cooperative attribute) against
// a CUDA graph of the same kernels (cuGraphLaunch, with and without a
// per-run pointer update). Each is timed from idle (the GPU finished the
// previous launch) and queued (behind a 1-block kernel that spins for
// 30 ms), and from idle after the GPU was busy for 0.2-18 ms. The kernel does
// nothing; its launch shape is L1_35's (264 x 512 threads, 104 KiB of dynamic
// shared memory, 6 pointers).
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90 bench/proto/launch_cost.cu
//          -L/usr/local/cuda/lib64/stubs -lcuda -o launch_cost
#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#define CU(x)                                                                  \
  do {                                                                         \
    CUresult r = (x);                                                          \
    if (r != CUDA_SUCCESS) {                                                   \
      const char *s = nullptr;                                                 \
      cuGetErrorString(r, &s);                                                 \
      std::printf("%s:%d %s\n", __FILE__, __LINE__, s ? s : "?");              \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

__global__ void nothing(float *, float *, float *, float *, double *,
                        unsigned *) {}

__global__ void spin(long long ns) {
  long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  while (t - t0 < ns);
}

static double usSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now() - t0)
      .count();
}

int main() {
  CU(cuInit(0));
  CUdevice dev;
  CU(cuDeviceGet(&dev, 0));
  // LAUNCH_COST_SCHED=spin|yield|block sets how a synchronize waits (the
  // default, auto, spins while the process has fewer contexts than cores).
  if (const char *sched = std::getenv("LAUNCH_COST_SCHED")) {
    std::string s = sched;
    unsigned flags = s == "spin"    ? CU_CTX_SCHED_SPIN
                     : s == "yield" ? CU_CTX_SCHED_YIELD
                     : s == "block" ? CU_CTX_SCHED_BLOCKING_SYNC
                                    : CU_CTX_SCHED_AUTO;
    CU(cuDevicePrimaryCtxSetFlags(dev, flags));
  }
  CUcontext ctx;
  CU(cuDevicePrimaryCtxRetain(&ctx, dev));
  CU(cuCtxSetCurrent(ctx));
  CUfunction fn, spinFn;
  cudaGetFuncBySymbol(reinterpret_cast<cudaFunction_t *>(&fn),
                      reinterpret_cast<const void *>(nothing));
  cudaGetFuncBySymbol(reinterpret_cast<cudaFunction_t *>(&spinFn),
                      reinterpret_cast<const void *>(spin));
  const unsigned grid = 264, block = 512, smem = 26628 * 4;
  CU(cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                        smem));
  CUstream st;
  CU(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
  CUdeviceptr buf;
  CU(cuMemAlloc(&buf, 1 << 20));
  CUdeviceptr p[6] = {buf,       buf + 256,  buf + 512,
                      buf + 768, buf + 1024, buf + 1280};
  void *args[6] = {&p[0], &p[1], &p[2], &p[3], &p[4], &p[5]};

  auto plain = [&] {
    CU(cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, smem, st, args, nullptr));
  };
  auto coop = [&] {
    CUlaunchAttribute a = {};
    a.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    a.value.cooperative = 1;
    CUlaunchConfig lc = {};
    lc.gridDimX = grid, lc.gridDimY = 1, lc.gridDimZ = 1;
    lc.blockDimX = block, lc.blockDimY = 1, lc.blockDimZ = 1;
    lc.sharedMemBytes = smem;
    lc.hStream = st;
    lc.attrs = &a;
    lc.numAttrs = 1;
    CU(cuLaunchKernelEx(&lc, fn, args, nullptr));
  };
  auto nodeParams = [&](void **kernelArgs) {
    CUDA_KERNEL_NODE_PARAMS kp = {};
    kp.func = fn;
    kp.gridDimX = grid, kp.gridDimY = 1, kp.gridDimZ = 1;
    kp.blockDimX = block, kp.blockDimY = 1, kp.blockDimZ = 1;
    kp.sharedMemBytes = smem;
    kp.kernelParams = kernelArgs;
    return kp;
  };
  // A graph of `nodes` kernels in a chain, the first cooperative.
  auto makeGraph = [&](int nodes, std::vector<CUgraphNode> &out) {
    CUgraph g;
    CU(cuGraphCreate(&g, 0));
    CUgraphNode prev = nullptr;
    for (int i = 0; i < nodes; ++i) {
      CUDA_KERNEL_NODE_PARAMS kp = nodeParams(args);
      CUgraphNode n;
      CU(cuGraphAddKernelNode(&n, g, prev ? &prev : nullptr, prev ? 1 : 0,
                              &kp));
      if (i == 0) {
        CUkernelNodeAttrValue v = {};
        v.cooperative = 1;
        CU(cuGraphKernelNodeSetAttribute(
            n, CU_KERNEL_NODE_ATTRIBUTE_COOPERATIVE, &v));
      }
      out.push_back(n);
      prev = n;
    }
    CUgraphExec ge;
    CU(cuGraphInstantiate(&ge, g, 0));
    return ge;
  };
  std::vector<CUgraphNode> n1, n3;
  CUgraphExec g1 = makeGraph(1, n1), g3 = makeGraph(3, n3);
  auto graph1 = [&] { CU(cuGraphLaunch(g1, st)); };
  auto graph3 = [&] { CU(cuGraphLaunch(g3, st)); };
  // A run whose pointers changed (every run alternates between two sets):
  // update the node, then launch.
  int flip = 0;
  auto graph1Update = [&] {
    flip ^= 1;
    CUdeviceptr q[6];
    for (int i = 0; i < 6; ++i)
      q[i] = p[i] + flip * 4096;
    void *qa[6] = {&q[0], &q[1], &q[2], &q[3], &q[4], &q[5]};
    CUDA_KERNEL_NODE_PARAMS kp = nodeParams(qa);
    CU(cuGraphExecKernelNodeSetParams(g1, n1[0], &kp));
    CU(cuGraphLaunch(g1, st));
  };

  const int reps = 200;
  auto measure = [&](const char *name, int kernels,
                     const std::function<void()> &launch) {
    for (int i = 0; i < 20; ++i)
      launch();
    CU(cuStreamSynchronize(st));
    std::vector<double> idle, queued;
    for (int i = 0; i < reps; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      launch();
      idle.push_back(usSince(t0));
      CU(cuStreamSynchronize(st));
    }
    long long ns = 30000000;
    void *sa[1] = {&ns};
    CU(cuLaunchKernel(spinFn, 1, 1, 1, 32, 1, 1, 0, st, sa, nullptr));
    for (int i = 0; i < reps; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      launch();
      queued.push_back(usSince(t0));
    }
    CU(cuStreamSynchronize(st));
    auto med = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    std::printf("%-32s idle %6.2f us  queued %6.2f us  (per kernel: %5.2f / "
                "%5.2f)\n",
                name, med(idle), med(queued), med(idle) / kernels,
                med(queued) / kernels);
  };
  for (int round = 0; round < 2; ++round) {
    measure("cuLaunchKernel", 1, plain);
    measure("cuLaunchKernelEx cooperative", 1, coop);
    measure("cuGraphLaunch, 1 coop node", 1, graph1);
    measure("cuGraphLaunch, 3 nodes", 3, graph3);
    measure("node update + cuGraphLaunch", 1, graph1Update);
    measure("3 launches (coop, plain, plain)", 3, [&] {
      coop();
      plain();
      plain();
    });
  }
  // From idle after the GPU was busy for a while (a 1-block spin of `ms`,
  // then a synchronize): does the next launch cost more after a longer
  // kernel, as kiln bench's from-idle figures of the longer flagships
  // suggest (L1_35 and L2_19 11-22 us in some processes, L2_62 1.5-7)?
  for (double ms : {0.0, 0.2, 1.0, 4.0, 18.0}) {
    for (auto [name, launch] : {std::pair<const char *, std::function<void()>>{
                                    "cuLaunchKernel", plain},
                                {"cuGraphLaunch, 1 coop node", graph1}}) {
      std::vector<double> us;
      for (int i = 0; i < 50; ++i) {
        long long ns = static_cast<long long>(ms * 1e6);
        void *sa[1] = {&ns};
        CU(cuLaunchKernel(spinFn, 1, 1, 1, 32, 1, 1, 0, st, sa, nullptr));
        CU(cuStreamSynchronize(st));
        auto t0 = std::chrono::steady_clock::now();
        launch();
        us.push_back(usSince(t0));
        CU(cuStreamSynchronize(st));
      }
      std::sort(us.begin(), us.end());
      std::printf("after %5.1f ms busy: %-28s median %6.2f us, p90 %6.2f us\n",
                  ms, name, us[us.size() / 2], us[us.size() * 9 / 10]);
    }
  }
  return 0;
}
