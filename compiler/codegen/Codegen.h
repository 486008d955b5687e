//===- Codegen.h - Fusion groups to CUDA C++ kernels -----------*- C++ -*-===//
//
// generateKernels schedules each group of a fusion plan for the concrete
// shapes and the target (picks the template, the vector width, the block
// and grid shape, how a GroupNorm slice is held on chip) and emits one
// kernel per group.
//
// Before: the plan comes from partitionGraph on a specialised graph (all
// dims static). After: kernels[i] computes plan.groups[i]; every source
// includes only kiln/*.cuh headers (templates/) and compiles with NVRTC.
// Errors: a user error naming the node when a group cannot run on the GPU
// yet (a dtype other than f32).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_CODEGEN_H
#define KILN_CODEGEN_CODEGEN_H

#include "codegen/Kernel.h"
#include "fusion/Partition.h"

#include "llvm/Support/Error.h"

#include <vector>

namespace kiln {

llvm::Expected<std::vector<EmittedKernel>>
generateKernels(const Graph &g, const FusionPlan &plan,
                const TargetInfo &target);

} // namespace kiln

#endif
