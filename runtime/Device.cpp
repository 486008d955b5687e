#include "Device.h"
#include "Clock.h"
#include "DriverApi.h"

#include "llvm/ADT/STLExtras.h"

#include <fmt/format.h>

#include <cassert>
#include <chrono>
#include <map>
#include <mutex>
#include <utility>

namespace kiln::rt {

namespace {

/// The loaded driver. Only objects made through a Device (which exists only
/// once the driver loaded) call this.
const DriverApi &drv() {
  static const DriverApi *api = []() -> const DriverApi * {
    llvm::Expected<const DriverApi &> loaded = driverApi();
    if (!loaded) {
      llvm::consumeError(loaded.takeError());
      return nullptr;
    }
    return &*loaded;
  }();
  assert(api && "a Device exists only once the driver is loaded");
  return *api;
}

llvm::Error check(CUresult r, llvm::StringRef call,
                  llvm::StringRef detail = "") {
  return checkDriver(drv(), r, call, detail);
}

CUstream cu(StreamHandle s) { return static_cast<CUstream>(s); }
CUfunction cuFn(void *f) { return static_cast<CUfunction>(f); }

std::string bytesText(size_t bytes) {
  if (bytes < 1024)
    return fmt::format("{} B", bytes);
  if (bytes < (1u << 20))
    return fmt::format("{:.2f} KiB", bytes / 1024.0);
  if (bytes < (1u << 30))
    return fmt::format("{:.2f} MiB", bytes / double(1u << 20));
  return fmt::format("{:.2f} GiB", bytes / double(1u << 30));
}

std::string launchShapeText(const LaunchConfig &cfg) {
  const unsigned *g = cfg.grid, *b = cfg.block;
  return fmt::format("grid ({}, {}, {}), block ({}, {}, {}), {} dynamic shared",
                     g[0], g[1], g[2], b[0], b[1], b[2],
                     bytesText(cfg.sharedBytes));
}

CUDA_KERNEL_NODE_PARAMS nodeParams(void *function, const LaunchConfig &cfg,
                                   void **args) {
  CUDA_KERNEL_NODE_PARAMS p = {};
  p.func = cuFn(function);
  p.gridDimX = cfg.grid[0], p.gridDimY = cfg.grid[1], p.gridDimZ = cfg.grid[2];
  p.blockDimX = cfg.block[0], p.blockDimY = cfg.block[1];
  p.blockDimZ = cfg.block[2];
  p.sharedMemBytes = cfg.sharedBytes;
  p.kernelParams = args;
  return p;
}

/// With the legacy default stream (nullptr) Device's copies and fills finish
/// before they return; on a stream of the caller's they are only ordered.
llvm::Error finishIfDefault(StreamHandle stream, llvm::StringRef call) {
  if (stream)
    return llvm::Error::success();
  return check(drv().cuStreamSynchronize(nullptr), call,
               "waiting for the default stream");
}

} // namespace

// --- Buffer, Module, Event: move-only owners of one driver handle -----------

Buffer::Buffer(Buffer &&o) noexcept
    : ptr_(std::exchange(o.ptr_, 0)), size_(std::exchange(o.size_, 0)) {}

Buffer &Buffer::operator=(Buffer &&o) noexcept {
  std::swap(ptr_, o.ptr_);
  std::swap(size_, o.size_);
  return *this;
}

Buffer::~Buffer() {
  if (ptr_)
    drv().cuMemFree(ptr_);
}

Module::Module(Module &&o) noexcept : mod_(std::exchange(o.mod_, nullptr)) {}

Module &Module::operator=(Module &&o) noexcept {
  std::swap(mod_, o.mod_);
  return *this;
}

Module::~Module() {
  if (mod_)
    drv().cuModuleUnload(static_cast<CUmodule>(mod_));
}

llvm::Expected<void *> Module::function(const std::string &name) const {
  CUfunction f = nullptr;
  if (llvm::Error e = check(drv().cuModuleGetFunction(
                                &f, static_cast<CUmodule>(mod_), name.c_str()),
                            "cuModuleGetFunction", "kernel " + name))
    return e;
  return f;
}

Event::Event(Event &&o) noexcept : ev_(std::exchange(o.ev_, nullptr)) {}

Event &Event::operator=(Event &&o) noexcept {
  std::swap(ev_, o.ev_);
  return *this;
}

Event::~Event() {
  if (ev_)
    drv().cuEventDestroy(static_cast<CUevent>(ev_));
}

llvm::Error Event::record(StreamHandle stream) {
  return check(drv().cuEventRecord(static_cast<CUevent>(ev_), cu(stream)),
               "cuEventRecord");
}

llvm::Expected<float> Event::elapsedSince(const Event &start) const {
  // Waiting for this (the later) event makes "both have completed" true.
  if (llvm::Error e = check(drv().cuEventSynchronize(static_cast<CUevent>(ev_)),
                            "cuEventSynchronize"))
    return e;
  float ms = 0;
  if (llvm::Error e =
          check(drv().cuEventElapsedTime(&ms, static_cast<CUevent>(start.ev_),
                                         static_cast<CUevent>(ev_)),
                "cuEventElapsedTime"))
    return e;
  return ms;
}

// --- LaunchGraph -----------------------------------------------------------

LaunchGraph::LaunchGraph(LaunchGraph &&o) noexcept
    : graph_(std::exchange(o.graph_, nullptr)),
      exec_(std::exchange(o.exec_, nullptr)), nodes_(std::move(o.nodes_)),
      launches_(std::move(o.launches_)) {}

LaunchGraph &LaunchGraph::operator=(LaunchGraph &&o) noexcept {
  std::swap(graph_, o.graph_);
  std::swap(exec_, o.exec_);
  std::swap(nodes_, o.nodes_);
  std::swap(launches_, o.launches_);
  return *this;
}

LaunchGraph::~LaunchGraph() {
  // The executable graph refers to the graph's nodes: it goes first.
  if (exec_)
    drv().cuGraphExecDestroy(static_cast<CUgraphExec>(exec_));
  if (graph_)
    drv().cuGraphDestroy(static_cast<CUgraph>(graph_));
}

llvm::Error LaunchGraph::setArgs(size_t i, void **args) {
  assert(i < launches_.size() && "no such launch in the graph");
  const auto &[function, cfg] = launches_[i];
  CUDA_KERNEL_NODE_PARAMS p = nodeParams(function, cfg, args);
  return check(drv().cuGraphExecKernelNodeSetParams(
                   static_cast<CUgraphExec>(exec_),
                   static_cast<CUgraphNode>(nodes_[i]), &p),
               "cuGraphExecKernelNodeSetParams", launchShapeText(cfg));
}

llvm::Error LaunchGraph::launch(StreamHandle stream) {
  return check(drv().cuGraphLaunch(static_cast<CUgraphExec>(exec_), cu(stream)),
               "cuGraphLaunch", fmt::format("{} kernel(s)", launches_.size()));
}

// --- Device -----------------------------------------------------------------

llvm::Expected<DeviceTraits> Device::probe(int ordinal) {
  llvm::Expected<DriverInfo> probe = probeDevices(); // loads, cuInit
  if (!probe)
    return probe.takeError();
  auto it = llvm::find_if(probe->devices, [&](const DeviceInfo &d) {
    return d.ordinal == ordinal;
  });
  if (it == probe->devices.end())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "no GPU %d: the driver reports %zu usable device(s)", ordinal,
        probe->devices.size());
  DeviceTraits t;
  t.info = *it;
  const DriverApi &api = drv();
  CUdevice dev = 0;
  if (llvm::Error e = check(api.cuDeviceGet(&dev, ordinal), "cuDeviceGet"))
    return e;
  std::pair<int *, CUdevice_attribute> attrs[] = {
      {&t.l2Bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE},
      {&t.maxSharedOptin,
       CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN},
      {&t.maxSharedPerSM,
       CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR},
      {&t.maxThreadsPerSM, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR}};
  for (auto [out, attr] : attrs)
    if (llvm::Error e = check(api.cuDeviceGetAttribute(out, attr, dev),
                              "cuDeviceGetAttribute"))
      return e;
  return t;
}

