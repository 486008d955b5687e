//===- EdgeShapesTest.cpp - Dims of 0 and sizes at the limits -------------===//
//
// No GPU needed. PyTorch runs every op on tensors with a dim of 0: a group
// whose results are all empty gets no kernel; a kernel whose result has
// elements though an operand has none (a sum over an empty dim, a linear
// over 0 features) is still generated and compiles with NVRTC. Sizes beyond
// what the kernels can index are located errors, never generated code that
// NVRTC rejects or a crash. (tests/gpu runs the empty cases against the
// reference evaluator.)
//
//===----------------------------------------------------------------------===//
#include "Engine.h"
#include "Execute.h"
#include "OfflineOptions.h"
#include "Parser.h"
#include "PlanPrinter.h"

#include "llvm/ADT/STLExtras.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

namespace kiln {
namespace {

/// Generates (and with `nvrtc`, compiles for sm_90) `g` at `shapes`.
llvm::Expected<std::unique_ptr<Executable>>
build(const Graph &g, std::vector<llvm::SmallVector<int64_t, 6>> shapes,
      bool nvrtc) {
  return Executable::compile(g, shapes, offlineOptions(!nvrtc));
}

std::unique_ptr<Graph> parse(const std::string &text) {
  auto g = parseGraph(text, "empty.kg");
  EXPECT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());
  return g ? std::move(*g) : nullptr;
}

TEST(EmptyTensors, AnEmptyBatchOfEveryFlagshipNeedsNoKernel) {
  for (const char *id : {"l1_35", "l2_19", "l2_37", "l2_62", "l2_75"}) {
    auto g =
        loadGraph(std::string(KILN_SOURCE_DIR) + "/examples/" + id + ".kg");
    ASSERT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());
    llvm::SmallVector<int64_t, 6> shape = (*g)->inputs()[0]->shape().sizes();
    shape[0] = 0;
    auto exe = build(**g, {shape}, true);
    ASSERT_TRUE(static_cast<bool>(exe))
        << id << ": " << llvm::toString(exe.takeError());
    EXPECT_TRUE((*exe)->kernels().empty()) << id;
    size_t nodes = 0;
    for (const FusionGroup &fg : (*exe)->plan().empty)
      nodes += fg.nodes().size();
    EXPECT_EQ(nodes, (*exe)->graph().nodes().size()) << id;
    std::string plan = planText(**exe, MatmulPrecision::Highest);
    EXPECT_NE(plan.find("no kernel: "), std::string::npos) << plan;
    EXPECT_NE(plan.find("(empty)"), std::string::npos) << plan;
    EXPECT_NE(plan.find("0 kernels for "), std::string::npos) << plan;
  }
}

TEST(EmptyTensors, OnlyTheEmptyPartOfAGraphIsSkipped) {
  auto g = parse("graph g(x: f32[N, 8], z: f32[8]) {\n"
                 "  a = gelu(x)\n  b = exp(z)\n  c = add(a, b)\n"
                 "  return c, b\n}\n");
  ASSERT_TRUE(g);
  auto exe = build(*g, {{0, 8}, {8}}, true);
  ASSERT_TRUE(static_cast<bool>(exe)) << llvm::toString(exe.takeError());
  const FusionPlan &plan = (*exe)->plan();
  ASSERT_EQ(plan.groups.size(), 1u)
      << planText(**exe, MatmulPrecision::Highest);
  const std::vector<const Value *> &outs = plan.groups[0].outputs;
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0]->name(), "b");
  for (const FusionGroup &fg : plan.empty)
    for (const Value *v : fg.outputs)
      EXPECT_EQ(v->shape().numElements(), 0) << v->name();
}

