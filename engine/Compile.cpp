//===- Compile.cpp - A graph to loaded kernels ----------------------------===//
//
// Executable::compile: the pipeline (compiler/Pipeline.cpp) for the GPU's
// target, then each kernel through the kernel cache (KernelBuild.cpp) and,
// with a device, the memory plan (MemoryPlan.cpp).
//
//===----------------------------------------------------------------------===//
#include "Clock.h"
#include "Engine.h"

#include "IR/Diagnostics.h"
#include "Pipeline.h"
#include "Templates.h"

#include "llvm/ADT/STLExtras.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <future>
#include <optional>

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
  if (k.archSpecific && !llvm::StringRef(arch).endswith("a"))
    req.arch += "a"; // sm_90 -> sm_90a: wgmma
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
  po.adjustSchedule = opts.adjustSchedule;
  po.precision = opts.matmulPrecision;
  po.constantParams = opts.constantParams;
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

} // namespace kiln
