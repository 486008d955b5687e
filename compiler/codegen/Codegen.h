//===- Codegen.h - A scheduled fusion group to a CUDA C++ kernel -*- C++ -*-//
//
// emitKernel renders group `g` as its schedule `s` (schedule/Scheduler.h)
// says: the source, the parameters in order and the launch shape. Before:
// `s` is scheduleGroup(g, target) or a tuner's change of it. After: the
// source includes only kiln/*.cuh headers (templates/), compiles with
// NVRTC, and its kernel is named by kind, fused ops and a hash of the
// source. Errors: a located user error where the group cannot be rendered.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_CODEGEN_H
#define KILN_CODEGEN_CODEGEN_H

#include "codegen/Kernel.h"
#include "fusion/Partition.h"
#include "schedule/Schedule.h"

#include "llvm/Support/Error.h"

namespace kiln {

llvm::Expected<EmittedKernel> emitKernel(const FusionGroup &g,
                                         const Schedule &s);

} // namespace kiln

#endif