// PyTorch: sum 0, mean NaN, logsumexp -inf over no elements, and a linear
// or matmul over 0 features gives the bias or zeros. Each compiles cleanly.
TEST(EmptyTensors, ResultsWithElementsFromEmptyOperandsStillCompile) {
  struct Case {
    const char *text;
    std::vector<llvm::SmallVector<int64_t, 6>> shapes;
  };
  const Case cases[] = {
      {"graph r(x: f32[A, B]) {\n  s = sum(x, dim=1)\n"
       "  m = mean(x, dim=1, keepdim=true)\n  l = logsumexp(x, dim=1)\n"
       "  return s, m, l\n}\n",
       {{5, 0}}},
      {"graph r(x: f32[A, B]) {\n  out = sum(x)\n  return out\n}\n", {{0, 9}}},
      {"graph r(x: f32[A, 4, B, C]) {\n  out = mean(x, dim=[2, 3])\n"
       "  return out\n}\n",
       {{2, 4, 0, 0}}},
      {"graph l(x: f32[N, 0]) {\n"
       "  param w: f32[6, 0] = uniform(-1, 1, seed=1)\n"
       "  param b: f32[6] = uniform(-1, 1, seed=2)\n"
       "  y = linear(x, w, b)\n  out = gelu(y)\n  return out\n}\n",
       {{7, 0}}},
      {"graph m(x: f32[M, K], y: f32[K, N]) {\n  out = matmul(x, y)\n"
       "  return out\n}\n",
       {{5, 0}, {0, 3}}},
  };
  for (const Case &c : cases) {
    auto g = parse(c.text);
    ASSERT_TRUE(g);
    auto exe = build(*g, c.shapes, true);
    ASSERT_TRUE(static_cast<bool>(exe))
        << c.text << llvm::toString(exe.takeError());
    EXPECT_FALSE((*exe)->kernels().empty()) << c.text;
    EXPECT_TRUE((*exe)->plan().empty.empty()) << c.text;
    for (const KernelBuild &b : (*exe)->builds())
      EXPECT_EQ(b.log.find("warning"), std::string::npos) << c.text << b.log;
  }
}

// Only the batch and the output channels of a convolution may be 0 (PyTorch
// gives conv2d of 0 input channels 0 output channels, not the bias).
TEST(EmptyTensors, AConvolutionOfNoInputChannelsIsRefused) {
  auto conv = [](int64_t cin, int64_t cout) {
    return parse(fmt::format("graph c(x: f32[N, {0}, 5, 5]) {{\n"
                             "  param w: f32[{1}, {0}, 3, 3] = ones\n"
                             "  y = conv2d(x, w, padding=[1, 1])\n"
                             "  return y\n}}\n",
                             cin, cout));
  };
  auto g = parseGraph("graph c(x: f32[2, 0, 5, 5]) {\n"
                      "  param w: f32[4, 0, 3, 3] = ones\n"
                      "  y = conv2d(x, w, padding=[1, 1])\n  return y\n}\n",
                      "empty.kg");
  ASSERT_FALSE(static_cast<bool>(g));
  EXPECT_EQ(errorToString(g.takeError()),
            "empty.kg:3:7: error: conv2d: 'x' [2, 0, 5, 5] has an empty dim 1; "
            "only the batch and the output channels of a convolution may be "
            "empty");
  // An empty batch, or no output channels: no kernel.
  for (auto [n, cout] : {std::pair{0, 4}, std::pair{2, 0}}) {
    auto ok = conv(3, cout);
    ASSERT_TRUE(ok);
    auto exe = build(*ok, {{n, 3, 5, 5}}, false);
    ASSERT_TRUE(static_cast<bool>(exe)) << llvm::toString(exe.takeError());
    EXPECT_TRUE((*exe)->kernels().empty());
  }
}

TEST(EdgeShapes, SizesBeyondTheKernelsAreLocatedErrors) {
  struct Case {
    const char *text, *error;
  };
  const Case cases[] = {
      {"graph g(x: f32[2147483647, 4, 2147483647]) {\n"
       "  y = group_norm(x, groups=2)\n  return y\n}\n",
       "big.kg:1:9: error: 'x' f32[2147483647, 4, 2147483647] has more than "
       "2^60 elements; Kiln indexes tensors with 64-bit integers"},
      {"graph g(x: f32[1, 4, 5, 5]) {\n"
       "  param w: f32[4, 4, 3, 3] = ones\n"
       "  y = conv2d(x, w, stride=[1, 2147483647], padding=[0, 1073741823])\n"
       "  return y\n}\n",
       "big.kg:3:7: error: conv2d of [1, 4, 5, 5] into [1, 4, 3, 2] is too "
       "large for Kiln's GPU kernel: its sizes (an input or output image, "
       "padded input, dilated kernel, output pixels) must stay below 2^31"},
      // Checked here, not left to conv.cuh's static_assert (an NVRTC error).
      {"graph g(x: f32[1, 1, 23171, 23171]) {\n"
       "  param w: f32[4, 1, 1, 1] = ones\n  y = conv2d(x, w)\n"
       "  return y\n}\n",
       "big.kg:3:7: error: conv2d of [1, 1, 23171, 23171] into [1, 4, 23171, "
       "23171] is too large for Kiln's GPU kernel: its sizes (an input or "
       "output image, padded input, dilated kernel, output pixels) must stay "
       "below 2^31"},
      {"graph g(x: f32[1, 65536, 2, 2]) {\n"
       "  param w: f32[131072, 1, 1, 1] = ones\n"
       "  y = conv2d(x, w, groups=65536)\n  return y\n}\n",
       "big.kg:3:20: error: conv2d: 65536 groups are more than Kiln's GPU "
       "kernel takes (65535)"},
  };
  for (const Case &c : cases) {
    auto g = parseGraph(c.text, "big.kg");
    ASSERT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());
    auto exe = build(**g, {(*g)->inputs()[0]->shape().sizes()}, false);
    ASSERT_FALSE(static_cast<bool>(exe)) << c.text;
    EXPECT_EQ(errorToString(exe.takeError()), c.error);
  }
}

