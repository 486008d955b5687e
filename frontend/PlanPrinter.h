//===- PlanPrinter.h - The fusion plan as text and as Graphviz -*- C++ -*-===//
//
// What `kiln plan` prints: per kernel, the ops it fuses, what it reads and
// writes, its launch shape and strategy, and the bytes it must move. The
// text is stable (tests keep the examples' plans as golden files).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FRONTEND_PLANPRINTER_H
#define KILN_FRONTEND_PLANPRINTER_H

#include "Engine.h"

#include <string>

namespace kiln {

/// The plan of `exe`, compiled at `precision` (CompileOptions::
/// matmulPrecision), which its last line names.
std::string planText(const Executable &exe, MatmulPrecision precision);
std::string planDot(const Executable &exe);

} // namespace kiln

#endif
