//===- GpuExecute.h - Host tensors in, host tensors out, on the GPU -*- C++
//-*-===//
//
// The convenience layer over Executable that `kiln run`, `kiln bench` and
// the GPU tests use: compile for the inputs' shapes, upload inputs and
// parameters, allocate outputs, run, download.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FRONTEND_GPUEXECUTE_H
#define KILN_FRONTEND_GPUEXECUTE_H

#include "Engine.h"
#include "HostTensor.h"
#include "Safetensors.h"

#include <memory>
#include <vector>

namespace kiln {

struct GpuSession {
  std::unique_ptr<Executable> exe;
  std::vector<rt::Buffer> inputs, params, outputs;
  std::vector<std::string> warnings; // unused parameter file entries
  double compileSeconds = 0;

  /// Runs once on `stream` (asynchronously).
  llvm::Error run(rt::StreamHandle stream = nullptr, RunTrace *trace = nullptr);
  /// Fills every output with NaN, so elements a kernel never writes show.
  llvm::Error poisonOutputs();
  /// Copies the outputs back (synchronising first).
  llvm::Expected<std::vector<HostTensor>> downloadOutputs();
  /// poisonOutputs, run once, downloadOutputs: one run whose every output
  /// element a kernel must have written.
  llvm::Expected<std::vector<HostTensor>> runPoisoned();
};

/// Compiles `g` for the inputs' shapes, binds parameters (from `params` by
/// name, else their initialisers) and uploads everything.
llvm::Expected<GpuSession> prepareGpu(const Graph &g,
                                      llvm::ArrayRef<HostTensor> inputs,
                                      const SafetensorsFile *params,
                                      llvm::StringRef paramsName,
                                      const CompileOptions &opts);

} // namespace kiln

#endif