llvm::Expected<Device *> Device::open(int ordinal) {
  static std::mutex mu;
  static std::map<int, std::unique_ptr<Device>> opened;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = opened.find(ordinal); it != opened.end()) {
    if (llvm::Error e = it->second->makeCurrent())
      return e;
    return it->second.get();
  }

  const auto start = std::chrono::steady_clock::now();
  llvm::Expected<DeviceTraits> traits = probe(ordinal);
  if (!traits)
    return traits.takeError();
  std::unique_ptr<Device> d(new Device());
  d->traits_ = std::move(*traits);
  const DriverApi &api = drv();
  CUdevice dev = 0;
  if (llvm::Error e = check(api.cuDeviceGet(&dev, ordinal), "cuDeviceGet"))
    return e;
  d->dev_ = dev;
  CUcontext ctx = nullptr;
  if (llvm::Error e =
          check(api.cuDevicePrimaryCtxRetain(&ctx, dev),
                "cuDevicePrimaryCtxRetain", fmt::format("GPU {}", ordinal)))
    return e;
  d->ctx_ = ctx;
  if (llvm::Error e = d->makeCurrent())
    return e;
  d->openMs_ = msSince(start);
  return opened.emplace(ordinal, std::move(d)).first->second.get();
}

llvm::Error Device::makeCurrent() const {
  return check(drv().cuCtxSetCurrent(static_cast<CUcontext>(ctx_)),
               "cuCtxSetCurrent");
}

