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

// roundToStorage: each f16 or bf16 result is rounded to its dtype, and a
// wider tensor operand of such an op is rounded to the op's dtype first,
// as PyTorch's eager ops do; literals stay exact. Off, nothing is rounded.
TEST(RefEvaluator, RoundToStorageRoundsEachHalfResult) {
  GraphBuilder b("half");
  Value *x = b.input("x", DType::F16, {2, 3});
  Value *s = b.input("s", DType::F32, {});
  Value *e = b.unary(OpKind::Exp, x); // f16
  Value *m = b.mul(e, s);             // f16: s is rounded to f16 first
  Value *a = b.add(m, 0.1);           // f16: 0.1 stays exact
  Value *w = b.add(a, b.input("y", DType::F32, {2, 3})); // f32
  b.output(a);
  b.output(w);
  auto g = finish(b);
  ASSERT_TRUE(g);
  RefTensor xs = randomTensor({2, 3}, 7, -2, 2, DType::F16);
  for (double &v : xs.data)
    v = roundToDType(v, DType::F16);
  RefTensor ss = RefTensor::scalar(DType::F32, 1.0 / 3.0);
  RefTensor ys = randomTensor({2, 3}, 8);
  EvalOptions opts;
  opts.roundToStorage = true;
  auto out = evaluate(*g, {xs, ss, ys}, {}, opts);
  ASSERT_TRUE(static_cast<bool>(out)) << errorToString(out.takeError());
  auto exact = evaluate(*g, {xs, ss, ys}, {});
  ASSERT_TRUE(static_cast<bool>(exact)) << errorToString(exact.takeError());
  auto r16 = [](double v) { return roundToDType(v, DType::F16); };
  double differ = 0;
  for (size_t i = 0; i < xs.data.size(); ++i) {
    double want = r16(r16(r16(std::exp(xs.data[i])) * r16(1.0 / 3.0)) + 0.1);
    EXPECT_EQ((*out)[0].data[i], want) << i;
    EXPECT_EQ((*out)[1].data[i], want + ys.data[i]) << i;
    double plain = std::exp(xs.data[i]) / 3.0 + 0.1;
    EXPECT_DOUBLE_EQ((*exact)[0].data[i], plain) << i;
    differ = std::max(differ, std::abs(want - plain));
  }
  EXPECT_GT(differ, 0) << "rounding to f16 must show on these values";
}

// roundF32: each f32 result is rounded to f32 (PyTorch's eager f32 ops),
// so a sum near 1e4 loses its low bits before the next op reads it; off,
// it keeps them.
TEST(RefEvaluator, RoundF32RoundsEachF32Result) {
  GraphBuilder b("f32");
  Value *x = b.input("x", DType::F32, {4});
  Value *y = b.input("y", DType::F32, {4});
  Value *p = b.add(x, y);        // rounded: x near 1e4
  Value *d = b.add(p, -10000.0); // exact in f32 once p is
  b.output(d);
  auto g = finish(b);
  ASSERT_TRUE(g);
  RefTensor xs = randomTensor({4}, 3, 9999, 10001);
  RefTensor ys = randomTensor({4}, 4, -1, 1);
  for (RefTensor *t : {&xs, &ys})
    for (double &v : t->data)
      v = static_cast<float>(v); // f32 inputs
  EvalOptions opts;
  opts.roundF32 = true;
  auto out = evaluate(*g, {xs, ys}, {}, opts);
  ASSERT_TRUE(static_cast<bool>(out)) << errorToString(out.takeError());
  auto exact = evaluate(*g, {xs, ys}, {});
  ASSERT_TRUE(static_cast<bool>(exact)) << errorToString(exact.takeError());
  double differ = 0;
  for (size_t i = 0; i < xs.data.size(); ++i) {
    const float sum =
        static_cast<float>(xs.data[i]) + static_cast<float>(ys.data[i]);
    EXPECT_EQ((*out)[0].data[i], static_cast<double>(sum) - 10000.0) << i;
    EXPECT_EQ((*exact)[0].data[i], xs.data[i] + ys.data[i] - 10000.0) << i;
    differ =
        std::max(differ, std::abs((*out)[0].data[i] - (*exact)[0].data[i]));
  }
  EXPECT_GT(differ, 1e-6) << "rounding to f32 must show near 1e4";
}

TEST(RefEvaluator, RoundToDTypeMatchesTheFormats) {
  // f16 has 10 mantissa bits: ties go to the even neighbour.
  EXPECT_EQ(roundToDType(1.0 + 1.0 / 2048, DType::F16), 1.0);
  EXPECT_EQ(roundToDType(1.0 + 3.0 / 2048, DType::F16), 1.0 + 1.0 / 512);
  EXPECT_EQ(roundToDType(70000.0, DType::F16), INFINITY);
  EXPECT_EQ(roundToDType(1.0 + 1.0 / 256, DType::BF16), 1.0);
  EXPECT_EQ(roundToDType(3e38, DType::BF16), std::ldexp(226.0, 120));
  EXPECT_TRUE(std::isnan(roundToDType(NAN, DType::BF16)));
  EXPECT_EQ(roundToDType(0.1, DType::F32), 0.1); // f32: left as is
}

// i64 values are held in double, exact only within +-(2^53 - 1): an input,
// a param or a result beyond is refused, never returned rounded (2^53 + 1
// would come back as 2^53). Within the range integer arithmetic is exact.
TEST(RefEvaluator, RefusesI64ValuesBeyondExactDoubles) {
  constexpr double kMax = 9007199254740991.0; // 2^53 - 1
  GraphBuilder b("ints");
  Value *x = b.input("x", DType::I64, {3});
  Value *w = b.param("w", DType::I64, {3});
  b.output(b.add(x, w));
  std::unique_ptr<Graph> g = finish(b);
  ASSERT_TRUE(g);
  auto ints = [](std::vector<double> v) {
    RefTensor t(DType::I64, {static_cast<int64_t>(v.size())});
    t.data = std::move(v);
    return t;
  };
  llvm::Expected<std::vector<RefTensor>> ok =
      evaluate(*g, {ints({kMax - 7, -kMax, 5})}, {ints({7, 0, -3})});
  ASSERT_TRUE(bool(ok)) << errorToString(ok.takeError());
  EXPECT_EQ((*ok)[0].data, std::vector<double>({kMax, -kMax, 2}));

  std::string msg = evalError(*g, {ints({1, 2, kMax + 1})}, {ints({0, 0, 0})});
  EXPECT_NE(msg.find("input 'x' has a value beyond +-(2^53 - 1) at element 2 "
                     "of [3] (about 9007199254740992)"),
            std::string::npos)
      << msg;
  msg = evalError(*g, {ints({1, 2, 3})}, {ints({0, -kMax - 1, 0})});
  EXPECT_NE(msg.find("param 'w' has a value beyond"), std::string::npos) << msg;
  // A result of 2^53 is refused though exact here: it is also what 2^53 + 1
  // rounds to.
  msg = evalError(*g, {ints({1, kMax, 3})}, {ints({0, 1, 0})});
  EXPECT_NE(msg.find("add: its result"), std::string::npos) << msg;
  EXPECT_NE(msg.find("at element 1 of [3]"), std::string::npos) << msg;
}
