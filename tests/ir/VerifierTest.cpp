//===- VerifierTest.cpp - The verifier rejects malformed graphs -----------===//
#include "Verifier.h"
#include "Builder.h"

#include <gtest/gtest.h>

using namespace kiln;

namespace {

/// x -> y = relu(x) -> z = add(y, x) -> out; small enough to break by hand.
std::unique_ptr<Graph> smallGraph() {
  GraphBuilder b("small");
  Value *x = b.input("x", DType::F32, {"N", 4});
  Value *y = b.call(OpKind::Relu, {x}, {}, "y");
  Value *z = b.call(OpKind::Add, {y, x}, {}, "z");
  b.output(z);
  return cantFail(b.finish());
}

std::string verify(const Graph &g) { return errorToString(verifyGraph(g)); }

TEST(Verifier, AcceptsWellFormedGraphs) {
  std::unique_ptr<Graph> g = smallGraph();
  EXPECT_EQ(verify(*g), "");
}

TEST(Verifier, RejectsUseBeforeDefinition) {
  std::unique_ptr<Graph> g = smallGraph();
  g->moveNode(1, 0); // z = add(y, x) now precedes y
  EXPECT_EQ(verify(*g), "error: add node 'z' uses 'y' before it is defined "
                        "(nodes must be in topological order)");
}

TEST(Verifier, RejectsStaleTypes) {
  std::unique_ptr<Graph> g = smallGraph();
  g->setType(*g->lookup("y"), TensorType{DType::F32, {"N", 5}});
  EXPECT_EQ(verify(*g), "error: 'y' is recorded as f32[N, 5] but relu gives "
                        "f32[N, 4]");
  std::unique_ptr<Graph> h = smallGraph();
  h->setType(*h->lookup("z"), TensorType{DType::F16, {"N", 4}});
  EXPECT_EQ(verify(*h), "error: 'z' is recorded as f16[N, 4] but add gives "
                        "f32[N, 4]");
}

TEST(Verifier, RejectsBadOperands) {
  std::unique_ptr<Graph> g = smallGraph();
  g->setOperand(*g->nodes()[0], 0, nullptr);
  EXPECT_EQ(verify(*g), "error: relu node 'y' lacks its operand 'input'");

  g = smallGraph();
  g->setOperand(*g->nodes()[0], 0, g->addLiteral(1.0, false));
  EXPECT_EQ(verify(*g), "error: relu node 'y': operand 'input' cannot be a "
                        "number");

  g = smallGraph();
  g->setOperand(*g->nodes()[1], 0, g->addLiteral(1.0, false));
  g->setOperand(*g->nodes()[1], 1, g->addLiteral(2.0, false));
  EXPECT_EQ(verify(*g), "error: add node 'z' has no tensor operand");

  g = smallGraph();
  g->setOperand(*g->nodes()[0], 1, g->lookup("x"));
  EXPECT_EQ(verify(*g), "error: relu node 'y' has 2 operand slots, expected 1");

  g = smallGraph();
  Graph other("other");
  g->setOperand(*g->nodes()[0], 0, *other.addInput("q", {DType::F32, {1}}));
  EXPECT_EQ(verify(*g), "error: relu node 'y' uses a value of another graph");
}

TEST(Verifier, RejectsBadAttributes) {
  std::unique_ptr<Graph> g = smallGraph();
  Node &relu = *g->nodes()[0];
  g->setAttr(relu, "alpha", Attr::ofFloat(1));
  EXPECT_EQ(verify(*g), "error: relu has no attribute 'alpha'");

  GraphBuilder b("gn");
  Value *x = b.input("x", DType::F32, {2, 8});
  b.output(b.groupNorm(x, 4));
  std::unique_ptr<Graph> gn = cantFail(b.finish());
  Node &n = *gn->nodes()[0];
  gn->setAttr(n, "groups", Attr::ofFloat(4));
  EXPECT_EQ(verify(*gn),
            "error: group_norm: attribute 'groups' must be int, not float");
  gn->setAttr(n, "groups", Attr::ofInt(3));
  EXPECT_EQ(verify(*gn),
            "error: group_norm: 8 channels of 'x' [2, 8] do not split into 3 "
            "groups; groups must divide the channel count");
}

TEST(Verifier, RejectsUnbindableParamDims) {
  GraphBuilder b("p");
  Value *x = b.input("x", DType::F32, {"N", 4});
  Value *w = b.param("w", DType::F32, {"K", 4});
  b.output(b.linear(x, w));
  std::unique_ptr<Graph> g = cantFail(b.finish());
  EXPECT_EQ(verify(*g),
            "error: parameter 'w' uses the named dim 'K', which no input has, "
            "so nothing could bind it; use a fixed size or add it to an "
            "input's shape");
}

TEST(Builder, ReportsTheFirstError) {
  GraphBuilder b("bad");
  Value *x = b.input("x", DType::F32, {3, 4});
  Value *y = b.add(x, b.input("q", DType::F32, {5, 4}));
  EXPECT_EQ(y, nullptr);
  Value *z = b.unary(OpKind::Relu, y); // depends on a failed value
  EXPECT_EQ(z, nullptr);
  b.output(z);
  llvm::Expected<std::unique_ptr<Graph>> g = b.finish();
  ASSERT_FALSE(static_cast<bool>(g));
  EXPECT_EQ(errorToString(g.takeError()),
            "error: add: cannot broadcast [3, 4] with [5, 4]: dimension 0 is "
            "3 in one and 5 in the other (each pair of dims, aligned on the "
            "right, must be equal or 1)");
  GraphBuilder empty("empty");
  empty.input("x", DType::F32, {1});
  llvm::Expected<std::unique_ptr<Graph>> e = empty.finish();
  ASSERT_FALSE(static_cast<bool>(e));
  EXPECT_EQ(errorToString(e.takeError()),
            "error: graph 'empty' has no outputs; call output() on the values "
            "it returns");
  // A second finish(), failed or not, is an error, not an empty one.
  llvm::Expected<std::unique_ptr<Graph>> again = b.finish();
  ASSERT_FALSE(static_cast<bool>(again));
  EXPECT_EQ(errorToString(again.takeError()),
            "error: GraphBuilder::finish() was already called; a builder "
            "makes one graph");
}

// Misuse that used to crash or give another graph's answer: a value of
// another builder, a null output (a failed lookup), calls after finish(),
// reduce() of an op that does not reduce.
TEST(Builder, RefusesValuesItDoesNotOwn) {
  GraphBuilder a("a"), b("b");
  Value *r = a.unary(OpKind::Relu, a.input("x", DType::F32, {3}));
  Value *xb = b.input("x", DType::F32, {3});
  b.output(b.unary(OpKind::Exp, xb));
  b.output(r);
  llvm::Expected<std::unique_ptr<Graph>> g = b.finish();
  ASSERT_FALSE(static_cast<bool>(g));
  EXPECT_EQ(errorToString(g.takeError()),
            "error: output '%0' belongs to another graph");

  GraphBuilder c("c");
  Value *xc = c.input("x", DType::F32, {3});
  EXPECT_EQ(c.add(xc, r), nullptr);
  g = c.finish();
  ASSERT_FALSE(static_cast<bool>(g));
  EXPECT_EQ(errorToString(g.takeError()),
            "error: add: operand 'other' belongs to another graph");

  GraphBuilder d("d");
  d.input("x", DType::F32, {3});
  d.output(d.graph().lookup("typo"));
  g = d.finish();
  ASSERT_FALSE(static_cast<bool>(g));
  EXPECT_EQ(errorToString(g.takeError()),
            "error: a graph output must be a value, not null (a failed "
            "lookup?)");

  GraphBuilder e("e");
  Value *xe = e.input("x", DType::F32, {3});
  EXPECT_EQ(e.reduce(OpKind::Exp, xe), nullptr);
  g = e.finish();
  ASSERT_FALSE(static_cast<bool>(g));
  EXPECT_EQ(errorToString(g.takeError()),
            "error: GraphBuilder::reduce takes min, max, sum, mean or "
            "logsumexp, not exp");

  GraphBuilder f("f");
  f.output(f.unary(OpKind::Exp, f.input("x", DType::F32, {3})));
  ASSERT_TRUE(static_cast<bool>(f.finish()));
  EXPECT_EQ(f.input("y", DType::F32, {3}), nullptr);
  f.output(nullptr);
  g = f.finish();
  ASSERT_FALSE(static_cast<bool>(g));
  EXPECT_EQ(errorToString(g.takeError()),
            "error: GraphBuilder::finish() was already called; a builder "
            "makes one graph");
}

} // namespace