llvm::Expected<Buffer> Device::alloc(size_t bytes) {
  Buffer b;
  CUdeviceptr p = 0;
  if (llvm::Error e = check(drv().cuMemAlloc(&p, bytes), "cuMemAlloc",
                            "asked for " + bytesText(bytes)))
    return e;
  b.ptr_ = p;
  b.size_ = bytes;
  return b;
}

llvm::Error Device::copyToDevice(DevicePtr dst, const void *src, size_t bytes,
                                 StreamHandle stream) {
  if (bytes == 0)
    return llvm::Error::success();
  if (llvm::Error e =
          check(drv().cuMemcpyHtoDAsync(dst, src, bytes, cu(stream)),
                "cuMemcpyHtoDAsync", bytesText(bytes)))
    return e;
  return finishIfDefault(stream, "cuMemcpyHtoDAsync");
}

llvm::Error Device::copyToHost(void *dst, DevicePtr src, size_t bytes,
                               StreamHandle stream) {
  if (bytes == 0)
    return llvm::Error::success();
  if (llvm::Error e =
          check(drv().cuMemcpyDtoHAsync(dst, src, bytes, cu(stream)),
                "cuMemcpyDtoHAsync", bytesText(bytes)))
    return e;
  return finishIfDefault(stream, "cuMemcpyDtoHAsync");
}

llvm::Error Device::copyDeviceToDevice(DevicePtr dst, DevicePtr src,
                                       size_t bytes, StreamHandle stream) {
  if (bytes == 0)
    return llvm::Error::success();
  if (llvm::Error e =
          check(drv().cuMemcpyDtoDAsync(dst, src, bytes, cu(stream)),
                "cuMemcpyDtoDAsync", bytesText(bytes)))
    return e;
  return finishIfDefault(stream, "cuMemcpyDtoDAsync");
}

