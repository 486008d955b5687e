//===- Engine.cpp - Compile a graph to GPU kernels and run it -------------===//
#include "Engine.h"
#include "Clock.h"

#include "IR/Diagnostics.h"
#include "Pipeline.h"
#include "Templates.h"

#include "llvm/ADT/STLExtras.h"

#include <fmt/format.h>

#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>

#ifndef KILN_VERSION
#define KILN_VERSION "0"
#endif

namespace kiln {

TargetInfo targetOf(const rt::DeviceTraits *device, const std::string &arch) {
  if (!device)
    return defaultTarget(arch.empty() ? "sm_90" : arch);
  TargetInfo t;
  t.arch = arch.empty() ? device->info.arch() : arch;
  t.multiprocessors = device->info.multiprocessors;
  t.maxSharedPerBlock = device->maxSharedOptin;
  t.maxSharedPerSM = device->maxSharedPerSM;
  t.maxThreadsPerSM = device->maxThreadsPerSM;
  t.l2Bytes = device->l2Bytes;
  return t;
}

std::vector<rt::SourceHeader> templateHeaders() {
  std::vector<rt::SourceHeader> hs;
  for (const EmbeddedFile &f : embeddedTemplates())
    hs.push_back({f.name, f.text});
  return hs;
}

rt::CompileRequest compileRequest(const EmittedKernel &k,
                                  const std::string &arch,
                                  llvm::ArrayRef<std::string> extraOptions) {
  rt::CompileRequest req;
  req.source = k.source;
  req.fileName = k.name + ".cu";
  req.headers = templateHeaders();
  req.arch = arch;
  // Part of the cache key like every option.
  req.options.assign(extraOptions.begin(), extraOptions.end());
  return req;
}

static bool envFlag(const char *name) {
  const char *v = std::getenv(name);
  return v && *v && std::string(v) != "0";
}

CompileOptions CompileOptions::fromEnvironment() {
  CompileOptions o;
  o.printIR = envFlag("KILN_PRINT_IR");
  o.printSource = envFlag("KILN_PRINT_SOURCE");
  if (const char *extra = std::getenv("KILN_NVRTC_OPTIONS")) {
    llvm::SmallVector<llvm::StringRef, 4> words;
    llvm::StringRef(extra).split(words, ' ', -1, /*KeepEmpty=*/false);
    for (llvm::StringRef w : words)
      o.nvrtcOptions.push_back(w.str());
  }
  return o;
}

namespace {
/// Kernel cache shared by every Executable of the process, per options. The
/// warnings stream is part of the key: a cache writes to the stream it was
/// made with, so one made for a caller's stream (since destroyed) must not
/// serve another caller.
rt::KernelCache &processCache(const rt::CacheOptions &o) {
  static std::mutex mu;
  static std::map<
      std::tuple<std::string, bool, bool, uint64_t, const llvm::raw_ostream *>,
      std::unique_ptr<rt::KernelCache>>
      caches;
  std::lock_guard<std::mutex> lock(mu);
  auto &c =
      caches[{o.directory, o.disableDisk, o.recompile, o.maxBytes, o.warnings}];
  if (!c)
    c = std::make_unique<rt::KernelCache>(o, KILN_VERSION);
  return *c;
}

} // namespace

Executable::~Executable() = default;

llvm::Expected<std::unique_ptr<Executable>>
Executable::compile(const Graph &g,
                    llvm::ArrayRef<llvm::SmallVector<int64_t, 6>> shapes,
                    const CompileOptions &opts) {
  std::unique_ptr<Executable> exe(new Executable());
  llvm::Expected<DimBindings> bindings = bindDims(g, shapes);
  if (!bindings)
    return bindings.takeError();
  std::optional<rt::DeviceTraits> traits;
  if (!opts.compileOnly) {
    llvm::Expected<rt::DeviceTraits> t = rt::Device::probe(0);
    if (!t)
      return t.takeError();
    traits = std::move(*t);
  }
  const auto afterProbe = std::chrono::steady_clock::now();
  exe->target_ = targetOf(traits ? &*traits : nullptr, opts.arch);
  if (llvm::Error e = rt::checkArch(exe->target_.arch)) {
    if (traits && opts.arch.empty())
      return userError("GPU 0 ({}) cannot run Kiln's kernels: {}",
                       traits->info.name, llvm::toString(std::move(e)));
    return userError("CompileOptions::arch: {}", llvm::toString(std::move(e)));
  }
  PipelineOptions po;
  po.target = exe->target_;
  po.printIR = opts.printIR;
  po.printSource = opts.printSource;
  llvm::Expected<CompiledGraph> cg = runPipeline(g, *bindings, po);
  if (!cg)
    return cg.takeError();
  exe->graph_ = std::move(cg->graph);
  exe->plan_ = std::move(cg->plan);
  exe->schedules_ = std::move(cg->schedules);
  exe->kernels_ = std::move(cg->kernels);
  if (opts.generateOnly)
    return exe;
  // The device's context (about 100 ms on an H200) is created on another
  // thread while the kernels compile or come from the cache.
  std::future<llvm::Expected<rt::Device *>> opening;
  if (traits)
    opening =
        std::async(std::launch::async, [] { return rt::Device::open(0); });
  if (llvm::Error e = exe->buildKernels(opts, opening))
    return e;
  if (exe->device_)
    if (llvm::Error e = exe->planMemory())
      return e;
  exe->kernelsReadyMs_ = rt::msSince(afterProbe);
  return exe;
}

size_t Executable::cachedKernels() const {
  return llvm::count_if(builds_, [](const KernelBuild &b) {
    return b.source != rt::CacheLookup::Source::Compiled;
  });
}

rt::KernelMetadata Executable::cacheMetadata(size_t i) const {
  const EmittedKernel &k = kernels_[i];
  rt::KernelMetadata meta;
  meta.kernelName = k.name;
  meta.graph = graph_->name();
  meta.group = fmt::format("{}:{}", i, plan_.groups[i].describe());
  std::string shapes;
  for (const KernelParam &p : k.params)
    if (p.value)
      shapes += fmt::format("{}{}={}", shapes.empty() ? "" : " ",
                            p.value->name(), p.value->type().str());
  meta.shapes = shapes;
  meta.launch =
      fmt::format("grid {}, block {}, smem {} B{}", k.grid, k.block,
                  k.sharedBytes, k.cooperative ? ", cooperative" : "");
  return meta;
}

llvm::Error
Executable::buildKernels(const CompileOptions &opts,
                         std::future<llvm::Expected<rt::Device *>> &opening) {
  rt::KernelCache &cache = processCache(opts.cache);
  // Each kernel is compiled (or read from the cache) by one of at most one
  // thread per hardware thread: NVRTC needs tens of MB per compile, so a
  // graph of thousands of kernels must not start them all at once.
  const size_t n = kernels_.size();
  std::vector<rt::CompileRequest> reqs;
  std::vector<rt::KernelMetadata> metas;
  for (size_t i = 0; i < n; ++i) {
    reqs.push_back(
        compileRequest(kernels_[i], target_.arch, opts.nvrtcOptions));
    metas.push_back(cacheMetadata(i));
  }
  std::vector<std::optional<llvm::Expected<rt::CacheLookup>>> results(n);
  std::atomic<size_t> next{0};
  std::mutex mu;
  size_t ready = 0;
  auto work = [&] {
    for (size_t i; (i = next++) < n;) {
      llvm::Expected<rt::CacheLookup> r = cache.getOrCompile(reqs[i], metas[i]);
      std::lock_guard<std::mutex> lock(mu);
      results[i].emplace(std::move(r));
      if (opts.onKernelReady)
        opts.onKernelReady(++ready, n);
    }
  };
  const size_t threads =
      std::min<size_t>(n, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t)
    pool.emplace_back(work);
  work();
  for (std::thread &t : pool)
    t.join();
  llvm::Error err = llvm::Error::success();
  std::vector<std::shared_ptr<const std::vector<char>>> cubins;
  for (std::optional<llvm::Expected<rt::CacheLookup>> &slot : results) {
    llvm::Expected<rt::CacheLookup> &r = *slot;
    if (!r) {
      err = llvm::joinErrors(std::move(err), r.takeError());
      builds_.emplace_back();
      cubins.emplace_back();
      continue;
    }
    builds_.push_back({r->key, r->source, r->compileMs, r->log, r->stored});
    cubins.push_back(r->cubin);
  }
  if (opening.valid()) {
    const auto waitStart = std::chrono::steady_clock::now();
    llvm::Expected<rt::Device *> dev = opening.get();
    contextWaitMs_ = rt::msSince(waitStart);
    if (!dev)
      return llvm::joinErrors(std::move(err), dev.takeError());
    // Opened on another thread: make its context current on this one.
    if (llvm::Error e = (*dev)->makeCurrent())
      return llvm::joinErrors(std::move(err), std::move(e));
    device_ = *dev;
  }
  if (err || !device_)
    return err;
  for (size_t i = 0; i < kernels_.size(); ++i) {
    const EmittedKernel &k = kernels_[i];
    llvm::Expected<rt::Module> m = device_->loadModule(*cubins[i]);
    if (!m)
      return m.takeError();
    auto mod = std::make_shared<rt::Module>(std::move(*m));
    llvm::Expected<void *> f = mod->function(k.name);
    if (!f)
      return f.takeError();
    if (k.sharedBytes > 48 * 1024)
      if (llvm::Error e = device_->setMaxDynamicShared(*f, k.sharedBytes))
        return e;
    if (k.cooperative) {
      llvm::Expected<int> per =
          device_->maxActiveBlocksPerSM(*f, k.block, k.sharedBytes);
      if (!per)
        return per.takeError();
      int64_t fit = int64_t(*per) * device_->info().multiprocessors;
      if (fit < k.grid)
        return userError("kernel {} needs {} blocks resident at once, but "
                         "the GPU holds {} of them; this is a Kiln "
                         "scheduling bug, please report it",
                         k.name, k.grid, fit);
    }
    modules_.push_back(std::move(mod));
    functions_.push_back(*f);
  }
  return llvm::Error::success();
}

/// Assigns every intermediate (a kernel output that is not a graph output)
/// a slot, reusing slots whose values are dead, and allocates the slots.
llvm::Error Executable::planMemory() {
  const Graph &g = *graph_;
  std::vector<int> lastUse(g.values().size(), -1);
  std::vector<bool> isOut(g.values().size(), false);
  for (const Value *v : g.outputs())
    isOut[v->id()] = true;
  for (size_t gi = 0; gi < plan_.groups.size(); ++gi)
    for (const Value *v : plan_.groups[gi].inputs)
      lastUse[v->id()] = static_cast<int>(gi);
  slotOf_.assign(g.values().size(), -1);
  std::vector<bool> slotFree;
  for (size_t gi = 0; gi < plan_.groups.size(); ++gi) {
    for (const Value *v : plan_.groups[gi].outputs) {
      if (isOut[v->id()])
        continue;
      uint64_t bytes = static_cast<uint64_t>(v->shape().numElements()) *
                       dtypeSize(v->dtype());
      int best = -1;
      for (size_t s = 0; s < slotBytes_.size(); ++s)
        if (slotFree[s] && slotBytes_[s] >= bytes &&
            (best < 0 || slotBytes_[s] < slotBytes_[best]))
          best = static_cast<int>(s);
      if (best < 0) {
        for (size_t s = 0; s < slotBytes_.size(); ++s)
          if (slotFree[s] && (best < 0 || slotBytes_[s] > slotBytes_[best]))
            best = static_cast<int>(s);
        if (best >= 0)
          slotBytes_[best] = bytes; // grow the largest free slot
      }
      if (best < 0) {
        best = static_cast<int>(slotBytes_.size());
        slotBytes_.push_back(bytes);
        slotFree.push_back(false);
      }
      slotFree[best] = false;
      slotOf_[v->id()] = best;
    }
    for (const Value *v : plan_.groups[gi].inputs)
      if (lastUse[v->id()] == static_cast<int>(gi) && slotOf_[v->id()] >= 0)
        slotFree[slotOf_[v->id()]] = true;
  }
  for (uint64_t bytes : slotBytes_) {
    llvm::Expected<rt::Buffer> b = device_->alloc(std::max<uint64_t>(bytes, 4));
    if (!b)
      return b.takeError();
    planBytes_ += bytes;
    slots_.push_back(std::move(*b));
  }
  bool zeroed = false;
  for (const EmittedKernel &k : kernels_) {
    std::vector<rt::Buffer> ws;
    for (const KernelParam &p : k.params) {
      if (p.kind != KernelParam::Kind::Workspace)
        continue;
      llvm::Expected<rt::Buffer> b = device_->alloc(p.bytes);
      if (!b)
        return b.takeError();
      // Zeroed once here; the kernel restores the zeros before it ends, so
      // launches need no memset (one driver call fewer on the hot path).
      if (p.zeroed) {
        if (llvm::Error e = device_->fill32(b->ptr(), 0, p.bytes / 4, nullptr))
          return e;
        zeroed = true;
      }
      ws.push_back(std::move(*b));
    }
    workspaces_.push_back(std::move(ws));
  }
  // The zeros must land before a launch on any stream.
  return zeroed ? device_->synchronize() : llvm::Error::success();
}

llvm::Error Executable::run(llvm::ArrayRef<rt::DevicePtr> inputs,
                            llvm::ArrayRef<rt::DevicePtr> params,
                            llvm::ArrayRef<rt::DevicePtr> outputs,
                            rt::StreamHandle stream, RunTrace *trace) {
  const Graph &g = *graph_;
  if (!device_)
    return userError("this executable was compiled without a GPU "
                     "(compile only); it cannot run");
  if (inputs.size() != g.inputs().size() ||
      params.size() != g.params().size() ||
      outputs.size() != g.outputs().size())
    return userError("run() needs {} input, {} parameter and {} output "
                     "pointers; got {}, {} and {}",
                     g.inputs().size(), g.params().size(), g.outputs().size(),
                     inputs.size(), params.size(), outputs.size());
  std::vector<rt::DevicePtr> ptr(g.values().size(), 0);
  auto bindAll = [&](llvm::ArrayRef<Value *> vs,
                     llvm::ArrayRef<rt::DevicePtr> ps,
                     const char *what) -> llvm::Error {
    for (size_t i = 0; i < vs.size(); ++i) {
      if (ps[i] == 0 && vs[i]->shape().numElements() != 0)
        return userError("{} '{}' is a null device pointer", what,
                         vs[i]->name());
      if (ps[i] % 16 != 0)
        return userError("{} '{}' is at device address {:#x}, which is not "
                         "16-byte aligned; Kiln's kernels use 16-byte loads",
                         what, vs[i]->name(), ps[i]);
      ptr[vs[i]->id()] = ps[i];
    }
    return llvm::Error::success();
  };
  if (llvm::Error e = bindAll(g.inputs(), inputs, "input"))
    return e;
  if (llvm::Error e = bindAll(g.params(), params, "parameter"))
    return e;
  for (size_t v = 0; v < slotOf_.size(); ++v)
    if (slotOf_[v] >= 0)
      ptr[v] = slots_[slotOf_[v]].ptr();
  // Graph outputs, written in place; an output that is an input or a
  // parameter is copied.
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Value *v = g.outputs()[i];
    if (outputs[i] == 0 && v->shape().numElements() != 0)
      return userError("output '{}' is a null device pointer", v->name());
    if (outputs[i] % 16 != 0)
      return userError("output '{}' is not 16-byte aligned", v->name());
    if (!v->isResult()) {
      if (llvm::Error e = device_->copyDeviceToDevice(
              outputs[i], ptr[v->id()],
              v->shape().numElements() * dtypeSize(v->dtype()), stream))
        return e;
      continue;
    }
    ptr[v->id()] = outputs[i];
  }
  // Every kernel's arguments: kernel ki's are args[begin[ki], begin[ki+1]).
  llvm::SmallVector<rt::DevicePtr, 32> args;
  llvm::SmallVector<size_t, 8> begin;
  for (size_t ki = 0; ki < kernels_.size(); ++ki) {
    begin.push_back(args.size());
    size_t w = 0;
    for (const KernelParam &p : kernels_[ki].params)
      args.push_back(p.kind == KernelParam::Kind::Tensor
                         ? ptr[p.value->id()]
                         : workspaces_[ki][w++].ptr());
  }
  begin.push_back(args.size());
  if (!trace && graphLaunches_) {
    std::lock_guard<std::mutex> lock(graphMutex_);
    if (!graphFailure_.empty())
      return launchDirect(args, begin, stream, nullptr);
    return launchGraph(args, begin, stream);
  }
  if (trace) {
    trace->events.clear();
    for (size_t i = 0; i <= kernels_.size(); ++i) {
      llvm::Expected<rt::Event> ev = device_->createEvent();
      if (!ev)
        return ev.takeError();
      trace->events.push_back(std::move(*ev));
    }
  }
  return launchDirect(args, begin, stream, trace);
}

