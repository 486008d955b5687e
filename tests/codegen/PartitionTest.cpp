//===- PartitionTest.cpp - Which nodes fuse into a GroupNorm tail ---------===//
//
// No GPU needed: plans only. A min or max over every dim but the batch of a
// GroupNorm value, and elementwise nodes after it that read nothing else of
// the group, join the GroupNorm kernel; anything else stays out.
//
//===----------------------------------------------------------------------===//
#include "Engine.h"
#include "OfflineOptions.h"
#include "Parser.h"
#include "PlanPrinter.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

/// The plan of `body` (after the GroupNorm of x f32[N, 64, 3, 5] into y),
/// for N = 4.
std::string planOf(const std::string &body) {
  std::string text = "graph g(x: f32[N, 64, 3, 5]) {\n"
                     "  param gamma: f32[64] = ones\n"
                     "  param beta: f32[64] = zeros\n"
                     "  param bias: f32[1, 64, 1, 1] = uniform(-1, 1, seed=1)\n"
                     "  y = group_norm(x, gamma, beta, groups=8)\n" +
                     body + "}\n";
  auto g = parseGraph(text, "tail.kg");
  EXPECT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());
  if (!g)
    return "";
  auto exe = Executable::compile(**g, {{4, 64, 3, 5}}, offlineOptions(true));
  EXPECT_TRUE(static_cast<bool>(exe)) << llvm::toString(exe.takeError());
  return exe ? planText(**exe, MatmulPrecision::Highest) : "";
}

size_t kernelsIn(const std::string &plan) {
  size_t n = 0;
  for (size_t p = plan.find("\nkernel "); p != std::string::npos;
       p = plan.find("\nkernel ", p + 1))
    ++n;
  return n + (plan.rfind("kernel ", 0) == 0 ? 1 : 0);
}

TEST(GroupNormTail, MinOverAllButBatchAndItsEpilogueFuse) {
  std::string plan = planOf("  m = min(y, dim=[1, 2, 3], keepdim=true)\n"
                            "  out = add(m, bias)\n  return out\n");
  EXPECT_EQ(kernelsIn(plan), 1u) << plan;
  EXPECT_NE(plan.find("y = group_norm, m = min, out = add"), std::string::npos)
      << plan;
}

TEST(GroupNormTail, MaxOfAnEpilogueValueFuses) {
  std::string plan = planOf("  s = swish(y)\n  m = max(s, dim=[1, 2, 3])\n"
                            "  return m\n");
  EXPECT_EQ(kernelsIn(plan), 1u) << plan;
  EXPECT_NE(plan.find("s = swish, m = max"), std::string::npos) << plan;
}

TEST(GroupNormTail, ReductionOverSomeDimsStaysOut) {
  std::string plan = planOf("  m = min(y, dim=1)\n  return m\n");
  EXPECT_EQ(kernelsIn(plan), 2u) << plan;
  EXPECT_NE(plan.find("kind    reduction"), std::string::npos) << plan;
}

TEST(GroupNormTail, SumStaysOut) {
  std::string plan = planOf("  m = sum(y, dim=[1, 2, 3])\n  return m\n");
  EXPECT_EQ(kernelsIn(plan), 2u) << plan;
}

TEST(GroupNormTail, NodeReadingAGroupNormValueAfterTheTailStaysOut) {
  // out needs y after the min is known: y must reach memory, so the add
  // cannot run in the GroupNorm kernel.
  std::string plan = planOf("  m = min(y, dim=[1, 2, 3], keepdim=true)\n"
                            "  out = sub(y, m)\n  return out\n");
  EXPECT_EQ(kernelsIn(plan), 2u) << plan;
  EXPECT_NE(plan.find("writes  y f32[4, 64, 3, 5]"), std::string::npos) << plan;
}

} // namespace
} // namespace kiln