llvm::Error Device::fill32(DevicePtr dst, uint32_t value, size_t count,
                           StreamHandle stream) {
  if (count == 0)
    return llvm::Error::success();
  if (CUresult r = drv().cuMemsetD32Async(dst, value, count, cu(stream));
      r != CUDA_SUCCESS)
    return check(r, "cuMemsetD32Async", fmt::format("{} words", count));
  // Asynchronous even on the default stream: work queued after it on the
  // same stream is ordered behind it, and the host has nothing to wait for.
  return llvm::Error::success();
}

llvm::Error Device::synchronize(StreamHandle stream) {
  return check(drv().cuStreamSynchronize(cu(stream)), "cuStreamSynchronize");
}

llvm::Expected<StreamHandle> Device::createStream() {
  CUstream s = nullptr;
  if (llvm::Error e = check(drv().cuStreamCreate(&s, CU_STREAM_NON_BLOCKING),
                            "cuStreamCreate"))
    return e;
  return static_cast<StreamHandle>(s);
}

void Device::destroyStream(StreamHandle stream) {
  if (stream)
    drv().cuStreamDestroy(cu(stream));
}

llvm::Expected<Event> Device::createEvent() {
  CUevent ev = nullptr;
  if (llvm::Error e =
          check(drv().cuEventCreate(&ev, CU_EVENT_DEFAULT), "cuEventCreate"))
    return e;
  Event out;
  out.ev_ = ev;
  return out;
}

llvm::Expected<Module> Device::loadModule(llvm::ArrayRef<char> cubin) {
  CUmodule mod = nullptr;
  if (llvm::Error e =
          check(drv().cuModuleLoadData(&mod, cubin.data()), "cuModuleLoadData",
                fmt::format("{}-byte cubin on {} ({})", cubin.size(),
                            traits_.info.name, traits_.info.arch())))
    return e;
  Module m;
  m.mod_ = mod;
  return m;
}

llvm::Expected<FunctionAttributes> Device::attributes(void *function) const {
  FunctionAttributes a;
  std::pair<int *, CUfunction_attribute> attrs[] = {
      {&a.numRegs, CU_FUNC_ATTRIBUTE_NUM_REGS},
      {&a.staticSharedBytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES},
      {&a.localBytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES},
      {&a.maxThreadsPerBlock, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK}};
  for (auto [out, attr] : attrs)
    if (llvm::Error e =
            check(drv().cuFuncGetAttribute(out, attr, cuFn(function)),
                  "cuFuncGetAttribute"))
      return e;
  return a;
}

