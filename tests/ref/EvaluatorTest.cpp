//===- EvaluatorTest.cpp - The graph-level reference evaluator ------------===//
#include "ref/RefTestUtil.h"

using namespace kiln;
using namespace kiln::test;

namespace {
std::unique_ptr<Graph> finish(GraphBuilder &b) {
  llvm::Expected<std::unique_ptr<Graph>> g = b.finish();
  if (!g) {
    ADD_FAILURE() << errorToString(g.takeError());
    return nullptr;
  }
  return std::move(*g);
}

std::string evalError(const Graph &g, std::vector<RefTensor> inputs,
                      std::vector<RefTensor> params = {},
                      EvalOptions opts = {}) {
  llvm::Expected<std::vector<RefTensor>> out =
      evaluate(g, inputs, params, opts);
  if (out)
    return "<no error>";
  return errorToString(out.takeError());
}
} // namespace

TEST(RefEvaluator, SharedValuesAndMultipleOutputs) {
  GraphBuilder b("dag");
  Value *x = b.input("x", DType::F32, {3, 4});
  Value *y = b.sub(x, 0.5);
  Value *twice = b.add(y, y);
  Value *swishy = b.mul(y, b.unary(OpKind::Sigmoid, y));
  b.output(twice);
  b.output(swishy);
  b.output(y);
  b.output(x);
  RefTensor xs = randomTensor({3, 4}, 61);
  std::vector<RefTensor> out = run(b, {xs});
  ASSERT_EQ(out.size(), 4u);
  RefTensor want0 = xs, want1 = xs, want2 = xs;
  for (size_t i = 0; i < xs.data.size(); ++i) {
    double v = xs.data[i] - 0.5;
    want0.data[i] = 2 * v;
    want1.data[i] = v / (1 + std::exp(-v));
    want2.data[i] = v;
  }
  expectClose(out[0], want0);
  expectClose(out[1], want1, 1e-14);
  expectClose(out[2], want2);
  expectClose(out[3], xs);
}

TEST(RefEvaluator, WrongInputShape) {
  GraphBuilder b("g");
  Value *x = b.input("x", DType::F32, {2, 4});
  b.output(b.unary(OpKind::Exp, x));
  std::unique_ptr<Graph> g = finish(b);
  ASSERT_TRUE(g);
  EXPECT_EQ(evalError(*g, {randomTensor({2, 3}, 62)}),
            "error: input 'x' has shape [2, 3] but the graph declares [2, 4]");
  EXPECT_EQ(evalError(*g, {}), "error: the graph declares 1 inputs but 0 "
                               "were given");
}

TEST(RefEvaluator, WrongParamShape) {
  GraphBuilder b("g");
  Value *x = b.input("x", DType::F32, {2, 4});
  Value *w = b.param("w", DType::F32, {3, 4});
  b.output(b.linear(x, w));
  std::unique_ptr<Graph> g = finish(b);
  ASSERT_TRUE(g);
  EXPECT_EQ(
      evalError(*g, {randomTensor({2, 4}, 63)}, {randomTensor({4, 3}, 64)}),
      "error: param 'w' has shape [4, 3] but the graph declares [3, 4]");
}

TEST(RefEvaluator, NamedDimsNeedSpecialisation) {
  GraphBuilder b("g");
  Value *x = b.input("x", DType::F32, {"N", 4});
  b.output(b.unary(OpKind::Exp, x));
  std::unique_ptr<Graph> g = finish(b);
  ASSERT_TRUE(g);
  std::string msg = evalError(*g, {randomTensor({2, 4}, 65)});
  EXPECT_NE(msg.find("named dims"), std::string::npos) << msg;
  EXPECT_NE(msg.find("specialise"), std::string::npos) << msg;
}

TEST(RefEvaluator, RefusesOverMemoryBudget) {
  // x, exp(x) and exp(x)*2 are each 8 MB; exp(x) is freed only after the
  // mul, so the peak is 24 MB.
  GraphBuilder b("big");
  Value *x = b.input("x", DType::F32, {1000, 1000});
  b.output(b.mul(b.unary(OpKind::Exp, x), 2.0));
  std::unique_ptr<Graph> g = finish(b);
  ASSERT_TRUE(g);
  EvalOptions opts;
  opts.maxBytes = 20'000'000;
  std::string msg =
      evalError(*g, {RefTensor(DType::F32, {1000, 1000})}, {}, opts);
  EXPECT_NE(msg.find("needs 22.9 MiB (24000008 bytes)"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("limit of 19.1 MiB (20000000 bytes)"), std::string::npos)
      << msg;
  opts.maxBytes = 24'000'008;
  llvm::Expected<std::vector<RefTensor>> ok =
      evaluate(*g, {RefTensor(DType::F32, {1000, 1000})}, {}, opts);
  ASSERT_TRUE(bool(ok)) << errorToString(ok.takeError());
  EXPECT_EQ((*ok)[0].data[12345], 2.0);
}
