//===- Scheduler.h - Fusion groups to Schedules ----------------*- C++ -*-===//
//
// scheduleGroup chooses, for one group of a plan at its concrete (static)
// shapes and the target, the template, its parameters and the launch shape
// (Schedule.h), and says why. It generates no code. Errors: a user error
// naming the node when no kernel can run the group (a dtype other than f32,
// f16 or bf16; a size beyond what the templates index).
//
// Also here: the facts about a group's shapes that both the scheduler and
// the emitter read (what a GroupNorm slice is, how a matmul's batch dims
// map onto its operands), so the two never compute them differently.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_SCHEDULE_SCHEDULER_H
#define KILN_SCHEDULE_SCHEDULER_H

#include "schedule/Precision.h"
#include "schedule/Schedule.h"
#include "schedule/Target.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <vector>

namespace kiln {

/// `precision` picks how f32 contractions run (the other kinds ignore it);
/// with `constantParams` (CompileOptions::constantParams), a contraction or
/// a tensor-core convolution may keep what it derives from a parameter
/// across runs.
llvm::Expected<Schedule>
scheduleGroup(const FusionGroup &g, const TargetInfo &t,
              MatmulPrecision precision = MatmulPrecision::Highest,
              bool constantParams = false);

llvm::Expected<Schedule> schedulePointwise(const FusionGroup &g,
                                           const TargetInfo &t);
llvm::Expected<Schedule> scheduleReduction(const FusionGroup &g,
                                           const TargetInfo &t);
llvm::Expected<Schedule> scheduleGroupNorm(const FusionGroup &g,
                                           const TargetInfo &t);
llvm::Expected<Schedule> scheduleContraction(const FusionGroup &g,
                                             const TargetInfo &t,
                                             MatmulPrecision precision,
                                             bool constantParams);
llvm::Expected<Schedule> scheduleConvolution(const FusionGroup &g,
                                             const TargetInfo &t,
                                             MatmulPrecision precision,
                                             bool constantParams);

/// Whether the kernel of contraction `anchor` takes a fused epilogue of
/// elementwise nodes on target `t` at `precision` (linear on Hopper's
/// tensor cores), and, when `norm` is given, that group_norm too: its input
/// is the [M, N] result and each group's N / groups columns lie in a tile
/// (a multiple of 8 dividing 128). The partitioner asks (PartitionOptions).
bool contractionTakesEpilogue(const Node &anchor, const Node *norm,
                              const TargetInfo &t, MatmulPrecision precision);

/// Largest of 8 (when maxVec allows), 4, 2, 1 dividing `n`.
int vectorWidth(int64_t n, int maxVec = 4);
/// Blocks for a grid-stride kernel: enough for `items` at `perBlock` each,
/// at least 1 and at most `perSM` per multiprocessor.
unsigned gridFor(int64_t items, int64_t perBlock, int perSM,
                 const TargetInfo &t);

/// A GroupNorm's input as slices: one sample's one group each.
struct GnShape {
  int64_t n, c, groups, hw, slice, slices;
};
GnShape gnShape(const FusionGroup &g);

/// A reduction's input dims: those it reduces and those it keeps, and how
/// many outputs of how many elements each.
struct ReductionShape {
  llvm::SmallVector<int64_t, 4> reduced, kept;
  int64_t outputs, length;
};
llvm::Expected<ReductionShape> reductionShape(const Node &reduction);

/// A linear as the GEMM it is: [m, k] x [n, k]^T, m every dim of x but the
/// last.
struct LinearShape {
  int64_t m, k, n;
  DType dtype = DType::F32; // of x, w and the bias (the same)
  int64_t batches = 1;      // a batched matmul's (m: a batch's rows)
};
LinearShape linearShape(const Node &linear);
/// A matmul that the tensor-core linear runs (wgmmaLinear with a
/// transposed w): f32, f16 or bf16 with a right operand of at least 2 dims.
/// Its sizes as a linear's: with a 2-D right operand the left operand's
/// rows, batches included, as m; with a batched one a batch's rows as m
/// and the output's batches (matmulLayout's runs). nullopt for any other.
std::optional<LinearShape> wgmmaMatmulShape(const Node &matmul);

/// A conv2d or conv_transpose2d's sizes, an unbatched input as a batch of 1.
struct ConvShape {
  int64_t batch, cin, h, w, cout, groups, ho, wo;
  int64_t pixels() const { return batch * ho * wo; }
};
ConvShape convShape(const Node &conv);

/// A matmul in the 2-D forms the kernel multiplies (a 1-D operand is a
/// matrix of one row or one column, as in PyTorch), with its output batch
/// dims merged into at most three runs, each with the element stride of
/// either operand (0: broadcast).
struct MatmulLayout {
  Shape a, b, c;
  int64_t m, k, n;
  struct Run {
    int64_t count, sa, sb;
  };
  std::vector<Run> runs;
  int64_t batches; // the product of the runs' counts
};
llvm::Expected<MatmulLayout> matmulLayout(const Node &n);

} // namespace kiln

#endif
