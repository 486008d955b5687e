//===- Verifier.h - Structural and type checks on a graph ------*- C++ -*-===//
//
// verifyGraph checks every invariant the rest of Kiln relies on:
//  * values: ids match their position, names are unique and non-empty
//    (literals have none), a result's def produces it;
//  * nodes: topological order (operands defined before use), operand slots
//    match the op's schema (required present, literals only where a scalar
//    is allowed, at least one tensor), attributes are known, of the right
//    kind and list length, with a valid choice, required ones present;
//  * types: each result's type equals what the op's shape rule infers now;
//  * named dims: every named dim of a parameter is bound by some input;
//  * outputs: at least one, tensors only, none twice.
// Graphs built through Graph::addNode pass by construction; the verifier is
// for graphs that passes rewrote and for input that bypassed the builder.
// Returns the first violation as a located error.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_VERIFIER_H
#define KILN_VERIFIER_H

#include "IR/Graph.h"

#include <string>
#include <vector>

namespace kiln {

llvm::Error verifyGraph(const Graph &g);

/// One "FILE:LINE:COL: warning: ..." line for each input, parameter or
/// result of `g` that no node reads and the graph does not return: most
/// often a typo in a later operand or in the return list.
std::vector<std::string> unusedValueWarnings(const Graph &g);

} // namespace kiln

#endif