// A depthwise convolution of 16384 channels: its weight is small (147456
// elements) though Cin * Cout * 9 is above 2^31; conv.cuh bounded the
// latter and NVRTC failed it. And a chain adding 2000 inputs, which fused
// into one kernel took NVRTC 92 s: kernels read at most 256 tensors.
TEST(EdgeShapes, WideGraphsCompile) {
  auto dw = parse("graph g(x: f32[1, 16384, 8, 8]) {\n"
                  "  param w: f32[16384, 1, 3, 3] = ones\n"
                  "  y = conv2d(x, w, padding=1, groups=16384)\n"
                  "  return y\n}\n");
  ASSERT_TRUE(dw);
  auto exe = build(*dw, {{1, 16384, 8, 8}}, true);
  EXPECT_TRUE(static_cast<bool>(exe)) << llvm::toString(exe.takeError());
  std::string text = "graph g(";
  for (int i = 0; i < 2000; ++i)
    text += fmt::format("{}x{}: f32[3]", i ? ", " : "", i);
  text += ") {\n  s1 = add(x0, x1)\n";
  for (int i = 2; i < 2000; ++i)
    text += fmt::format("  s{} = add(s{}, x{})\n", i, i - 1, i);
  text += "  return s1999\n}\n";
  auto wide = parse(text);
  ASSERT_TRUE(wide);
  std::vector<llvm::SmallVector<int64_t, 6>> shapes(2000, {3});
  auto chain = build(*wide, shapes, true);
  ASSERT_TRUE(static_cast<bool>(chain)) << llvm::toString(chain.takeError());
  EXPECT_EQ((*chain)->kernels().size(), 8u);
  for (const FusionGroup &fg : (*chain)->plan().groups)
    EXPECT_LE(fg.inputs.size(), 257u);
}

// Names that C spells alike ("_x" and "%x" both become in__x) get distinct
// kernel parameters; NVRTC rejected the duplicate before.
TEST(EdgeShapes, NamesThatMeetInCStayDistinctParameters) {
  auto g = parse("graph g(_x: f32[4], %x: f32[4]) {\n"
                 "  y = sub(_x, %x)\n  return y\n}\n");
  ASSERT_TRUE(g);
  auto exe = build(*g, {{4}, {4}}, true);
  ASSERT_TRUE(static_cast<bool>(exe)) << llvm::toString(exe.takeError());
  const std::string &src = (*exe)->kernels()[0].source;
  EXPECT_NE(src.find("in__x,"), std::string::npos) << src;
  EXPECT_NE(src.find("in__x_2,"), std::string::npos) << src;
}

// The API checks what the CLI checks: an arch too old for the templates,
// host tensors that do not match the graph.
TEST(EdgeShapes, TheApiRefusesWhatTheCliRefuses) {
  auto g = parse("graph g(x: f32[N, 4]) {\n  y = group_norm(x, groups=2)\n"
                 "  return y\n}\n");
  ASSERT_TRUE(g);
  auto old = Executable::compile(*g, {{3, 4}}, offlineOptions(false, "sm_75"));
  ASSERT_FALSE(static_cast<bool>(old));
  EXPECT_EQ(errorToString(old.takeError()),
            "error: CompileOptions::arch: 'sm_75' is older than Kiln's kernels "
            "allow: they need sm_80 or newer (Ampere's warp reductions and "
            "asynchronous copies)");
  HostTensor x(DType::F32, {3, 4});
  auto twice = executeReference(*g, {x, x}, nullptr, "");
  ASSERT_FALSE(static_cast<bool>(twice));
  EXPECT_EQ(errorToString(twice.takeError()),
            "error: graph 'g' has 1 input but 2 tensors were given");
  x.bytes.resize(40);
  auto shortData = executeReference(*g, {x}, nullptr, "");
  ASSERT_FALSE(static_cast<bool>(shortData));
  EXPECT_EQ(errorToString(shortData.takeError()),
            "error: input 'x' holds 40 bytes, but its shape f32[3, 4] needs "
            "48");
}

} // namespace
} // namespace kiln
