//===- Execute.h - Running a graph on host tensors -------------*- C++ -*-===//
//
// The steps every caller of the reference evaluator shares (kiln run, the
// demo, the golden tests): bind named dims from the inputs, specialise,
// bind parameters (file entries by name, else initialisers), evaluate.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FRONTEND_EXECUTE_H
#define KILN_FRONTEND_EXECUTE_H

#include "HostTensor.h"
#include "Safetensors.h"
#include "Specialize.h"
#include "ref/Evaluator.h"

#include <memory>
#include <string>
#include <vector>

namespace kiln {

/// Memory the host could give now (/proc/meminfo's MemAvailable, else the
/// physical memory): what the reference evaluator and the parameters'
/// initialisers may use at most.
uint64_t hostAvailableBytes();

/// Parses a .kg file and verifies the graph.
llvm::Expected<std::unique_ptr<Graph>> loadGraph(llvm::StringRef path);

struct Execution {
  DimBindings bindings;
  std::unique_ptr<Graph> specialized; // static shapes
  std::vector<RefTensor> outputs;     // in graph output order
  std::vector<std::string> warnings;  // e.g. unused parameter file entries
};

/// Runs `g` on the float64 reference evaluator. `inputs` follow g.inputs();
/// each must have the declared dtype. `params` may be null (initialisers
/// only); `paramsName` names it in messages.
/// The shape of each input tensor, after checking there is one per graph
/// input with the dtype the graph declares.
llvm::Expected<std::vector<llvm::SmallVector<int64_t, 6>>>
checkedInputShapes(const Graph &g, llvm::ArrayRef<HostTensor> inputs);

llvm::Expected<Execution> executeReference(const Graph &g,
                                           llvm::ArrayRef<HostTensor> inputs,
                                           const SafetensorsFile *params,
                                           llvm::StringRef paramsName,
                                           const EvalOptions &opts = {});

struct ReferenceResult {
  std::vector<RefTensor> outputs;    // in graph output order
  std::vector<std::string> warnings; // e.g. unused parameter file entries
};

/// The evaluation half of executeReference, on a graph already specialised
/// for these inputs (an Executable's graph, for `kiln run --check`): the
/// memory check, the parameters, the float64 evaluation.
llvm::Expected<ReferenceResult>
evaluateSpecialized(const Graph &spec, llvm::ArrayRef<HostTensor> inputs,
                    const SafetensorsFile *params, llvm::StringRef paramsName,
                    const EvalOptions &opts = {});

/// Takes each graph input by name from `file` (for golden cases, whose
/// inputs and parameters share one file).
llvm::Expected<std::vector<HostTensor>>
inputsFromFile(const Graph &g, const SafetensorsFile &file,
               llvm::StringRef fileName);

} // namespace kiln

#endif
