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
  /// "const float *__restrict__ in_x, kiln::f16 *__restrict__ out_y, ..."
  std::string signature() const;
  /// Whether a tensor parameter is f16 or bf16.
  bool hasHalf() const;
  /// The include of kiln/half.cuh when hasHalf(), else "".
  std::string halfInclude() const;
};
ParamList tensorParams(const FusionGroup &g);

/// Largest of 8 (when maxVec allows), 4, 2, 1 dividing `n`.
int vectorWidth(int64_t n, int maxVec = 4);
/// For GroupNorm kernels: 8 when every tensor is f16 or bf16 (16-byte
/// loads of 8 elements), else 4. On the H100, L2_37's tail (swish, + bias,
/// GroupNorm) in f16 took 0.273 ms at 8 against 0.325 at 4, L1_35's shape
/// 3.45 against 3.49 ms; gelu + bias (pointwise) 0.206 against 0.197 ms, so
/// pointwise kernels stay at 4 (bench/NOTES.md v14).
int maxVectorWidth(const ParamList &pl);
/// Blocks for a grid-stride kernel: enough for `items` at `perBlock` each,
/// at least 1 and at most `perSM` per multiprocessor.
unsigned gridFor(int64_t items, int64_t perBlock, int perSM,
                 const TargetInfo &t);
/// Bytes of all the group's inputs and outputs.
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
