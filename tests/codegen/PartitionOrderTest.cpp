//===- PartitionOrderTest.cpp - Launch order of large fusion plans --------===//
//
// No GPU needed. Graphs of thousands of nodes: every kernel comes after the
// kernels producing its inputs, ties go to the group with the earliest node,
// and fusion still merges what it should. (The partitioner once scanned
// lists linearly where it now keeps sets; these graphs took seconds then.)
//
//===----------------------------------------------------------------------===//
#include "Parser.h"
#include "fusion/Partition.h"

#include "llvm/ADT/DenseMap.h"

#include <gtest/gtest.h>

#include <string>

namespace kiln {
namespace {

std::unique_ptr<Graph> parse(const std::string &text) {
  auto g = parseGraph(text, "order.kg");
  EXPECT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());
  return g ? std::move(*g) : nullptr;
}

/// Checks that each group's inputs are produced by earlier groups (or are
/// graph inputs, params or literals) and returns how many groups there are.
size_t checkOrder(const Graph &g, const FusionPlan &plan) {
  llvm::DenseMap<const Value *, size_t> producedBy;
  for (size_t i = 0; i < plan.groups.size(); ++i)
    for (const Node *n : plan.groups[i].nodes())
      producedBy[n->result()] = i;
  for (size_t i = 0; i < plan.groups.size(); ++i)
    for (const Value *v : plan.groups[i].inputs) {
      auto it = producedBy.find(v);
      if (it != producedBy.end()) {
        EXPECT_LT(it->second, i) << "group " << i << " reads a value of group "
                                 << it->second << ", launched later";
      }
    }
  size_t nodes = 0;
  for (const FusionGroup &fg : plan.groups)
    nodes += fg.nodes().size();
  EXPECT_EQ(nodes, g.nodes().size()) << "every node in exactly one group";
  return plan.groups.size();
}

TEST(PartitionOrder, LongElementwiseChainIsCutInOrder) {
  // 20000 nodes of one unit each (OpInfo::compileWeight): the partitioner
  // cuts the chain every 1000 (its compile budget), in order.
  std::string text = "graph g(x: f32[8, 33]) {\n  v0 = add(x, x)\n";
  constexpr int kLen = 20000;
  for (int i = 1; i < kLen; ++i)
    text += "  v" + std::to_string(i) + " = mul(v" + std::to_string(i - 1) +
            ", x)\n";
  text += "  return v" + std::to_string(kLen - 1) + "\n}\n";
  auto g = parse(text);
  ASSERT_TRUE(g);
  FusionPlan plan = partitionGraph(*g);
  EXPECT_EQ(checkOrder(*g, plan), 20u);
  std::vector<const Node *> nodes;
  for (const FusionGroup &fg : plan.groups) {
    EXPECT_EQ(fg.prologue.size(), 1000u);
    llvm::append_range(nodes, fg.prologue);
  }
  ASSERT_EQ(nodes.size(), static_cast<size_t>(kLen));
  for (size_t i = 1; i < nodes.size(); ++i)
    ASSERT_EQ(nodes[i]->operand(0), nodes[i - 1]->result())
        << "the fused nodes stay in topological order";
}

TEST(PartitionOrder, ManyIndependentReductionsThenOneChain) {
  // Reductions s0..s{K-1} of x, then a0 = s0 + s1, a1 = a0 + s2, ...: the
  // chain joins s0's epilogue and reads the other reductions, so s0's
  // kernel must launch after those; a kernel reads at most 256 tensors, so
  // the chain goes on in the epilogue of a later reduction, whose kernel
  // launches after s0's.
  constexpr int kWide = 3000;
  std::string text = "graph g(x: f32[6, 37]) {\n";
  for (int i = 0; i < kWide; ++i)
    text += "  s" + std::to_string(i) + " = sum(x, dim=1, keepdim=true)\n";
  std::string prev = "s0";
  for (int i = 1; i < kWide; ++i) {
    std::string a = "a" + std::to_string(i);
    text += "  " + a + " = add(" + prev + ", s" + std::to_string(i) + ")\n";
    prev = a;
  }
  text += "  return " + prev + "\n}\n";
  auto g = parse(text);
  ASSERT_TRUE(g);
  FusionPlan plan = partitionGraph(*g);
  EXPECT_EQ(checkOrder(*g, plan), static_cast<size_t>(kWide));
  ASSERT_EQ(plan.groups.size(), static_cast<size_t>(kWide));
  EXPECT_EQ(plan.groups.front().anchor->result()->name(), "s1");
  size_t chained = 0, holders = 0;
  for (const FusionGroup &fg : plan.groups) {
    EXPECT_LE(fg.inputs.size(), 257u) << fg.anchor->result()->name();
    chained += fg.epilogue.size();
    holders += !fg.epilogue.empty();
  }
  EXPECT_EQ(chained, static_cast<size_t>(kWide - 1));
  // 2999 adds reading 2999 reductions: at least 12 kernels of 256 reads.
  EXPECT_GE(holders, 12u);
  EXPECT_LE(holders, 13u);
  EXPECT_FALSE(plan.groups.back().epilogue.empty());
}

TEST(PartitionOrder, ChainOfReductionsKeepsItsOrder) {
  // x -> s0 = sum -> v0 = x0 + s0 -> s1 = sum(v0) ...: each reduction
  // takes the add before it as a prologue or epilogue; the plan is a chain.
  constexpr int kLen = 2000;
  std::string text = "graph g(x: f32[5, 41]) {\n";
  std::string prev = "x";
  for (int i = 0; i < kLen; ++i) {
    std::string s = "s" + std::to_string(i), v = "v" + std::to_string(i);
    text += "  " + s + " = sum(" + prev + ", dim=1, keepdim=true)\n";
    text += "  " + v + " = add(" + prev + ", " + s + ")\n";
    prev = v;
  }
  text += "  return " + prev + "\n}\n";
  auto g = parse(text);
  ASSERT_TRUE(g);
  FusionPlan plan = partitionGraph(*g);
  const size_t groups = checkOrder(*g, plan);
  EXPECT_GE(groups, static_cast<size_t>(kLen));
  for (size_t i = 1; i < plan.groups.size(); ++i)
    ASSERT_LT(plan.groups[i - 1].nodes().front()->result()->id(),
              plan.groups[i].nodes().front()->result()->id())
        << "a chain launches in node order";
}

} // namespace
} // namespace kiln
