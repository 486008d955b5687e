//===- Engine.h - Compile a graph to GPU kernels and run it ----*- C++ -*-===//
//
// The C++ API of Kiln's GPU path:
//
//   auto exe = Executable::compile(graph, {{1024, 8192}}, CompileOptions{});
//   exe->run(inputPtrs, paramPtrs, outputPtrs, stream);   // device pointers
//
// compile() specialises the graph for the input shapes, partitions it into
// fusion groups, generates one kernel per group for the target, compiles
// each through the kernel cache (memory, then disk, then NVRTC) and loads
// them. run() launches the kernels in order on caller-provided buffers
// (16-byte aligned), with intermediates in buffers of Kiln's memory planner:
// a value lives from the kernel that writes it to the last that reads it,
// and buffers are reused after that, so values that fusion removed are never
// allocated.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FRONTEND_ENGINE_H
#define KILN_FRONTEND_ENGINE_H

#include "codegen/Kernel.h"
#include "fusion/Partition.h"
#include "schedule/Precision.h"
#include "schedule/Schedule.h"

#include "Device.h"
#include "KernelCache.h"

#include "llvm/ADT/SmallVector.h"

#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kiln {

struct CompileOptions {
  /// Target arch ("sm_90"); empty means the GPU's own.
  std::string arch;
  /// Generate and compile only; no GPU is needed (kiln compile).
  bool compileOnly = false;
  /// Stop after code generation: no NVRTC, no cache, no device context
  /// (kiln plan; without compileOnly the GPU's traits set the target).
  bool generateOnly = false;
  rt::CacheOptions cache = rt::cacheOptionsFromEnvironment();
  /// Print each pipeline stage's result and time, and every kernel's
  /// source, to stderr.
  bool printIR = false, printSource = false;
  /// How f32 linear and matmul are computed (schedule/Precision.h); the
  /// kernels differ, so each precision has its own cache entries.
  MatmulPrecision matmulPrecision = MatmulPrecision::Highest;
  /// The parameters' values stay the same from run to run: kernels may keep
  /// what they derive from them (3xTF32's split weights, a matmul's
  /// transposed right operand, a tensor-core convolution's blocks' images
  /// of its weight) across runs. It
  /// is derived again on the first run(), whenever run() gets other
  /// parameter pointers, and after Executable::paramsUpdated(): call that
  /// after writing new values into a parameter's buffer, or the kernels
  /// use the old ones. Off by default; `kiln run`, `bench`, `compile` and
  /// `plan` turn it on (they upload each parameter once).
  bool constantParams = false;
  /// Extra NVRTC options, for experiments; part of the cache key.
  std::vector<std::string> nvrtcOptions;
  /// PipelineOptions::adjustSchedule: change a group's schedule before it
  /// is emitted (a tuner's hook).
  std::function<void(size_t group, Schedule &)> adjustSchedule;
  /// Called as each kernel becomes ready (compiled, or found in the cache)
  /// with how many are ready of how many; from the threads that build them,
  /// one call at a time.
  std::function<void(size_t ready, size_t total)> onKernelReady;
  /// prepareGpu: refuse a graph whose tensors on the device (inputs,
  /// parameters, outputs, intermediates) take more than this many bytes;
  /// 0: as many as the device has free.
  uint64_t maxDeviceBytes = 0;

  /// The options as the environment sets them, read once at the edge (the
  /// CLI): KILN_PRINT_IR, KILN_PRINT_SOURCE, KILN_NVRTC_OPTIONS
  /// (space-separated) and the cache's variables.
  static CompileOptions fromEnvironment();
};

/// How one kernel was obtained.
struct KernelBuild {
  std::string key;
  rt::CacheLookup::Source source = rt::CacheLookup::Source::Compiled;
  double compileMs = 0;
  std::string log;     // NVRTC warnings
  bool stored = false; // compiled now and written to the disk cache
};

/// Optional per-kernel timing of a run: events[i] is recorded just before
/// kernel i, events.back() after the last.
struct RunTrace {
  std::vector<rt::Event> events;
};

class Executable {
public:
  /// One shape per graph input, in order.
  static llvm::Expected<std::unique_ptr<Executable>>
  compile(const Graph &g, llvm::ArrayRef<llvm::SmallVector<int64_t, 6>> shapes,
          const CompileOptions &opts);
  ~Executable();

