//===- GroupNormTest.cpp - Reference evaluation of group_norm -------------===//
#include "ref/RefTestUtil.h"

using namespace kiln;
using namespace kiln::test;

namespace {
constexpr int64_t N = 3, C = 6, H = 5, W = 7, G = 3, HW = H * W;

RefTensor groupNorm(const RefTensor &x, int64_t groups, double eps,
                    const RefTensor *w = nullptr,
                    const RefTensor *bias = nullptr) {
  GraphBuilder b("gn");
  Value *in = b.input("x", DType::F32, Shape::fromSizes(x.shape));
  Operand wv = std::nullopt, bv = std::nullopt;
  std::vector<RefTensor> params;
  int64_t c = x.shape[1];
  if (w) {
    wv = b.param("w", DType::F32, {c});
    params.push_back(*w);
  }
  if (bias) {
    bv = b.param("b", DType::F32, {c});
    params.push_back(*bias);
  }
  b.output(b.groupNorm(in, groups, wv, bv, eps));
  std::vector<RefTensor> out = run(b, {x}, params);
  return out.empty() ? RefTensor() : out[0];
}

/// Mean and biased variance of sample n, channels [c0, c1).
std::pair<double, double> stats(const RefTensor &y, int64_t n, int64_t c0,
                                int64_t c1) {
  int64_t c = y.shape[1], hw = y.numel() / (y.shape[0] * c);
  double s = 0, count = double((c1 - c0) * hw);
  for (int64_t ch = c0; ch < c1; ++ch)
    for (int64_t i = 0; i < hw; ++i)
      s += y.data[(n * c + ch) * hw + i];
  double mean = s / count, v = 0;
  for (int64_t ch = c0; ch < c1; ++ch)
    for (int64_t i = 0; i < hw; ++i) {
      double d = y.data[(n * c + ch) * hw + i] - mean;
      v += d * d;
    }
  return {mean, v / count};
}
} // namespace

TEST(RefGroupNorm, PerSampleGroupStatistics) {
  RefTensor x = randomTensor({N, C, H, W}, 21, -3.0, 5.0);
  RefTensor y = groupNorm(x, G, 1e-300);
  ASSERT_EQ(y.numel(), x.numel());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < G; ++g) {
      auto [mean, var] = stats(y, n, g * (C / G), (g + 1) * (C / G));
      EXPECT_NEAR(mean, 0.0, 1e-14);
      EXPECT_NEAR(var, 1.0, 1e-13);
    }
  // Statistics are per sample: scaling one sample leaves the others alone.
  RefTensor x2 = x;
  for (int64_t i = 0; i < C * HW; ++i)
    x2.data[i] = x2.data[i] * 10 + 3;
  expectClose(groupNorm(x2, G, 1e-300), y, 1e-12, 1e-12);
}

TEST(RefGroupNorm, OneGroupNormalisesWholeSample) {
  RefTensor x = randomTensor({N, C, H, W}, 22);
  RefTensor y = groupNorm(x, 1, 1e-5);
  RefTensor want = x;
  for (int64_t n = 0; n < N; ++n) {
    auto [mean, var] = stats(x, n, 0, C);
    for (int64_t i = 0; i < C * HW; ++i) {
      double &v = want.data[n * C * HW + i];
      v = (v - mean) / std::sqrt(var + 1e-5);
    }
  }
  expectClose(y, want);
}

TEST(RefGroupNorm, AffinePerChannel) {
  RefTensor x = randomTensor({N, C, H, W}, 23);
  RefTensor w = randomTensor({C}, 24), b = randomTensor({C}, 25);
  RefTensor plain = groupNorm(x, G, 1e-5);
  RefTensor y = groupNorm(x, G, 1e-5, &w, &b);
  RefTensor want = plain;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < HW; ++i) {
        double &v = want.data[(n * C + c) * HW + i];
        v = v * w.data[c] + b.data[c];
      }
  expectClose(y, want);
}

TEST(RefGroupNorm, LargeOffsetIsExact) {
  RefTensor x = randomTensor({N, C, H, W}, 26);
  RefTensor y = groupNorm(x, G, 1e-5);
  for (double offset : {1e4, 1e6}) {
    RefTensor shifted = x;
    for (double &v : shifted.data)
      v += offset;
    SCOPED_TRACE(offset);
    expectClose(groupNorm(shifted, G, 1e-5), y, 1e-9, 1e-9);
  }
}

TEST(RefGroupNorm, NaNPoisonsOnlyItsGroup) {
  RefTensor x = randomTensor({N, C, 4}, 27);
  int64_t n = 1, g = 2, cg = C / G;
  x.data[(n * C + g * cg + 1) * 4 + 2] = NAN;
  RefTensor y = groupNorm(x, G, 1e-5);
  for (int64_t s = 0; s < N; ++s)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < 4; ++i) {
        bool poisoned = s == n && c / cg == g;
        EXPECT_EQ(std::isnan(y.data[(s * C + c) * 4 + i]), poisoned)
            << s << "," << c << "," << i;
      }
}

// An empty input gives an empty result at once, however many groups divide
// its 0 channels (2^31 - 1 groups looped for minutes).
TEST(RefGroupNorm, EmptyInputsGiveEmptyResults) {
  for (auto [shape, groups] :
       {std::pair{llvm::SmallVector<int64_t, 6>{2, 0, 3},
                  (int64_t(1) << 31) - 1},
        std::pair{llvm::SmallVector<int64_t, 6>{0, 6, 4}, int64_t(3)},
        std::pair{llvm::SmallVector<int64_t, 6>{2, 6, 0}, int64_t(2)}}) {
    RefTensor out = groupNorm(RefTensor(DType::F32, shape), groups, 1e-5);
    EXPECT_EQ(out.shape, shape);
    EXPECT_EQ(out.numel(), 0);
  }
}
