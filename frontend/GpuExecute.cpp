//===- GpuExecute.cpp - Host tensors in, host tensors out, on the GPU -----===//
#include "GpuExecute.h"

#include "Execute.h"
#include "IR/Diagnostics.h"
#include "Params.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <chrono>

namespace kiln {

static llvm::Expected<rt::Buffer> upload(rt::Device &dev, const HostTensor &t) {
  llvm::Expected<rt::Buffer> b = dev.alloc(std::max<size_t>(t.byteSize(), 4));
  if (!b)
    return b.takeError();
  if (t.byteSize())
    if (llvm::Error e =
            dev.copyToDevice(b->ptr(), t.bytes.data(), t.byteSize()))
      return e;
  return b;
}

namespace {

/// One tensor prepareGpu would allocate, for messages.
struct TensorNeed {
  std::string what; // "parameter 'w' f32[2, 3]"
  uint64_t bytes;
};

std::string valueText(const char *kind, const Value &v) {
  return fmt::format("{} '{}' {}", kind, v.name(), v.type().str());
}

uint64_t valueBytes(const Value &v) {
  return static_cast<uint64_t>(v.shape().numElements()) * dtypeSize(v.dtype());
}

uint64_t total(llvm::ArrayRef<TensorNeed> needs) {
  uint64_t sum = 0;
  for (const TensorNeed &n : needs)
    sum = llvm::SaturatingAdd(sum, n.bytes);
  return sum;
}

const TensorNeed &largest(llvm::ArrayRef<TensorNeed> needs) {
  return *std::max_element(needs.begin(), needs.end(),
                           [](const TensorNeed &a, const TensorNeed &b) {
                             return a.bytes < b.bytes;
                           });
}

/// Refuses, before anything is allocated for them, tensors that cannot
/// fit: on the device, the inputs, parameters and outputs (with the
/// intermediates already planned) against opts.maxDeviceBytes or the free
/// memory; on the host, the parameters made from initialisers.
llvm::Error checkMemory(const Executable &exe, const SafetensorsFile *params,
                        const CompileOptions &opts) {
  const Graph &g = exe.graph();
  std::vector<TensorNeed> device, host;
  for (const Value *v : g.inputs())
    device.push_back({valueText("input", *v), valueBytes(*v)});
  for (const Value *v : g.params()) {
    device.push_back({valueText("parameter", *v), valueBytes(*v)});
    if (!params || !params->find(v->name()))
      host.push_back(device.back());
  }
  for (const Value *v : g.outputs())
    device.push_back({valueText("output", *v), valueBytes(*v)});
  if (!host.empty() && total(host) > hostAvailableBytes())
    return userError(
        "graph '{}' needs {} of host memory to make its parameters from "
        "their initialisers, more than the {} available; the largest is {}, "
        "{}; use smaller sizes or give the parameters in a file",
        g.name(), bytesText(total(host)), bytesText(hostAvailableBytes()),
        largest(host).what, bytesText(largest(host).bytes));
  if (device.empty())
    return llvm::Error::success();
  uint64_t need = total(device), limit = opts.maxDeviceBytes;
  std::string against;
  if (limit) {
    need = llvm::SaturatingAdd(need, exe.intermediateBytes());
    against = fmt::format("the limit of {} (--max-memory)", bytesText(limit));
  } else {
    llvm::Expected<std::pair<size_t, size_t>> mem = exe.device()->memoryInfo();
    if (!mem)
      return mem.takeError();
    limit = mem->first;
    against = fmt::format("the {} free on {}", bytesText(limit),
                          exe.device()->info().name);
  }
  if (need <= limit)
    return llvm::Error::success();
  return userError("graph '{}' needs {} on the GPU for its inputs, "
                   "parameters, outputs and intermediates, more than {}; the "
                   "largest is {}, {}; use smaller sizes",
                   g.name(), bytesText(need), against, largest(device).what,
                   bytesText(largest(device).bytes));
}

} // namespace

llvm::Expected<GpuSession> prepareGpu(const Graph &g,
                                      llvm::ArrayRef<HostTensor> inputs,
                                      const SafetensorsFile *params,
                                      llvm::StringRef paramsName,
                                      const CompileOptions &opts) {
  auto shapes = checkedInputShapes(g, inputs);
  if (!shapes)
    return shapes.takeError();
  GpuSession s;
  auto t0 = std::chrono::steady_clock::now();
  llvm::Expected<std::unique_ptr<Executable>> exe =
      Executable::compile(g, *shapes, opts);
  if (!exe)
    return exe.takeError();
  s.compileSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  s.exe = std::move(*exe);
  const Graph &spec = s.exe->graph();
  if (!s.exe->device())
    return userError("prepareGpu needs a device: compile without "
                     "CompileOptions::compileOnly");
  if (llvm::Error e = checkMemory(*s.exe, params, opts))
    return e;
  llvm::Expected<BoundParams> bound = bindParams(spec, params, paramsName);
  if (!bound)
    return bound.takeError();
  s.warnings = std::move(bound->warnings);
  rt::Device &dev = *s.exe->device();
  for (const HostTensor &t : inputs) {
    auto b = upload(dev, t);
    if (!b)
      return b.takeError();
    s.inputs.push_back(std::move(*b));
  }
  for (const HostTensor &t : bound->values) {
    auto b = upload(dev, t);
    if (!b)
      return b.takeError();
    s.params.push_back(std::move(*b));
  }
  for (const Value *v : spec.outputs()) {
    // Whole 4-byte words, so that poisonOutputs covers every element.
    const size_t bytes = v->shape().numElements() * dtypeSize(v->dtype());
    auto b = dev.alloc(std::max<size_t>((bytes + 3) / 4 * 4, 4));
    if (!b)
      return b.takeError();
    s.outputs.push_back(std::move(*b));
  }
  return s;
}

static std::vector<rt::DevicePtr> ptrs(const std::vector<rt::Buffer> &bs) {
  std::vector<rt::DevicePtr> p;
  for (const rt::Buffer &b : bs)
    p.push_back(b.ptr());
  return p;
}

llvm::Error GpuSession::run(rt::StreamHandle stream, RunTrace *trace) {
  return exe->run(ptrs(inputs), ptrs(params), ptrs(outputs), stream, trace);
}

llvm::Error GpuSession::poisonOutputs() {
  const Graph &g = exe->graph();
  for (size_t i = 0; i < outputs.size(); ++i) {
    // A NaN in every element: 0x7fc0 is one in f16 and in bf16 too.
    const DType t = g.outputs()[i]->dtype();
    const uint32_t nan = dtypeSize(t) == 2 ? 0x7fc07fc0u : 0x7fc00000u;
    if (llvm::Error e =
            exe->device()->fill32(outputs[i].ptr(), nan, outputs[i].size() / 4))
      return e;
  }
  return llvm::Error::success();
}

llvm::Expected<std::vector<HostTensor>> GpuSession::runPoisoned() {
  if (llvm::Error e = poisonOutputs())
    return e;
  if (llvm::Error e = run())
    return e;
  return downloadOutputs();
}

llvm::Expected<std::vector<HostTensor>> GpuSession::downloadOutputs() {
  rt::Device &dev = *exe->device();
  if (llvm::Error e = dev.synchronize())
    return e;
  std::vector<HostTensor> out;
  const Graph &g = exe->graph();
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const Value *v = g.outputs()[i];
    HostTensor t(v->dtype(), v->shape().sizes());
    if (t.byteSize())
      if (llvm::Error e =
              dev.copyToHost(t.bytes.data(), outputs[i].ptr(), t.byteSize()))
        return e;
    out.push_back(std::move(t));
  }
  return out;
}

} // namespace kiln