llvm::Error Device::setMaxDynamicShared(void *function, int bytes) {
  const CUresult r = drv().cuFuncSetAttribute(
      cuFn(function), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
  if (r == CUDA_SUCCESS)
    return llvm::Error::success();
  // The limit holds the kernel's own __shared__ variables too: say how much.
  int staticBytes = 0;
  (void)drv().cuFuncGetAttribute(
      &staticBytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, cuFn(function));
  return check(r, "cuFuncSetAttribute",
               fmt::format("max dynamic shared memory {} beside the "
                           "kernel's static {}; the device allows {} per "
                           "block in all",
                           bytesText(bytes), bytesText(staticBytes),
                           bytesText(traits_.maxSharedOptin)));
}

llvm::Expected<int> Device::maxActiveBlocksPerSM(void *function,
                                                 int blockThreads,
                                                 size_t sharedBytes) const {
  int blocks = 0;
  if (llvm::Error e =
          check(drv().cuOccupancyMaxActiveBlocksPerMultiprocessor(
                    &blocks, cuFn(function), blockThreads, sharedBytes),
                "cuOccupancyMaxActiveBlocksPerMultiprocessor"))
    return e;
  return blocks;
}

llvm::Error Device::launch(void *function, const LaunchConfig &cfg, void **args,
                           StreamHandle stream) {
  // The hot path makes one driver call; messages are built only on failure.
  const unsigned *g = cfg.grid, *b = cfg.block;
  CUresult r;
  if (cfg.cooperative) {
    // cuLaunchKernelEx with the cooperative attribute: the same guarantee
    // as cuLaunchCooperativeKernel, in less host time.
    CUlaunchAttribute attr = {};
    attr.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    attr.value.cooperative = 1;
    CUlaunchConfig lc = {};
    lc.gridDimX = g[0], lc.gridDimY = g[1], lc.gridDimZ = g[2];
    lc.blockDimX = b[0], lc.blockDimY = b[1], lc.blockDimZ = b[2];
    lc.sharedMemBytes = cfg.sharedBytes;
    lc.hStream = cu(stream);
    lc.attrs = &attr;
    lc.numAttrs = 1;
    r = drv().cuLaunchKernelEx(&lc, cuFn(function), args, nullptr);
  } else {
    r = drv().cuLaunchKernel(cuFn(function), g[0], g[1], g[2], b[0], b[1], b[2],
                             cfg.sharedBytes, cu(stream), args, nullptr);
  }
  if (r == CUDA_SUCCESS)
    return llvm::Error::success();
  std::string shape = launchShapeText(cfg);
  if (cfg.cooperative && r == CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE) {
    // Say how far over the limit the grid is.
    uint64_t blocks = uint64_t(g[0]) * g[1] * g[2];
    llvm::Expected<int> perSM =
        maxActiveBlocksPerSM(function, b[0] * b[1] * b[2], cfg.sharedBytes);
    if (!perSM)
      return perSM.takeError();
    uint64_t fit = uint64_t(*perSM) * traits_.info.multiprocessors;
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "cooperative launch of %llu blocks cannot run: at most %d block(s) "
        "per SM x %d SMs = %llu fit on %s at once (%s)",
        static_cast<unsigned long long>(blocks), *perSM,
        traits_.info.multiprocessors, static_cast<unsigned long long>(fit),
        traits_.info.name.c_str(), shape.c_str());
  }
  return check(
      r, cfg.cooperative ? "cuLaunchKernelEx (cooperative)" : "cuLaunchKernel",
      shape);
}

llvm::Expected<LaunchGraph>
Device::recordGraph(llvm::ArrayRef<GraphLaunch> launches) {
  const DriverApi &api = drv();
  LaunchGraph lg;
  CUgraph graph = nullptr;
  if (llvm::Error e = check(api.cuGraphCreate(&graph, 0), "cuGraphCreate"))
    return e;
  lg.graph_ = graph;
  CUgraphNode prev = nullptr;
  for (const GraphLaunch &l : launches) {
    CUDA_KERNEL_NODE_PARAMS p = nodeParams(l.function, l.cfg, l.args);
    CUgraphNode node = nullptr;
    if (llvm::Error e =
            check(api.cuGraphAddKernelNode(&node, graph, prev ? &prev : nullptr,
                                           prev ? 1 : 0, &p),
                  "cuGraphAddKernelNode", launchShapeText(l.cfg)))
      return e;
    if (l.cfg.cooperative) {
      CUkernelNodeAttrValue v = {};
      v.cooperative = 1;
      if (llvm::Error e =
              check(api.cuGraphKernelNodeSetAttribute(
                        node, CU_KERNEL_NODE_ATTRIBUTE_COOPERATIVE, &v),
                    "cuGraphKernelNodeSetAttribute", "cooperative"))
        return e;
    }
    lg.nodes_.push_back(node);
    lg.launches_.emplace_back(l.function, l.cfg);
    prev = node;
  }
  CUgraphExec exec = nullptr;
  if (llvm::Error e =
          check(api.cuGraphInstantiate(&exec, graph, 0), "cuGraphInstantiate",
                fmt::format("{} kernel(s)", launches.size())))
    return e;
  lg.exec_ = exec;
  return lg;
}

llvm::Expected<std::pair<size_t, size_t>> Device::memoryInfo() const {
  size_t free = 0, total = 0;
  if (llvm::Error e = check(drv().cuMemGetInfo(&free, &total), "cuMemGetInfo"))
    return e;
  return std::make_pair(free, total);
}

} // namespace kiln::rt