static rt::LaunchConfig launchConfig(const EmittedKernel &k) {
  rt::LaunchConfig cfg;
  cfg.grid[0] = k.grid;
  cfg.grid[1] = k.gridY;
  cfg.block[0] = k.block;
  cfg.sharedBytes = k.sharedBytes;
  cfg.cooperative = k.cooperative;
  return cfg;
}

/// The driver's kernelParams for args[from, to): a pointer to each value.
static llvm::SmallVector<void *, 8> kernelParams(rt::DevicePtr *args,
                                                 size_t from, size_t to) {
  llvm::SmallVector<void *, 8> argv;
  for (size_t i = from; i < to; ++i)
    argv.push_back(&args[i]);
  return argv;
}

llvm::Error Executable::launchDirect(llvm::MutableArrayRef<rt::DevicePtr> args,
                                     llvm::ArrayRef<size_t> begin,
                                     rt::StreamHandle stream, RunTrace *trace) {
  for (size_t ki = 0; ki < kernels_.size(); ++ki) {
    const EmittedKernel &k = kernels_[ki];
    llvm::SmallVector<void *, 8> argv =
        kernelParams(args.data(), begin[ki], begin[ki + 1]);
    if (trace)
      if (llvm::Error e = trace->events[ki].record(stream))
        return e;
    if (llvm::Error e = device_->launch(functions_[ki], launchConfig(k),
                                        argv.data(), stream))
      return llvm::joinErrors(userError("launching kernel {} failed:", k.name),
                              std::move(e));
  }
  if (trace)
    if (llvm::Error e = trace->events.back().record(stream))
      return e;
  return llvm::Error::success();
}

