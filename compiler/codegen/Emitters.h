//===- Emitters.h - One emitter per group kind (internal) ------*- C++ -*-===//
//
// Each emitter fills in an EmittedKernel whose source uses the placeholder
// KILN_NAME for the kernel's name; generateKernels names it (kind, fused
// ops, a hash of the source) and substitutes the name.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_EMITTERS_H
#define KILN_CODEGEN_EMITTERS_H

#include "codegen/Expr.h"
#include "codegen/Kernel.h"
#include "fusion/Partition.h"

#include "llvm/Support/Error.h"

namespace kiln {

/// Kernel parameters of a group: inputs then outputs, with C names.
struct ParamList {
  std::vector<KernelParam> params;
  std::vector<std::string> names;
  /// The C name of tensor v's parameter.
  std::string of(const Value *v) const;
  /// "const float *__restrict__ in_x, float *__restrict__ out_y, ..."
  std::string signature() const;
};
ParamList tensorParams(const FusionGroup &g);

/// Largest of 4, 2, 1 dividing `n`.
int vectorWidth(int64_t n);
/// Blocks for a grid-stride kernel: enough for `items` at `perBlock` each,
/// at least 1 and at most `perSM` per multiprocessor.
unsigned gridFor(int64_t items, int64_t perBlock, int perSM,
                 const TargetInfo &t);
/// Bytes of all the group's inputs and outputs (f32).
uint64_t groupBytes(const FusionGroup &g);

llvm::Expected<EmittedKernel> emitPointwise(const FusionGroup &g,
                                            const TargetInfo &t);
llvm::Expected<EmittedKernel> emitReduction(const FusionGroup &g,
                                            const TargetInfo &t);
llvm::Expected<EmittedKernel> emitGroupNorm(const FusionGroup &g,
                                            const TargetInfo &t);
llvm::Expected<EmittedKernel> emitContraction(const FusionGroup &g,
                                              const TargetInfo &t);
llvm::Expected<EmittedKernel> emitConvolution(const FusionGroup &g,
                                              const TargetInfo &t);

} // namespace kiln

#endif
