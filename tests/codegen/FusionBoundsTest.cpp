//===- FusionBoundsTest.cpp - Fusion group bounds and horizontal fusion ---===//
//
// No GPU needed. A chain of elementwise nodes is cut where its kernel would
// exceed the partitioner's compile budget (the sum of OpInfo::compileWeight,
// 1000), so NVRTC's time stays about linear in the chain's length; pointwise
// siblings that read one tensor share kernels of up to 256 parameters
// (inputs and outputs) instead of one kernel each; no merge makes a group
// depend on itself. One horizontally fused kernel is compiled with NVRTC.
// (tests/gpu runs pw_siblings_300 and pw_chain_1200_cut on a GPU.)
//
//===----------------------------------------------------------------------===//
#include "Engine.h"
#include "OfflineOptions.h"
#include "Parser.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <memory>
#include <set>

namespace kiln {
namespace {

constexpr unsigned kMaxCost = 1000; // Partitioner::kMaxCost
constexpr size_t kMaxParams = 256;  // Partitioner::kMaxReads

std::unique_ptr<Executable>
compileText(const std::string &kg,
            llvm::ArrayRef<llvm::SmallVector<int64_t, 6>> in,
            bool generateOnly = true) {
  auto g = parseGraph(kg, "bounds.kg");
  EXPECT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());
  if (!g)
    return nullptr;
  auto exe = Executable::compile(**g, in, offlineOptions(generateOnly));
  EXPECT_TRUE(static_cast<bool>(exe)) << llvm::toString(exe.takeError());
  return exe ? std::move(*exe) : nullptr;
}

unsigned costOf(const FusionGroup &fg) {
  unsigned c = 0;
  for (const Node *n : fg.nodes())
    c += isElementwise(n->op()) ? n->info().compileWeight : 0;
  return c;
}

/// Every group reads only graph inputs and values of earlier groups, and
/// every node is in exactly one group.
void expectTopological(const Executable &exe) {
  std::set<const Value *> ready;
  size_t nodes = 0;
  for (const FusionGroup &fg : exe.plan().groups) {
    for (const Value *v : fg.inputs)
      EXPECT_TRUE(!v->def() || ready.count(v))
          << v->name() << " is read before its group ran";
    for (const Value *v : fg.outputs)
      ready.insert(v);
    nodes += fg.nodes().size();
  }
  EXPECT_EQ(nodes, exe.graph().nodes().size());
}

/// The generator of bench/fusion_stress.py: x through `n` nodes cycling
/// add, mul (each also reading x) and sigmoid.
std::string chain(int n) {
  std::string kg = "graph c(x: f32[4, 8]) {\n  p0 = add(x, 1.5)\n";
  const char *const steps[] = {"mul(p{}, x)", "sigmoid(p{})", "add(p{}, x)"};
  for (int i = 1; i < n; ++i)
    kg += fmt::format("  p{} = ", i) +
          fmt::format(fmt::runtime(steps[i % 3]), i - 1) + "\n";
  return kg + fmt::format("  return p{}\n}}\n", n - 1);
}

/// `n` siblings y_i = add(x, i), each returned.
std::string siblings(int n, const std::string &shape = "4, 8") {
  std::string kg = "graph s(x: f32[" + shape + "]) {\n", ret;
  for (int i = 0; i < n; ++i) {
    kg += fmt::format("  y{} = add(x, {})\n", i, i);
    ret += fmt::format("{}y{}", i ? ", " : "", i);
  }
  return kg + "  return " + ret + "\n}\n";
}

TEST(FusionBounds, LongChainIsCutWithinTheBudget) {
  auto exe = compileText(chain(2000), {{4, 8}});
  ASSERT_TRUE(exe);
  const auto &groups = exe->plan().groups;
  // 2000 nodes of 2 units on average: at least 4 kernels, and no more than
  // a few beyond that (each cut kernel is nearly full).
  EXPECT_GE(groups.size(), 4u);
  EXPECT_LE(groups.size(), 6u);
  for (const FusionGroup &fg : groups) {
    EXPECT_EQ(fg.kind, GroupKind::Pointwise);
    EXPECT_LE(costOf(fg), kMaxCost);
    EXPECT_LE(fg.inputs.size(), kMaxParams);
  }
  expectTopological(*exe);
}

TEST(FusionBounds, ShortChainStaysOneKernel) {
  auto exe = compileText(chain(400), {{4, 8}});
  ASSERT_TRUE(exe);
  EXPECT_EQ(exe->plan().groups.size(), 1u);
}

TEST(FusionBounds, SiblingsShareKernels) {
  auto exe = compileText(siblings(3000), {{4, 8}});
  ASSERT_TRUE(exe);
  const auto &groups = exe->plan().groups;
  // x and 255 outputs per kernel: ceil(3000 / 255) = 12 kernels, not 3000.
  EXPECT_EQ(groups.size(), 12u);
  size_t outputs = 0;
  for (const FusionGroup &fg : groups) {
    EXPECT_LE(fg.inputs.size() + fg.outputs.size(), kMaxParams);
    outputs += fg.outputs.size();
  }
  EXPECT_EQ(outputs, 3000u);
  expectTopological(*exe);
}

TEST(FusionBounds, SiblingsOfOtherShapesStayApart) {
  // add(x, y) runs over [4, 8] and add(y, 1) over [8]: both read y.
  auto exe = compileText("graph s(x: f32[4, 8], y: f32[8]) {\n"
                         "  a = add(x, y)\n  b = add(y, 1.0)\n"
                         "  c = mul(x, 2.0)\n  return a, b, c\n}\n",
                         {{4, 8}, {8}});
  ASSERT_TRUE(exe);
  ASSERT_EQ(exe->plan().groups.size(), 2u);
  // a and c (one shape, both read x) share a kernel; b is alone.
  EXPECT_EQ(exe->plan().groups[0].outputs.size(), 2u);
  EXPECT_EQ(exe->plan().groups[1].outputs.size(), 1u);
}

TEST(FusionBounds, SiblingThatDependsOnTheOtherStaysApart) {
  // d and c both read x, but c needs the sum of d: one kernel for both
  // would read its own result. c runs after the reduction.
  auto exe = compileText("graph s(x: f32[4, 8]) {\n  d = add(x, 1.0)\n"
                         "  s = sum(d, dim=1, keepdim=true)\n"
                         "  c = mul(x, s)\n  e = mul(x, 3.0)\n"
                         "  return d, c, e\n}\n",
                         {{4, 8}});
  ASSERT_TRUE(exe);
  const auto &groups = exe->plan().groups;
  ASSERT_EQ(groups.size(), 3u);
  // d and e (independent siblings) fuse; the sum; then c.
  EXPECT_EQ(groups[0].describe(), "pw_add_mul");
  EXPECT_EQ(groups[1].kind, GroupKind::Reduction);
  EXPECT_EQ(groups[2].describe(), "pw_mul");
  expectTopological(*exe);
}

TEST(FusionBounds, HorizontallyFusedKernelCompiles) {
  // 70 siblings, some reading a broadcast y: more than kOutlineNodes, so
  // one outlined function returns all 70 values.
  std::string kg = "graph s(x: f32[6, 12], y: f32[12]) {\n", ret;
  for (int i = 0; i < 70; ++i) {
    kg += i % 2 ? fmt::format("  y{} = mul(x, y)\n", i)
                : fmt::format("  y{0} = add(x, {0})\n", i);
    ret += fmt::format("{}y{}", i ? ", " : "", i);
  }
  kg += "  return " + ret + "\n}\n";
  auto exe = compileText(kg, {{6, 12}, {12}}, /*generateOnly=*/false);
  ASSERT_TRUE(exe);
  ASSERT_EQ(exe->kernels().size(), 1u);
  const std::string &src = exe->kernels().front().source;
  EXPECT_NE(src.find("float o[70];"), std::string::npos) << src;
  EXPECT_NE(src.find("kiln::storeVec<4>(out_y69 + ii"), std::string::npos)
      << src;
  EXPECT_EQ(exe->compiledKernels(), 1u);
}

} // namespace
} // namespace kiln
