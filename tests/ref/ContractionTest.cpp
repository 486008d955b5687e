//===- ContractionTest.cpp - Reference evaluation of linear and matmul ----===//
#include "ref/RefTestUtil.h"

using namespace kiln;
using namespace kiln::test;

namespace {
RefTensor matmulOf(const RefTensor &a, const RefTensor &c) {
  GraphBuilder b("mm");
  Value *x = b.input("a", DType::F32, Shape::fromSizes(a.shape));
  Value *y = b.input("b", DType::F32, Shape::fromSizes(c.shape));
  b.output(b.matmul(x, y));
  std::vector<RefTensor> out = run(b, {a, c});
  return out.empty() ? RefTensor() : out[0];
}
} // namespace

TEST(RefContraction, LinearIsMatmulWithTransposedWeight) {
  const int64_t B = 2, S = 3, In = 7, Out = 5;
  RefTensor x = randomTensor({B, S, In}, 31), w = randomTensor({Out, In}, 32);
  RefTensor bias = randomTensor({Out}, 33);
  GraphBuilder b("lin");
  Value *xv = b.input("x", DType::F32, {B, S, In});
  Value *wv = b.param("w", DType::F32, {Out, In});
  Value *bv = b.param("b", DType::F32, {Out});
  b.output(b.linear(xv, wv, bv));
  b.output(b.linear(xv, wv));
  std::vector<RefTensor> out = run(b, {x}, {w, bias});
  ASSERT_EQ(out.size(), 2u);
  // matmul(x, wᵀ) with an explicitly transposed weight.
  RefTensor wt(DType::F32, {In, Out});
  for (int64_t o = 0; o < Out; ++o)
    for (int64_t i = 0; i < In; ++i)
      wt.data[i * Out + o] = w.data[o * In + i];
  RefTensor plain = matmulOf(x, wt), withBias = plain;
  for (int64_t r = 0; r < B * S; ++r)
    for (int64_t o = 0; o < Out; ++o)
      withBias.data[r * Out + o] += bias.data[o];
  expectClose(out[0], withBias);
  expectClose(out[1], plain);
}

TEST(RefContraction, Matmul2D) {
  RefTensor a = randomTensor({3, 5}, 34), c = randomTensor({5, 4}, 35);
  RefTensor want(DType::F32, {3, 4});
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t k = 0; k < 5; ++k)
        want.data[i * 4 + j] += a.data[i * 5 + k] * c.data[k * 4 + j];
  expectClose(matmulOf(a, c), want);
}

TEST(RefContraction, MatmulOneDimensional) {
  RefTensor v = randomTensor({5}, 36), m = randomTensor({5, 3}, 37);
  RefTensor m2 = randomTensor({4, 5}, 38), u = randomTensor({5}, 39);
  RefTensor vm(DType::F32, {3}), mv(DType::F32, {4});
  double dot = 0;
  for (int64_t k = 0; k < 5; ++k) {
    for (int64_t j = 0; j < 3; ++j)
      vm.data[j] += v.data[k] * m.data[k * 3 + j];
    for (int64_t i = 0; i < 4; ++i)
      mv.data[i] += m2.data[i * 5 + k] * u.data[k];
    dot += v.data[k] * u.data[k];
  }
  expectClose(matmulOf(v, m), vm);
  expectClose(matmulOf(m2, u), mv);
  RefTensor d = matmulOf(v, u);
  EXPECT_EQ(d.rank(), 0u);
  expectClose(d, tensorOf({}, {dot}));
}

TEST(RefContraction, MatmulBatchedBroadcast) {
  // [2, 1, 3, 5] @ [4, 5, 2] -> [2, 4, 3, 2]
  RefTensor a = randomTensor({2, 1, 3, 5}, 40), c = randomTensor({4, 5, 2}, 41);
  RefTensor want(DType::F32, {2, 4, 3, 2});
  for (int64_t p = 0; p < 2; ++p)
    for (int64_t q = 0; q < 4; ++q)
      for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < 2; ++j) {
          double s = 0;
          for (int64_t k = 0; k < 5; ++k)
            s += a.data[(p * 3 + i) * 5 + k] * c.data[(q * 5 + k) * 2 + j];
          want.data[((p * 4 + q) * 3 + i) * 2 + j] = s;
        }
  expectClose(matmulOf(a, c), want);
  // A batched matrix times a vector: [2, 3, 5] @ [5] -> [2, 3].
  RefTensor bm = randomTensor({2, 3, 5}, 42), v = randomTensor({5}, 43);
  RefTensor bv(DType::F32, {2, 3});
  for (int64_t r = 0; r < 6; ++r)
    for (int64_t k = 0; k < 5; ++k)
      bv.data[r] += bm.data[r * 5 + k] * v.data[k];
  expectClose(matmulOf(bm, v), bv);
}

// Over 0 features, as PyTorch: linear gives the bias, matmul zeros; an empty
// batch gives an empty result.
TEST(RefContraction, NoFeaturesGiveTheBiasOrZeros) {
  RefTensor x(DType::F32, {3, 0}), w(DType::F32, {4, 0});
  RefTensor bias = randomTensor({4}, 40);
  GraphBuilder b("lin0");
  Value *xv = b.input("x", DType::F32, {3, 0});
  Value *wv = b.param("w", DType::F32, {4, 0});
  Value *bv = b.param("b", DType::F32, {4});
  b.output(b.linear(xv, wv, bv));
  std::vector<RefTensor> out = run(b, {x}, {w, bias});
  ASSERT_EQ(out.size(), 1u);
  RefTensor want(DType::F32, {3, 4});
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t o = 0; o < 4; ++o)
      want.data[r * 4 + o] = bias.data[o];
  expectClose(out[0], want);
  RefTensor zeros(DType::F32, {5, 2});
  expectClose(
      matmulOf(RefTensor(DType::F32, {5, 0}), RefTensor(DType::F32, {0, 2})),
      zeros);
  RefTensor none =
      matmulOf(RefTensor(DType::F32, {0, 3}), randomTensor({3, 2}, 41));
  EXPECT_EQ(none.shape, (llvm::SmallVector<int64_t, 6>{0, 2}));
  // An empty batch dim broadcast against 1 is empty (it wrote past the
  // result, taking the larger of the two).
  RefTensor batched = matmulOf(RefTensor(DType::F32, {2, 0, 3, 4}),
                               randomTensor({1, 4, 2}, 42));
  EXPECT_EQ(batched.shape, (llvm::SmallVector<int64_t, 6>{2, 0, 3, 2}));
}
