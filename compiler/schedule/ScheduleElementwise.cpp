//===- ScheduleElementwise.cpp - Pointwise and reduction kernels ----------===//
#include "schedule/Scheduler.h"

#include "ops/Families.h"

#include "llvm/ADT/STLExtras.h"

#include <fmt/format.h>

namespace kiln {

static constexpr unsigned kPointwiseThreads = 256;
static constexpr unsigned kReduceThreads = 256;

// A grid-stride loop over the group's domain, in vectors along its
// innermost dim larger than 1, at most 16 blocks per SM.
llvm::Expected<Schedule> schedulePointwise(const FusionGroup &g,
                                           const TargetInfo &t) {
  const Shape &domain = g.prologue.front()->result()->shape();
  const int64_t numel = domain.numElements();
  const int vec = vectorWidth(innermostSize(domain));
  Schedule s;
  s.kind = GroupKind::Pointwise;
  s.kernel = "pointwise";
  s.set("vec", vec);
  s.set("wide", numel >= (int64_t(1) << 31)); // 64-bit indices
  s.launch.block = kPointwiseThreads;
  s.launch.grid = gridFor(numel / vec, kPointwiseThreads, 16, t);
  s.reason = fmt::format("{}-wide vectors, {} blocks of {}", vec, s.launch.grid,
                         s.launch.block);
  return s;
}

// A warp per output when the reduced dims include the innermost one and
// are at least a warp long (coalesced loads along the row), else a thread
// per output.
llvm::Expected<Schedule> scheduleReduction(const FusionGroup &g,
                                           const TargetInfo &t) {
  const Shape &x = g.anchor->operand(0)->shape();
  llvm::Expected<ReductionShape> rs = reductionShape(*g.anchor);
  if (!rs)
    return rs.takeError();
  const bool warpPerOutput =
      x.rank() > 0 && llvm::is_contained(rs->reduced, int64_t(x.rank() - 1)) &&
      rs->length >= 32;
  Schedule s;
  s.kind = GroupKind::Reduction;
  s.kernel = "reduce";
  s.set("warpPerOutput", warpPerOutput);
  s.launch.block = kReduceThreads;
  s.launch.grid = gridFor(
      rs->outputs, warpPerOutput ? kReduceThreads / 32 : kReduceThreads, 16, t);
  s.reason = warpPerOutput ? "a warp per output" : "a thread per output";
  return s;
}

llvm::Expected<ReductionShape> reductionShape(const Node &r) {
  const Shape &x = r.operand(0)->shape();
  llvm::Expected<llvm::SmallVector<int64_t, 4>> red = reducedDims(r);
  if (!red)
    return red.takeError();
  ReductionShape s{*red, {}, 1, 1};
  for (size_t d = 0; d < x.rank(); ++d)
    if (!llvm::is_contained(s.reduced, static_cast<int64_t>(d)))
      s.kept.push_back(static_cast<int64_t>(d));
  for (int64_t d : s.kept)
    s.outputs *= x[d].size;
  for (int64_t d : s.reduced)
    s.length *= x[d].size;
  return s;
}

} // namespace kiln
