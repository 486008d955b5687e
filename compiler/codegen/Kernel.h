//===- Kernel.h - A generated kernel and how to launch it ------*- C++ -*-===//
//
// The code generator's output for one fusion group: the CUDA C++ source of
// one kernel, its launch shape, and its parameters in order. The runtime
// never sees the IR: it compiles `source`, and the engine binds each
// parameter to a device pointer.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_KERNEL_H
#define KILN_CODEGEN_KERNEL_H

#include "IR/Graph.h"
#include "schedule/Target.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

/// One kernel parameter: a tensor of the graph, or scratch memory.
struct KernelParam {
  enum class Kind : uint8_t { Tensor, Workspace } kind = Kind::Tensor;
  const Value *value = nullptr; // Tensor
  bool isOutput = false;        // Tensor: written by the kernel
  uint64_t bytes = 0;           // Workspace: size
  bool zeroed = false; // Workspace: zero when allocated; each launch of the
                       // kernel leaves it zero again (or, a count of
                       // launches, needs only the first zero)
  /// Workspace: a 4-byte flag, 1 when allocated and set to 1 again by
  /// Executable::run whenever the parameters change; the kernel clears it
  /// once it has redone what it derives from them.
  bool setOnNewParams = false;
};

struct EmittedKernel {
  std::string name;   // extern "C" __global__ function, e.g. gn_team_ab12cd
  std::string source; // the whole translation unit
  unsigned grid = 1, block = 1;
  unsigned gridY = 1;       // batches (matmul) or groups (convolutions)
  unsigned sharedBytes = 0; // dynamic shared memory
  bool cooperative = false;
  /// Compiled for the target's "a" arch (Schedule::archSpecific).
  bool archSpecific = false;
  std::vector<KernelParam> params;
  /// The fewest bytes the kernel must move (each input read once, each
  /// output written once) and its floating-point work, for plan and bench.
  uint64_t bytes = 0;
  double flops = 0;
  /// How the scheduler chose, for `kiln plan`: "team of 88 blocks per
  /// slice, 93 KiB on chip per block".
  std::string strategy;
};

} // namespace kiln

#endif
