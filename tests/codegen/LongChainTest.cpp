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

// A convolution's epilogue past 60 nodes is one function too, whose name
// is not the epilogue lambda's (both were `epilogue`: NVRTC refused the
// kernel). The tensor-core convolution in TF32 and 3xTF32, and the
// depthwise one, compile with NVRTC for sm_90a.
TEST(LongChain, ConvolutionEpiloguesOfMoreCompile) {
  for (const char *groups : {"1", "16"})
    for (MatmulPrecision p :
         {MatmulPrecision::High, MatmulPrecision::Highest}) {
      const bool depthwise = std::string(groups) == "16";
      std::string kg = fmt::format(
          "graph c(x: f32[2, 16, 20, 24]) {{\n"
          "  param w: f32[32, {}, 3, 3] = uniform(-0.1, 0.1, seed=1)\n"
          "  param b: f32[32] = uniform(-0.1, 0.1, seed=2)\n"
          "  a0 = conv2d(x, w, b, padding=1, groups={})\n",
          depthwise ? 1 : 16, groups);
      const char *const steps[] = {"relu(a{})", "sigmoid(a{})", "tanh(a{})"};
      for (int i = 1; i <= 70; ++i)
        kg += fmt::format("  a{} = ", i) +
              fmt::format(fmt::runtime(steps[i % 3]), i - 1) + "\n";
      kg += "  return a70, a35\n}\n";
      auto g = parseGraph(kg, "conv_chain.kg");
      ASSERT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());
      CompileOptions opts = offlineOptions(false);
      opts.matmulPrecision = p;
      auto exe = Executable::compile(**g, {{2, 16, 20, 24}}, opts);
      ASSERT_TRUE(static_cast<bool>(exe)) << llvm::toString(exe.takeError());
      ASSERT_EQ((*exe)->kernels().size(), 1u);
      const EmittedKernel &k = (*exe)->kernels().front();
      EXPECT_NE(k.source.find(depthwise ? "kiln::depthwiseConv2d<"
                                        : "kiln::wgmmaConv<"),
                std::string::npos);
      EXPECT_NE(k.source.find("__noinline__ convEpilogue_out convEpilogue("),
                std::string::npos)
          << k.source;
    }
}

} // namespace
} // namespace kiln
