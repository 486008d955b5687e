//===- Emitters.h - One emitter per group kind (internal) ------*- C++ -*-===//
//
// Each emitter renders a group's Schedule (schedule/) into an EmittedKernel
// whose source uses the placeholder KILN_NAME for the kernel's name;
// generateKernels names it (kind, fused ops, a hash of the source) and
// substitutes the name. Emitters decide nothing: every choice is in the
// schedule, and what they compute from the group is fact (shapes, indices).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_EMITTERS_H
#define KILN_CODEGEN_EMITTERS_H

#include "codegen/Expr.h"
#include "codegen/Kernel.h"
#include "fusion/Partition.h"
#include "schedule/Schedule.h"

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

/// Bytes of all the group's inputs and outputs.
uint64_t groupBytes(const FusionGroup &g);

/// A group's tail (FusionGroup::tail: a min or max after the GroupNorm or
/// the contraction's epilogue) after its keys are in (kiln::tailKey):
///  - addTailWorkspaces: the `keys` (zeroed, `keys` of them) and `barrier`
///    workspaces appended to `params`, the kernel's last parameters
///    (kTailParams);
///  - emitTailPhase: after a grid barrier of `team`'s threads (a
///    gridBarrier team: "kiln::WholeBlock"), the tail's values from their
///    keys, the tail epilogue over its shape and its stores (`unroll`
///    elements a thread per loop step), then the keys zeroed again
///    (tailRestore). With `finish` (a sum, mean or logsumexp: code that
///    turns the partials into each key's value as float bits), that code
///    and a second barrier come first.
void addTailWorkspaces(std::vector<KernelParam> &params, int64_t keys);
inline constexpr const char *kTailParams =
    ", unsigned *__restrict__ keys, unsigned *barrier";
std::string emitTailPhase(const FusionGroup &g, const ParamList &pl,
                          const std::string &team, int64_t keys, int unroll,
                          const std::string &finish = "");

/// kiln::ReduceOp's name of reduction op `k` ("LogSumExp").
const char *reduceOpName(OpKind k);

/// Each renders group `g` as its schedule says; the launch shape and the
/// reason come from the schedule too.
llvm::Expected<EmittedKernel> emitPointwise(const FusionGroup &g,
                                            const Schedule &s);
llvm::Expected<EmittedKernel> emitReduction(const FusionGroup &g,
                                            const Schedule &s);
llvm::Expected<EmittedKernel> emitGroupNorm(const FusionGroup &g,
                                            const Schedule &s);
llvm::Expected<EmittedKernel> emitContraction(const FusionGroup &g,
                                              const Schedule &s);
llvm::Expected<EmittedKernel> emitConvolution(const FusionGroup &g,
                                              const Schedule &s);

} // namespace kiln

#endif
