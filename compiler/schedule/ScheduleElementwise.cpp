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
  const Node &r = *g.anchor;
  const Shape &x = r.operand(0)->shape();
  llvm::Expected<llvm::SmallVector<int64_t, 4>> red = reducedDims(r);
  if (!red)
    return red.takeError();
  int64_t numOut = 1, len = 1;
  for (size_t d = 0; d < x.rank(); ++d)
    (llvm::is_contained(*red, static_cast<int64_t>(d)) ? len : numOut) *=
        x[d].size;
  const bool warpPerOutput = x.rank() > 0 &&
                             llvm::is_contained(*red, int64_t(x.rank() - 1)) &&
                             len >= 32;
  Schedule s;
  s.kind = GroupKind::Reduction;
  s.kernel = "reduce";
  s.set("warpPerOutput", warpPerOutput);
  s.launch.block = kReduceThreads;
  s.launch.grid = gridFor(
      numOut, warpPerOutput ? kReduceThreads / 32 : kReduceThreads, 16, t);
  s.reason = warpPerOutput ? "a warp per output" : "a thread per output";
  return s;
}

} // namespace kiln
