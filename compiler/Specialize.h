//===- Specialize.h - Binding named dims to sizes --------------*- C++ -*-===//
//
// A graph may use named dims (x: f32[N, 8192]). Running it needs concrete
// sizes: bindDims reads them off the actual input shapes, and specialize
// rebuilds the graph with every named dim replaced, re-running each op's
// shape rule so that a size that breaks a rule (N bound to 3 where a
// broadcast needs 1 or 5) is a located error. The result has only static
// shapes; the input graph is unchanged.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_SPECIALIZE_H
#define KILN_SPECIALIZE_H

#include "IR/Graph.h"

#include <map>
#include <memory>

namespace kiln {

/// Named dim -> size. Ordered, so printing and cache keys are deterministic.
using DimBindings = std::map<std::string, int64_t>;

/// Binds the named dims of g's inputs from `inputShapes` (one per input, in
/// g.inputs() order). Errors: wrong rank, a static dim that differs, a named
/// dim given two different sizes, a negative size.
llvm::Expected<DimBindings>
bindDims(const Graph &g,
         llvm::ArrayRef<llvm::SmallVector<int64_t, 6>> inputShapes);

/// Parses "N=4" style bindings (for the command line).
llvm::Expected<DimBindings> parseBindings(llvm::ArrayRef<std::string> specs);

/// Rebuilds g with named dims replaced by their sizes. Every named dim used
/// by an input or parameter must be bound, and every name bound must be one
/// of them.
llvm::Expected<std::unique_ptr<Graph>> specialize(const Graph &g,
                                                  const DimBindings &b);

/// "N=4, M=8" (empty for no bindings).
std::string bindingsStr(const DimBindings &b);

} // namespace kiln

#endif
