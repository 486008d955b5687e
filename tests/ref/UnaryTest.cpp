//===- UnaryTest.cpp - Reference evaluation of unary ops ------------------===//
#include "ref/RefTestUtil.h"

using namespace kiln;
using namespace kiln::test;

namespace {

const double kInf = INFINITY, kNaN = NAN;
// The points every unary op is evaluated at.
const std::vector<double> kPoints = {-3.7, -1.0, -0.25, 0.0,  0.5, 1.0,
                                     2.9,  25.0, -kInf, kInf, kNaN};

/// Evaluates `op` (with `attrs`) on kPoints as an f32 [11] input.
std::vector<double> evalAt(OpKind op, llvm::ArrayRef<NamedAttr> attrs = {},
                           DType dt = DType::F32) {
  GraphBuilder b("unary");
  Value *x = b.input("x", dt, {static_cast<int64_t>(kPoints.size())});
  b.output(b.call(op, {x}, attrs));
  std::vector<RefTensor> out =
      run(b, {tensorOf({static_cast<int64_t>(kPoints.size())}, kPoints, dt)});
  return out.empty() ? std::vector<double>() : out[0].data;
}

/// Checks evalAt(op) against `want` at every point.
void expectPoints(OpKind op, const std::vector<double> &want,
                  llvm::ArrayRef<NamedAttr> attrs = {}) {
  std::vector<double> got = evalAt(op, attrs);
  ASSERT_EQ(got.size(), kPoints.size());
  expectClose(tensorOf({11}, got), tensorOf({11}, want), 1e-14, 1e-300);
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

} // namespace

TEST(RefUnary, SimpleMath) {
  std::vector<double> neg, abs, exp, log, sqrt, rsqrt;
  for (double x : kPoints) {
    neg.push_back(-x);
    abs.push_back(std::fabs(x));
    exp.push_back(std::exp(x));
    log.push_back(std::log(x));
    sqrt.push_back(std::sqrt(x));
    rsqrt.push_back(1.0 / std::sqrt(x));
  }
  expectPoints(OpKind::Neg, neg);
  expectPoints(OpKind::Abs, abs);
  expectPoints(OpKind::Exp, exp);
  expectPoints(OpKind::Log, log);
  expectPoints(OpKind::Sqrt, sqrt);
  expectPoints(OpKind::Rsqrt, rsqrt);
  // Hand-checked corners.
  std::vector<double> l = evalAt(OpKind::Log), r = evalAt(OpKind::Rsqrt);
  EXPECT_TRUE(std::isnan(l[0]));          // log(-3.7)
  EXPECT_EQ(l[3], -kInf);                 // log(0)
  EXPECT_EQ(r[3], kInf);                  // rsqrt(0)
  EXPECT_EQ(evalAt(OpKind::Exp)[8], 0.0); // exp(-inf)
}

TEST(RefUnary, ReluFamily) {
  expectPoints(OpKind::Relu, {0, 0, 0, 0, 0.5, 1.0, 2.9, 25.0, 0, kInf, kNaN});
  expectPoints(OpKind::LeakyRelu,
               {-0.37, -0.1, -0.025, 0, 0.5, 1.0, 2.9, 25.0, -kInf, kInf, kNaN},
               {{"negative_slope", Attr::ofFloat(0.1), {}}});
  // Default slope 0.01.
  EXPECT_DOUBLE_EQ(evalAt(OpKind::LeakyRelu)[1], -0.01);
}

TEST(RefUnary, SigmoidTanhSwish) {
  expectPoints(OpKind::Sigmoid,
               {sigmoid(-3.7), sigmoid(-1), sigmoid(-0.25), 0.5, sigmoid(0.5),
                0.7310585786300049, sigmoid(2.9), sigmoid(25), 0.0, 1.0, kNaN});
  std::vector<double> tanh;
  for (double x : kPoints)
    tanh.push_back(std::tanh(x));
  expectPoints(OpKind::Tanh, tanh);
  EXPECT_EQ(tanh[8], -1.0);
  std::vector<double> sw = evalAt(OpKind::Swish);
  EXPECT_NEAR(sw[5], 0.7310585786300049, 1e-15);
  EXPECT_NEAR(sw[0], -3.7 * sigmoid(-3.7), 1e-15);
  EXPECT_EQ(sw[3], 0.0);
  EXPECT_EQ(sw[9], kInf);
  EXPECT_TRUE(std::isnan(sw[10]));
}

TEST(RefUnary, Gelu) {
  std::vector<double> erfForm = evalAt(OpKind::Gelu);
  EXPECT_NEAR(erfForm[5], 0.8413447460685429, 1e-15);
  EXPECT_NEAR(erfForm[1], -(1.0 - 0.8413447460685429), 1e-15);
  EXPECT_EQ(erfForm[3], 0.0);
  EXPECT_TRUE(std::isnan(erfForm[10]));
  std::vector<double> tanhForm =
      evalAt(OpKind::Gelu, {{"approximate", Attr::ofString("tanh"), {}}});
  EXPECT_NEAR(tanhForm[5], 0.8411919906082768, 1e-15);
  EXPECT_NEAR(tanhForm[7], 25.0, 1e-12);
  EXPECT_TRUE(std::isnan(tanhForm[10]));
}

TEST(RefUnary, ClampHardtanh) {
  expectPoints(OpKind::Hardtanh, {-1, -1, -0.25, 0, 0.5, 1, 1, 1, -1, 1, kNaN});
  expectPoints(OpKind::Hardtanh,
               {-0.5, -0.5, -0.25, 0, 0.5, 1, 2, 2, -0.5, 2, kNaN},
               {{"min_val", Attr::ofFloat(-0.5), {}},
                {"max_val", Attr::ofFloat(2.0), {}}});
  expectPoints(OpKind::Clamp,
               {-1, -1, -0.25, 0, 0.5, 1, 2.9, 25, -1, kInf, kNaN},
               {{"min", Attr::ofFloat(-1.0), {}}});
  expectPoints(OpKind::Clamp,
               {-3.7, -1, -0.25, 0, 0.5, 1, 2.9, 3, -kInf, 3, kNaN},
               {{"max", Attr::ofFloat(3.0), {}}});
  expectPoints(
      OpKind::Clamp, {0, 0, 0, 0, 0.5, 1, 2.9, 3, 0, 3, kNaN},
      {{"min", Attr::ofFloat(0.0), {}}, {"max", Attr::ofFloat(3.0), {}}});
  // NaN bounds, as PyTorch 2.11 (measured): a lone one is ignored; with two
  // bounds (hardtanh always has two), every result is NaN.
  expectPoints(OpKind::Clamp, kPoints, {{"min", Attr::ofFloat(kNaN), {}}});
  expectPoints(OpKind::Clamp, kPoints, {{"max", Attr::ofFloat(kNaN), {}}});
  const std::vector<double> allNaN(kPoints.size(), kNaN);
  expectPoints(
      OpKind::Clamp, allNaN,
      {{"min", Attr::ofFloat(-1.0), {}}, {"max", Attr::ofFloat(kNaN), {}}});
  expectPoints(OpKind::Hardtanh, allNaN,
               {{"min_val", Attr::ofFloat(kNaN), {}},
                {"max_val", Attr::ofFloat(1.0), {}}});
  expectPoints(OpKind::Hardtanh, allNaN,
               {{"min_val", Attr::ofFloat(-1.0), {}},
                {"max_val", Attr::ofFloat(kNaN), {}}});
}

TEST(RefUnary, HardswishMishSoftplus) {
  std::vector<double> hs = evalAt(OpKind::Hardswish);
  EXPECT_EQ(hs[0], -0.0); // below -3
  EXPECT_NEAR(hs[1], -1.0 * 2.0 / 6.0, 1e-15);
  EXPECT_NEAR(hs[4], 0.5 * 3.5 / 6.0, 1e-15);
  EXPECT_EQ(hs[7], 25.0); // above 3
  EXPECT_TRUE(std::isnan(hs[10]));
  // x * 6 overflows f32 before the / 6, in PyTorch's formula, for |x| above
  // FLT_MAX / 6: inf, as PyTorch and the GPU give. In f64 it does not.
  for (DType dt : {DType::F32, DType::F64}) {
    GraphBuilder b("hs");
    Value *x = b.input("x", dt, {3});
    b.output(b.call(OpKind::Hardswish, {x}));
    std::vector<RefTensor> out =
        run(b, {tensorOf({3}, {3.4e38, -3.4e38, 5e37}, dt)});
    ASSERT_EQ(out.size(), 1u);
    if (dt == DType::F32) {
      EXPECT_EQ(out[0].data[0], kInf);
      EXPECT_EQ(out[0].data[1], -0.0); // below -3: x * 0
    } else {
      EXPECT_EQ(out[0].data[0], 3.4e38);
    }
    EXPECT_NEAR(out[0].data[2], 5e37, 5e37 * 1e-15);
  }

  std::vector<double> mish = evalAt(OpKind::Mish);
  EXPECT_NEAR(mish[5], 0.8650983882673103, 1e-15);
  EXPECT_EQ(mish[3], 0.0);
  EXPECT_EQ(mish[9], kInf);
  EXPECT_TRUE(std::isnan(mish[10]));

  std::vector<double> sp = evalAt(OpKind::Softplus);
  EXPECT_NEAR(sp[5], 1.3132616875182228, 1e-15);
  EXPECT_NEAR(sp[3], std::log(2.0), 1e-15);
  EXPECT_EQ(sp[7], 25.0); // above the threshold 20: x itself
  EXPECT_EQ(sp[8], 0.0);
  EXPECT_EQ(sp[9], kInf);
  EXPECT_TRUE(std::isnan(sp[10]));
  // beta=2, threshold=1: x*beta > 1 gives x, else log1p(exp(2x))/2.
  std::vector<double> sp2 =
      evalAt(OpKind::Softplus, {{"beta", Attr::ofFloat(2.0), {}},
                                {"threshold", Attr::ofFloat(1.0), {}}});
  EXPECT_EQ(sp2[5], 1.0);
  EXPECT_NEAR(sp2[4], std::log1p(std::exp(1.0)) / 2.0, 1e-15);
  EXPECT_NEAR(sp2[1], std::log1p(std::exp(-2.0)) / 2.0, 1e-15);
}

TEST(RefUnary, IntegerInputsStayExact) {
  GraphBuilder b("ints");
  Value *x = b.input("x", DType::I64, {5});
  b.output(b.unary(OpKind::Neg, x));
  b.output(b.unary(OpKind::Abs, x));
  b.output(b.unary(OpKind::Relu, x));
  b.output(b.unary(OpKind::Exp, x));
  std::vector<RefTensor> out =
      run(b, {tensorOf({5}, {-7, -1, 0, 3, 12}, DType::I64)});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].dtype, DType::I64);
  EXPECT_EQ(out[0].data, (std::vector<double>{7, 1, 0, -3, -12}));
  EXPECT_EQ(out[1].data, (std::vector<double>{7, 1, 0, 3, 12}));
  EXPECT_EQ(out[2].data, (std::vector<double>{0, 0, 0, 3, 12}));
  EXPECT_EQ(out[3].dtype, DType::F32);
  EXPECT_DOUBLE_EQ(out[3].data[3], std::exp(3.0));
}
