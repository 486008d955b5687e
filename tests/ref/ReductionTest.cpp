//===- ReductionTest.cpp - Reference evaluation of reductions -------------===//
#include "ref/RefTestUtil.h"

using namespace kiln;
using namespace kiln::test;

namespace {
const double kNaN = NAN, kInf = INFINITY;

RefTensor reduceOne(OpKind op, const RefTensor &x, llvm::ArrayRef<int64_t> dims,
                    bool keepdim) {
  GraphBuilder b("red");
  Value *in = b.input("x", x.dtype, Shape::fromSizes(x.shape));
  b.output(b.reduce(op, in, dims, keepdim));
  std::vector<RefTensor> out = run(b, {x});
  return out.empty() ? RefTensor() : out[0];
}
} // namespace

TEST(RefReduction, SingleDimKeepdim) {
  RefTensor x = randomTensor({3, 5, 7}, 11);
  RefTensor mn(DType::F32, {3, 1, 7}), mx = mn, sm = mn, me = mn, lse = mn;
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t k = 0; k < 7; ++k) {
      double lo = kInf, hi = -kInf, s = 0, e = 0;
      for (int64_t j = 0; j < 5; ++j) {
        double v = x.data[(i * 5 + j) * 7 + k];
        lo = std::min(lo, v);
        hi = std::max(hi, v);
        s += v;
        e += std::exp(v);
      }
      mn.data[i * 7 + k] = lo;
      mx.data[i * 7 + k] = hi;
      sm.data[i * 7 + k] = s;
      me.data[i * 7 + k] = s / 5;
      lse.data[i * 7 + k] = std::log(e);
    }
  expectClose(reduceOne(OpKind::Min, x, {1}, true), mn);
  expectClose(reduceOne(OpKind::Max, x, {-2}, true), mx);
  expectClose(reduceOne(OpKind::Sum, x, {1}, true), sm);
  expectClose(reduceOne(OpKind::Mean, x, {1}, true), me);
  expectClose(reduceOne(OpKind::LogSumExp, x, {1}, true), lse);
  // Without keepdim only the shape changes.
  RefTensor flat = sm;
  flat.shape = {3, 7};
  expectClose(reduceOne(OpKind::Sum, x, {1}, false), flat);
}

TEST(RefReduction, MultipleAndNegativeDims) {
  RefTensor x = randomTensor({2, 3, 4, 5}, 12);
  RefTensor want(DType::F32, {3, 5});
  for (int64_t j = 0; j < 3; ++j)
    for (int64_t l = 0; l < 5; ++l) {
      double s = 0;
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t k = 0; k < 4; ++k)
          s += x.data[((i * 3 + j) * 4 + k) * 5 + l];
      want.data[j * 5 + l] = s / 8;
    }
  expectClose(reduceOne(OpKind::Mean, x, {0, -2}, false), want);
  RefTensor kept = want;
  kept.shape = {1, 3, 1, 5};
  expectClose(reduceOne(OpKind::Mean, x, {2, 0}, true), kept);
}

TEST(RefReduction, FullReduction) {
  RefTensor x = randomTensor({3, 4}, 13);
  double s = 0, hi = -kInf;
  for (double v : x.data) {
    s += v;
    hi = std::max(hi, v);
  }
  RefTensor all = reduceOne(OpKind::Sum, x, {}, false);
  EXPECT_EQ(all.rank(), 0u);
  expectClose(all, tensorOf({}, {s}));
  expectClose(reduceOne(OpKind::Max, x, {}, true), tensorOf({1, 1}, {hi}));
}

TEST(RefReduction, MinMaxNaN) {
  RefTensor x = tensorOf({3, 4}, {1, kNaN, 3, -2, //
                                  5, 6, -7, 8,    //
                                  kInf, -kInf, 0, kNaN});
  expectClose(reduceOne(OpKind::Min, x, {1}, false),
              tensorOf({3}, {kNaN, -7, kNaN}));
  expectClose(reduceOne(OpKind::Max, x, {1}, false),
              tensorOf({3}, {kNaN, 8, kNaN}));
  expectClose(reduceOne(OpKind::Max, x, {0}, false),
              tensorOf({4}, {kInf, kNaN, 3, kNaN}));
  expectClose(reduceOne(OpKind::Min, x, {0}, false),
              tensorOf({4}, {1, kNaN, -7, kNaN}));
}

TEST(RefReduction, LogSumExpInfinities) {
  RefTensor x = tensorOf({5, 2}, {-kInf, -kInf,     // all -inf: -inf
                                  kInf, 1.0,        // +inf: +inf
                                  kNaN, 1.0,        // NaN propagates
                                  -kInf, 2.0,       // -inf ignored
                                  1000.0, 1000.0}); // no overflow
  expectClose(reduceOne(OpKind::LogSumExp, x, {1}, false),
              tensorOf({5}, {-kInf, kInf, kNaN, 2.0, 1000.0 + std::log(2.0)}),
              1e-15, 0);
}

TEST(RefReduction, IntegerSumStaysIntegral) {
  RefTensor x = tensorOf({2, 3}, {4, -9, 7, 123456789012, 1, 2}, DType::I64);
  RefTensor s = reduceOne(OpKind::Sum, x, {1}, false);
  EXPECT_EQ(s.dtype, DType::I64);
  EXPECT_EQ(s.data, (std::vector<double>{2, 123456789015}));
  RefTensor m = reduceOne(OpKind::Min, x, {0}, false);
  EXPECT_EQ(m.data, (std::vector<double>{4, -9, 2}));
}
