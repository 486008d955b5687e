//===- GpuExecute.cpp - Host tensors in, host tensors out, on the GPU -----===//
#include "GpuExecute.h"

#include "Execute.h"
#include "IR/Diagnostics.h"
#include "Params.h"

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
  llvm::Expected<BoundParams> bound = bindParams(spec, params, paramsName);
  if (!bound)
    return bound.takeError();
  s.warnings = std::move(bound->warnings);
  if (!s.exe->device())
    return userError("prepareGpu needs a device: compile without "
                     "CompileOptions::compileOnly");
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
