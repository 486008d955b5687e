//===- Parser.h - Reading .kg graphs ---------------------------*- C++ -*-===//
//
// Parses the .kg text format (docs/format.md) into a Graph. The graph is
// built through Graph's add* functions, so a parsed graph is checked and
// typed exactly like one built in C++. Every error is a DiagError
// "file:line:col: error: ..." that says what was expected.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FRONTEND_PARSER_H
#define KILN_FRONTEND_PARSER_H

#include "IR/Graph.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>

namespace kiln {

/// Parses one graph from `text`; `fileName` locates values and errors.
llvm::Expected<std::unique_ptr<Graph>> parseGraph(llvm::StringRef text,
                                                  llvm::StringRef fileName);

/// Reads and parses the file at `path`.
llvm::Expected<std::unique_ptr<Graph>> parseGraphFile(llvm::StringRef path);

} // namespace kiln

#endif
