//===- Launch.cpp - Running an Executable: a CUDA graph, or kernel by kernel //
#include "Engine.h"

#include "IR/Diagnostics.h"

#include "llvm/ADT/STLExtras.h"

#include <fmt/format.h>

#include <mutex>

namespace kiln {

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
  // Kernels that keep what they derive from the parameters across runs
  // (CompileOptions::constantParams) redo it when the parameters changed:
  // their flags are set before this run's launches, on the same stream.
  {
    std::lock_guard<std::mutex> lock(graphMutex_);
    if (paramsDirty_ || !llvm::equal(params, lastParams_)) {
      for (size_t ki = 0; ki < kernels_.size(); ++ki) {
        size_t w = 0;
        for (const KernelParam &p : kernels_[ki].params) {
          if (p.kind != KernelParam::Kind::Workspace)
            continue;
          const rt::Buffer &b = workspaces_[ki][w++];
          if (!p.setOnNewParams)
            continue;
          if (llvm::Error e = device_->fill32(b.ptr(), 1, 1, stream))
            return e;
        }
      }
      lastParams_.assign(params.begin(), params.end());
      paramsDirty_ = false;
    }
  }
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
