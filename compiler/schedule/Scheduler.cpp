//===- Scheduler.cpp - One scheduler per group kind -----------------------===//
#include "schedule/Scheduler.h"

#include "IR/Diagnostics.h"

#include "llvm/ADT/STLExtras.h"

namespace kiln {

int vectorWidth(int64_t n, int maxVec) {
  if (maxVec >= 8 && n % 8 == 0)
    return 8;
  return n % 4 == 0 ? 4 : n % 2 == 0 ? 2 : 1;
}

unsigned gridFor(int64_t items, int64_t perBlock, int perSM,
                 const TargetInfo &t) {
  int64_t blocks = (items + perBlock - 1) / perBlock;
  return static_cast<unsigned>(std::max<int64_t>(
      1, std::min<int64_t>(blocks, int64_t(perSM) * t.multiprocessors)));
}

/// GPU kernels handle f32, f16 and bf16 tensors (contractions of halves on
/// Hopper only: scheduleLinear and scheduleMatmul say where not); say so
/// for anything else.
static llvm::Error checkDTypes(const FusionGroup &g) {
  for (const Node *n : g.nodes())
    for (const Value *v : n->operands()) {
      if (!v || v->isLiteral() || v->dtype() == DType::F32 ||
          isHalf(v->dtype()))
        continue;
      return diag(n->loc(),
                  "'{}' is {}; GPU code generation supports f32, f16 and "
                  "bf16 tensors only so far (run it with the reference "
                  "evaluator, or convert it to a float dtype)",
                  v->name(), dtypeName(v->dtype()).str());
    }
  return llvm::Error::success();
}

llvm::Expected<Schedule> scheduleGroup(const FusionGroup &g,
                                       const TargetInfo &t,
                                       MatmulPrecision precision,
                                       bool constantParams) {
  if (llvm::Error e = checkDTypes(g))
    return e;
  switch (g.kind) {
  case GroupKind::Pointwise:
    return schedulePointwise(g, t);
  case GroupKind::Reduction:
    return scheduleReduction(g, t);
  case GroupKind::GroupNorm:
    return scheduleGroupNorm(g, t);
  case GroupKind::Contraction:
    return scheduleContraction(g, t, precision, constantParams);
  case GroupKind::Convolution:
    return scheduleConvolution(g, t, precision, constantParams);
  }
  llvm_unreachable("bad group kind");
}

} // namespace kiln