  /// The graph specialised to the compiled shapes.
  const Graph &graph() const { return *graph_; }
  const FusionPlan &plan() const { return plan_; }
  /// schedules()[i] is how plan().groups[i] runs.
  const std::vector<Schedule> &schedules() const { return schedules_; }
  const std::vector<EmittedKernel> &kernels() const { return kernels_; }
  const std::vector<KernelBuild> &builds() const { return builds_; }
  const TargetInfo &target() const { return target_; }
  /// Null when compiled with compileOnly.
  rt::Device *device() const { return device_; }
  /// What the kernel cache records about kernel `i`: its name, the graph,
  /// the fusion group ("2:gn_swish_add"), shapes and launch.
  rt::KernelMetadata cacheMetadata(size_t i) const;
  /// Bytes the memory planner allocates: intermediates and the kernels'
  /// workspaces (3xTF32's split w, GroupNorm's statistics).
  uint64_t intermediateBytes() const { return planBytes_; }
  /// What compile() spent, once the driver had started (rt::driverStartMs)
  /// and the GPU's traits were read, until run() may launch: planning, code
  /// generation, compiling or loading each kernel from the cache while
  /// another thread creates the device's context (Device::openMs), then
  /// loading the modules and allocating intermediates.
  double kernelsReadyMs() const { return kernelsReadyMs_; }
  /// The part of kernelsReadyMs spent waiting for the device's context after
  /// the kernels were built: kernelsReadyMs - contextWaitMs is Kiln's own.
  double contextWaitMs() const { return contextWaitMs_; }
  /// How many kernels came from the cache (memory or disk) and how many
  /// were compiled now.
  size_t cachedKernels() const;
  size_t compiledKernels() const { return builds_.size() - cachedKernels(); }

  /// Runs the graph. One device pointer per graph input, parameter and
  /// output, in graph order. Asynchronous on `stream`; `trace`, if given,
  /// gets an event before each kernel and one after the last.
  ///
  /// The kernels are launched as one CUDA graph, recorded on the first run
  /// without a trace; a later run whose buffers differ updates the arguments
  /// of the kernels they reach. With a trace, or after setGraphLaunches
  /// (false), each kernel is launched on its own. Runs of one Executable
  /// share its intermediate buffers and workspaces: run it on one stream at
  /// a time (concurrent calls are safe but would race on the GPU).
  llvm::Error run(llvm::ArrayRef<rt::DevicePtr> inputs,
                  llvm::ArrayRef<rt::DevicePtr> params,
                  llvm::ArrayRef<rt::DevicePtr> outputs,
                  rt::StreamHandle stream = nullptr, RunTrace *trace = nullptr);

  /// The parameters' values changed in place (CompileOptions::
  /// constantParams): the next run() derives again what kernels keep from
  /// them.
  void paramsUpdated() {
    std::lock_guard<std::mutex> lock(graphMutex_);
    paramsDirty_ = true;
  }

  /// Launch as one CUDA graph (the default) or kernel by kernel.
  void setGraphLaunches(bool on) {
    std::lock_guard<std::mutex> lock(graphMutex_);
    graphLaunches_ = on;
  }
  /// How run() launches, in words (and why not as a graph, if it cannot).
  std::string launchMode() const;

private:
  Executable() = default;
  /// Compiles the kernels or takes them from the cache; then, once
  /// `opening` (when valid) has the device, loads them on it.
  llvm::Error buildKernels(const CompileOptions &opts,
                           std::future<llvm::Expected<rt::Device *>> &opening);
  llvm::Error planMemory();
  /// Kernel ki's arguments are args[begin[ki], begin[ki + 1]).
  llvm::Error launchDirect(llvm::MutableArrayRef<rt::DevicePtr> args,
                           llvm::ArrayRef<size_t> begin,
                           rt::StreamHandle stream, RunTrace *trace);
  llvm::Error launchGraph(llvm::MutableArrayRef<rt::DevicePtr> args,
                          llvm::ArrayRef<size_t> begin,
                          rt::StreamHandle stream);

  std::unique_ptr<Graph> graph_;
  FusionPlan plan_;
  std::vector<Schedule> schedules_;
  TargetInfo target_;
  std::vector<EmittedKernel> kernels_;
  std::vector<KernelBuild> builds_;
  rt::Device *device_ = nullptr;
  std::vector<std::shared_ptr<rt::Module>> modules_;
  std::vector<void *> functions_;
  /// Intermediate value id -> slot; slots are buffers reused over time.
  std::vector<int> slotOf_;
  std::vector<uint64_t> slotBytes_;
  std::vector<rt::Buffer> slots_;
  std::vector<std::vector<rt::Buffer>> workspaces_; // per kernel
  uint64_t planBytes_ = 0;
  double kernelsReadyMs_ = 0;
  double contextWaitMs_ = 0;
  /// The launches as a CUDA graph, and the arguments it holds.
  mutable std::mutex graphMutex_;
  bool graphLaunches_ = true;
  rt::LaunchGraph launchGraph_;
  std::vector<rt::DevicePtr> graphArgs_;
  std::string graphFailure_; // why the driver refused the graph
  /// The parameters of the last run(), and whether they changed in place
  /// since (paramsUpdated): flags (KernelParam::setOnNewParams) are set
  /// again when either differs.
  std::vector<rt::DevicePtr> lastParams_;
  bool paramsDirty_ = false;
};

/// The target of the GPU (when `device` is set) or defaultTarget(arch).
TargetInfo targetOf(const rt::DeviceTraits *device, const std::string &arch);

/// Every embedded template as an NVRTC header.
std::vector<rt::SourceHeader> templateHeaders();

/// The NVRTC request for a generated kernel, with `extraOptions`.
rt::CompileRequest compileRequest(const EmittedKernel &k,
                                  const std::string &arch,
                                  llvm::ArrayRef<std::string> extraOptions);

} // namespace kiln

#endif