llvm::Error Executable::launchGraph(llvm::MutableArrayRef<rt::DevicePtr> args,
                                    llvm::ArrayRef<size_t> begin,
                                    rt::StreamHandle stream) {
  if (kernels_.empty())
    return llvm::Error::success();
  if (!launchGraph_) {
    // Recorded on the first run; a graph the driver refuses (e.g. a
    // cooperative grid that cannot fit) leaves launches direct, where the
    // error, if it is one, says what does not fit.
    graphArgs_.assign(args.begin(), args.end());
    // Every argument list first, then pointers into them: a SmallVector
    // keeps up to 8 arguments inline, so growing `argvs` moves them and
    // would leave a pointer taken earlier dangling (memcheck caught it).
    std::vector<llvm::SmallVector<void *, 8>> argvs;
    for (size_t ki = 0; ki < kernels_.size(); ++ki)
      argvs.push_back(
          kernelParams(graphArgs_.data(), begin[ki], begin[ki + 1]));
    std::vector<rt::GraphLaunch> launches;
    for (size_t ki = 0; ki < kernels_.size(); ++ki)
      launches.push_back(
          {functions_[ki], launchConfig(kernels_[ki]), argvs[ki].data()});
    llvm::Expected<rt::LaunchGraph> g = device_->recordGraph(launches);
    if (!g) {
      graphFailure_ = llvm::toString(g.takeError());
      return launchDirect(args, begin, stream, nullptr);
    }
    launchGraph_ = std::move(*g);
  } else {
    // A kernel whose buffers changed since the last run gets its new
    // arguments; the others keep theirs.
    for (size_t ki = 0; ki < kernels_.size(); ++ki) {
      auto now = args.slice(begin[ki], begin[ki + 1] - begin[ki]);
      if (std::equal(now.begin(), now.end(), graphArgs_.begin() + begin[ki]))
        continue;
      std::copy(now.begin(), now.end(), graphArgs_.begin() + begin[ki]);
      llvm::SmallVector<void *, 8> argv =
          kernelParams(graphArgs_.data(), begin[ki], begin[ki + 1]);
      if (llvm::Error e = launchGraph_.setArgs(ki, argv.data()))
        return llvm::joinErrors(
            userError("updating kernel {}'s arguments failed:",
                      kernels_[ki].name),
            std::move(e));
    }
  }
  if (llvm::Error e = launchGraph_.launch(stream))
    return llvm::joinErrors(
        userError("launching the graph of {} kernel(s) failed:",
                  kernels_.size()),
        std::move(e));
  return llvm::Error::success();
}

std::string Executable::launchMode() const {
  std::lock_guard<std::mutex> lock(graphMutex_);
  if (!graphLaunches_)
    return "direct (one driver call per kernel)";
  if (!graphFailure_.empty())
    return "direct: the driver refused the CUDA graph (" + graphFailure_ + ")";
  return fmt::format("CUDA graph ({} kernel(s), one driver call per run)",
                     kernels_.size());
}

} // namespace kiln
