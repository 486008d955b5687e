//===- BinaryTest.cpp - Reference evaluation of binary ops ----------------===//
#include "ref/RefTestUtil.h"

using namespace kiln;
using namespace kiln::test;

namespace {
const double kNaN = NAN, kInf = INFINITY;

/// Naive broadcast read: element of `t` at output multi-index `idx`.
double at(const RefTensor &t, llvm::ArrayRef<int64_t> idx) {
  size_t lead = idx.size() - t.rank();
  int64_t off = 0;
  for (size_t i = 0; i < t.rank(); ++i)
    off = off * t.shape[i] + (t.shape[i] == 1 ? 0 : idx[lead + i]);
  return t.data[off];
}
} // namespace

TEST(RefBinary, BroadcastAllOps) {
  // (3, 1) op (1, 4, 1, 1) -> (1, 4, 3, 1), as PyTorch.
  RefTensor a = randomTensor({3, 1}, 1, 0.5, 3.0);
  RefTensor c = randomTensor({1, 4, 1, 1}, 2, 0.5, 3.0);
  struct Case {
    OpKind op;
    double (*f)(double, double);
  };
  const Case cases[] = {
      {OpKind::Add, [](double x, double y) { return x + y; }},
      {OpKind::Sub, [](double x, double y) { return x - y; }},
      {OpKind::Mul, [](double x, double y) { return x * y; }},
      {OpKind::Div, [](double x, double y) { return x / y; }},
      {OpKind::Maximum, [](double x, double y) { return x > y ? x : y; }},
      {OpKind::Minimum, [](double x, double y) { return x < y ? x : y; }},
      {OpKind::Pow, [](double x, double y) { return std::pow(x, y); }},
  };
  for (const Case &cs : cases) {
    GraphBuilder b("bin");
    Value *x = b.input("a", DType::F32, {3, 1});
    Value *y = b.input("c", DType::F32, {1, 4, 1, 1});
    b.output(b.call(cs.op, {x, y}));
    std::vector<RefTensor> out = run(b, {a, c});
    ASSERT_EQ(out.size(), 1u) << opName(cs.op).str();
    RefTensor want(DType::F32, {1, 4, 3, 1});
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t i = 0; i < 3; ++i) {
        int64_t idx[] = {0, j, i, 0};
        want.data[j * 3 + i] = cs.f(at(a, idx), at(c, idx));
      }
    SCOPED_TRACE(opName(cs.op).str());
    expectClose(out[0], want);
  }
}

TEST(RefBinary, MiddleDimBroadcastAndLiterals) {
  RefTensor a = randomTensor({2, 5, 3}, 3), c = randomTensor({5, 1}, 4);
  GraphBuilder b("lit");
  Value *x = b.input("a", DType::F32, {2, 5, 3});
  Value *y = b.input("c", DType::F32, {5, 1});
  b.output(b.sub(x, y));
  b.output(b.mul(x, 2.5));
  b.output(b.call(OpKind::Pow, {x, 2}));
  b.output(b.div(1, x));
  std::vector<RefTensor> out = run(b, {a, c});
  ASSERT_EQ(out.size(), 4u);
  RefTensor sub(DType::F32, {2, 5, 3}), mul = sub, pow = sub, div = sub;
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t k = 0; k < 3; ++k) {
        int64_t o = (n * 5 + i) * 3 + k;
        sub.data[o] = a.data[o] - c.data[i];
        mul.data[o] = a.data[o] * 2.5;
        pow.data[o] = a.data[o] * a.data[o];
        div.data[o] = 1.0 / a.data[o];
      }
  expectClose(out[0], sub);
  expectClose(out[1], mul);
  expectClose(out[2], pow);
  expectClose(out[3], div);
}

TEST(RefBinary, IntegerArithmetic) {
  GraphBuilder b("ints");
  Value *x = b.input("x", DType::I64, {4});
  Value *y = b.input("y", DType::I64, {4});
  b.output(b.add(x, y));
  b.output(b.mul(x, 3));
  b.output(b.div(x, y));   // true division -> f32
  b.output(b.add(x, 0.5)); // float literal -> f32
  RefTensor xs = tensorOf({4}, {7, -3, 1000000007, 0}, DType::I64);
  RefTensor ys = tensorOf({4}, {2, 4, 3, -5}, DType::I64);
  std::vector<RefTensor> out = run(b, {xs, ys});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].dtype, DType::I64);
  EXPECT_EQ(out[0].data, (std::vector<double>{9, 1, 1000000010, -5}));
  EXPECT_EQ(out[1].data, (std::vector<double>{21, -9, 3000000021, 0}));
  EXPECT_EQ(out[2].dtype, DType::F32);
  EXPECT_DOUBLE_EQ(out[2].data[0], 3.5);
  EXPECT_DOUBLE_EQ(out[2].data[1], -0.75);
  EXPECT_EQ(out[2].data[3], -0.0);
  EXPECT_EQ(out[3].dtype, DType::F32);
  EXPECT_DOUBLE_EQ(out[3].data[1], -2.5);
}

