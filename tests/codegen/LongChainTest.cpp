//===- LongChainTest.cpp - Long elementwise chains ------------------------===//
//
// No GPU needed. A pointwise group of more than 60 nodes computes each
// element in one non-inlined function called per vector lane (NVRTC then
// compiles the chain once, not once per lane); up to 60 the chain is inlined.
// Both forms compile with NVRTC, with broadcast operands, literals and
// outputs from mid-chain. (tests/gpu runs the long form against the
// reference evaluator.)
//
//===----------------------------------------------------------------------===//
#include "Engine.h"
#include "OfflineOptions.h"
#include "Parser.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

namespace kiln {
namespace {

/// x f32[A, B] and y f32[B] through `nodes` elementwise nodes; returns the
/// last node and one from mid-chain.
std::string chain(int nodes) {
  std::string kg = "graph c(x: f32[7, 12], y: f32[12]) {\n  p0 = add(x, y)\n";
  const char *const steps[] = {"sigmoid(p{})", "mul(p{}, y)", "add(p{}, x)",
                               "tanh(p{})", "maximum(p{}, -0.5)"};
  for (int i = 1; i < nodes; ++i)
    kg += fmt::format("  p{} = ", i) +
          fmt::format(fmt::runtime(steps[i % 5]), i - 1) + "\n";
  return kg + fmt::format("  return p{}, p{}\n}}\n", nodes - 1, nodes / 2);
}

std::string sourceOf(int nodes) {
  auto g = parseGraph(chain(nodes), "chain.kg");
  EXPECT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());
  if (!g)
    return "";
  auto exe = Executable::compile(**g, {{7, 12}, {12}}, offlineOptions(false));
  EXPECT_TRUE(static_cast<bool>(exe)) << llvm::toString(exe.takeError());
  if (!exe)
    return "";
  EXPECT_EQ((*exe)->kernels().size(), 1u);
  return (*exe)->kernels().front().source;
}

TEST(LongChain, SixtyNodesAreInlined) {
  std::string src = sourceOf(60);
  EXPECT_EQ(src.find("__noinline__"), std::string::npos) << src;
  EXPECT_NE(src.find("kiln::loadVec<4>(in_x"), std::string::npos) << src;
}

TEST(LongChain, MoreAreOneFunctionCalledPerLane) {
  std::string src = sourceOf(61);
  EXPECT_NE(src.find("static __device__ __noinline__ chain_out chain(float a0, "
                     "float a1)"),
            std::string::npos)
      << src;
  // The inputs are still loaded as vectors (y broadcast over the rows), and
  // both outputs are stored from the function's results.
  EXPECT_NE(src.find("kiln::loadVec<4>(in_x"), std::string::npos) << src;
  EXPECT_NE(src.find("kiln::loadVec<4>(in_y"), std::string::npos) << src;
  EXPECT_NE(src.find("v3[l] = c.o[1];"), std::string::npos) << src;
  EXPECT_NE(src.find("kiln::storeVec<4>(out_p60 + ii, v3)"), std::string::npos)
      << src;
  EXPECT_NE(src.find("kiln::storeVec<4>(out_p30 + ii, v2)"), std::string::npos)
      << src;
}

} // namespace
} // namespace kiln
