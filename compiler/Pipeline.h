//===- Pipeline.h - From a parsed graph to what runs -----------*- C++ -*-===//
//
// The passes, in order, live in Pipeline.cpp alone. Set KILN_PRINT_IR=1 to
// print the graph and the time taken after each pass (to stderr).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PIPELINE_H
#define KILN_PIPELINE_H

#include "IR/Graph.h"
#include "Specialize.h"

#include <memory>

namespace kiln {

/// Prepares `g` to run with the named dims bound by `bindings`: checks it,
/// specialises it to static shapes and checks the result. The returned graph
/// has static shapes and passes the verifier; `g` is unchanged.
llvm::Expected<std::unique_ptr<Graph>>
prepareForExecution(const Graph &g, const DimBindings &bindings);

} // namespace kiln

#endif
