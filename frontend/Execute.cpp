#include "Execute.h"

#include "Params.h"
#include "Parser.h"
#include "Pipeline.h"
#include "Verifier.h"

#include "llvm/Support/MemoryBuffer.h"

#include <unistd.h>

namespace kiln {

uint64_t hostAvailableBytes() {
  if (auto buf = llvm::MemoryBuffer::getFileAsStream("/proc/meminfo")) {
    llvm::SmallVector<llvm::StringRef, 64> lines;
    (*buf)->getBuffer().split(lines, '\n');
    for (llvm::StringRef line : lines) {
      uint64_t kib = 0;
      if (line.consume_front("MemAvailable:") &&
          !line.trim().rtrim(" kB").getAsInteger(10, kib))
        return kib << 10;
    }
  }
  return static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) *
         static_cast<uint64_t>(sysconf(_SC_PAGE_SIZE));
}

llvm::Expected<std::unique_ptr<Graph>> loadGraph(llvm::StringRef path) {
  llvm::Expected<std::unique_ptr<Graph>> g = parseGraphFile(path);
  if (!g)
    return g.takeError();
  if (llvm::Error e = verifyGraph(**g))
    return e;
  return g;
}

llvm::Expected<std::vector<llvm::SmallVector<int64_t, 6>>>
checkedInputShapes(const Graph &g, llvm::ArrayRef<HostTensor> inputs) {
  if (inputs.size() != g.inputs().size())
    return userError("graph '{}' has {} input{} but {} tensor{} were given",
                     g.name(), g.inputs().size(),
                     g.inputs().size() == 1 ? "" : "s", inputs.size(),
                     inputs.size() == 1 ? "" : "s");
  std::vector<llvm::SmallVector<int64_t, 6>> shapes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value &in = *g.inputs()[i];
    if (inputs[i].dtype != in.dtype())
      return userError("input '{}' is {}, but the graph declares {}", in.name(),
                       dtypeName(inputs[i].dtype).str(), in.type().str());
    std::optional<uint64_t> want =
        checkedByteSize(inputs[i].dtype, inputs[i].shape);
    if (!want)
      return userError("input '{}' has the shape {}, with a negative size or "
                       "too many elements",
                       in.name(), inputs[i].typeStr());
    if (inputs[i].bytes.size() != *want)
      return userError("input '{}' holds {} bytes, but its shape {} needs {}",
                       in.name(), inputs[i].bytes.size(), inputs[i].typeStr(),
                       *want);
    shapes.emplace_back(inputs[i].shape.begin(), inputs[i].shape.end());
  }
  return shapes;
}

llvm::Expected<Execution> executeReference(const Graph &g,
                                           llvm::ArrayRef<HostTensor> inputs,
                                           const SafetensorsFile *params,
                                           llvm::StringRef paramsName,
                                           const EvalOptions &opts) {
  auto shapes = checkedInputShapes(g, inputs);
  if (!shapes)
    return shapes.takeError();
  Execution run;
  llvm::Expected<DimBindings> bindings = bindDims(g, *shapes);
  if (!bindings)
    return bindings.takeError();
  run.bindings = std::move(*bindings);
  llvm::Expected<std::unique_ptr<Graph>> spec =
      prepareForExecution(g, run.bindings, opts.printIR);
  if (!spec)
    return spec.takeError();
  run.specialized = std::move(*spec);
  llvm::Expected<ReferenceResult> r =
      evaluateSpecialized(*run.specialized, inputs, params, paramsName, opts);
  if (!r)
    return r.takeError();
  run.outputs = std::move(r->outputs);
  run.warnings = std::move(r->warnings);
  return run;
}

llvm::Expected<ReferenceResult>
evaluateSpecialized(const Graph &spec, llvm::ArrayRef<HostTensor> inputs,
                    const SafetensorsFile *params, llvm::StringRef paramsName,
                    const EvalOptions &opts) {
  // Before the parameters are made: an initialiser of any size is refused
  // here, not by the allocator.
  if (llvm::Error e = checkEvaluationMemory(spec, opts.maxBytes))
    return e;
  const uint64_t host = hostAvailableBytes();
  if (host < opts.maxBytes)
    if (llvm::Error e = checkEvaluationMemory(
            spec, host,
            fmt::format("the {} of memory available on this machine",
                        bytesText(host))))
      return e;

  llvm::Expected<BoundParams> bound = bindParams(spec, params, paramsName);
  if (!bound)
    return bound.takeError();
  ReferenceResult r;
  r.warnings = std::move(bound->warnings);

  std::vector<RefTensor> refInputs, refParams;
  for (const HostTensor &t : inputs)
    refInputs.push_back(toRef(t));
  // Each parameter's file copy goes once it is converted: with large
  // weights only one is held twice at a time.
  for (HostTensor &t : bound->values) {
    refParams.push_back(toRef(t));
    t = HostTensor();
  }
  llvm::Expected<std::vector<RefTensor>> outs =
      evaluate(spec, refInputs, refParams, opts);
  if (!outs)
    return outs.takeError();
  r.outputs = std::move(*outs);
  return r;
}

llvm::Expected<std::vector<HostTensor>>
inputsFromFile(const Graph &g, const SafetensorsFile &file,
               llvm::StringRef fileName) {
  std::vector<HostTensor> out;
  for (Value *in : g.inputs()) {
    const HostTensor *t = file.find(in->name());
    if (!t)
      return userError("{} has no tensor named '{}' for the graph input of "
                       "that name",
                       fileName.str(), in->name());
    out.push_back(*t);
  }
  return out;
}

} // namespace kiln
