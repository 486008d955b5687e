//===- Printer.h - Writing graphs as .kg text ------------------*- C++ -*-===//
//
// Prints a Graph in the canonical .kg form: one statement per node in node
// order, nested calls as their %N names, attributes after schema coercion.
// The output parses back to the same graph, and printing that again gives
// the same text: print(parse(print(g))) == print(g).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_IR_PRINTER_H
#define KILN_IR_PRINTER_H

#include "IR/Graph.h"

#include <string>

namespace kiln {

struct PrintOptions {
  /// Annotate every assignment with its type: `y: f32[N, 8] = ...`.
  bool types = false;
};

std::string printGraph(const Graph &g, const PrintOptions &opts = {});

} // namespace kiln

#endif