// A bool scalar is a Python True/False: 1 or 0, never widening the tensor
// operand's dtype (x + True is x + 1 in x's dtype).
TEST(RefBinary, BoolScalars) {
  GraphBuilder b("bools");
  Value *x = b.input("x", DType::F32, {3});
  Value *i = b.input("i", DType::I64, {3});
  b.output(b.add(x, true));
  b.output(b.mul(x, false));
  b.output(b.sub(i, true));
  b.output(b.div(i, true)); // true division -> f32
  RefTensor xs = tensorOf({3}, {0.25, -7.5, NAN});
  RefTensor is = tensorOf({3}, {5, -2, 0}, DType::I64);
  std::vector<RefTensor> out = run(b, {xs, is});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].dtype, DType::F32);
  EXPECT_EQ(out[0].data[0], 1.25);
  EXPECT_EQ(out[0].data[1], -6.5);
  EXPECT_TRUE(std::isnan(out[0].data[2]));
  EXPECT_EQ(out[1].data[0], 0.0);
  EXPECT_TRUE(std::isnan(out[1].data[2])) << "NaN * False is NaN";
  EXPECT_EQ(out[2].dtype, DType::I64);
  EXPECT_EQ(out[2].data, (std::vector<double>{4, -3, -1}));
  EXPECT_EQ(out[3].dtype, DType::F32);
  EXPECT_EQ(out[3].data, (std::vector<double>{5, -2, 0}));
}

TEST(RefBinary, NaNPropagation) {
  GraphBuilder b("nan");
  Value *x = b.input("x", DType::F32, {5});
  Value *y = b.input("y", DType::F32, {5});
  b.output(b.call(OpKind::Maximum, {x, y}));
  b.output(b.call(OpKind::Minimum, {x, y}));
  b.output(b.add(x, y));
  RefTensor xs = tensorOf({5}, {kNaN, 1.0, 2.0, -kInf, kNaN});
  RefTensor ys = tensorOf({5}, {1.0, kNaN, -3.0, 4.0, kNaN});
  std::vector<RefTensor> out = run(b, {xs, ys});
  ASSERT_EQ(out.size(), 3u);
  expectClose(out[0], tensorOf({5}, {kNaN, kNaN, 2.0, 4.0, kNaN}));
  expectClose(out[1], tensorOf({5}, {kNaN, kNaN, -3.0, -kInf, kNaN}));
  expectClose(out[2], tensorOf({5}, {kNaN, kNaN, -1.0, -kInf, kNaN}));
}

TEST(RefBinary, RankZeroOperand) {
  GraphBuilder b("r0");
  Value *x = b.input("x", DType::F32, {2, 3});
  Value *s = b.input("s", DType::F32, {});
  b.output(b.sub(s, x));
  RefTensor xs = randomTensor({2, 3}, 5);
  std::vector<RefTensor> out = run(b, {xs, RefTensor::scalar(DType::F32, 4)});
  ASSERT_EQ(out.size(), 1u);
  RefTensor want = xs;
  for (double &v : want.data)
    v = 4.0 - v;
  expectClose(out[0], want);
}

// A number exponent takes PyTorch's shortcuts (x ** 0.5 is sqrt(x), x ** -0.5
// is rsqrt(x), ...), which differ from pow() at infinities and signed zeros;
// a tensor exponent, even of rank 0, is pow() itself.
TEST(RefBinary, PowNumberExponentsFollowPyTorch) {
  GraphBuilder b("pow");
  Value *x = b.input("x", DType::F32, {4});
  Value *e = b.input("e", DType::F32, {});
  b.output(b.call(OpKind::Pow, {x, 0.5}));
  b.output(b.call(OpKind::Pow, {x, -0.5}));
  b.output(b.call(OpKind::Pow, {x, e}));
  b.output(b.call(OpKind::Pow, {x, 3}));
  b.output(b.call(OpKind::Pow, {x, -2}));
  RefTensor xs = tensorOf({4}, {-kInf, -0.0, 4.0, kNaN});
  std::vector<RefTensor> out = run(b, {xs, RefTensor::scalar(DType::F32, 0.5)});
  ASSERT_EQ(out.size(), 5u);
  expectClose(out[0], tensorOf({4}, {kNaN, -0.0, 2.0, kNaN}));
  expectClose(out[1], tensorOf({4}, {kNaN, -kInf, 0.5, kNaN}));
  expectClose(out[2], tensorOf({4}, {kInf, 0.0, 2.0, kNaN}));
  expectClose(out[3], tensorOf({4}, {-kInf, -0.0, 64.0, kNaN}));
  expectClose(out[4], tensorOf({4}, {0.0, kInf, 0.0625, kNaN}));
}
