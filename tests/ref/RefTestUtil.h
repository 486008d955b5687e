//===- RefTestUtil.h - Helpers for the reference evaluator tests -*- C++
//-*-===//
#ifndef KILN_TESTS_REF_REFTESTUTIL_H
#define KILN_TESTS_REF_REFTESTUTIL_H

#include "Builder.h"
#include "ref/Evaluator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace kiln::test {

/// Uniform values in [lo, hi), reproducible from `seed`.
inline RefTensor randomTensor(llvm::ArrayRef<int64_t> sizes, unsigned seed,
                              double lo = -2.0, double hi = 2.0,
                              DType dt = DType::F32) {
  RefTensor t(dt, sizes);
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (double &v : t.data)
    v = dist(gen);
  return t;
}

inline RefTensor tensorOf(llvm::ArrayRef<int64_t> sizes,
                          std::vector<double> values, DType dt = DType::F32) {
  RefTensor t(dt, sizes);
  EXPECT_EQ(t.data.size(), values.size());
  t.data = std::move(values);
  return t;
}

/// Finishes the builder's graph and evaluates it; fails the test (and
/// returns nothing) on any error.
inline std::vector<RefTensor> run(GraphBuilder &b,
                                  std::vector<RefTensor> inputs,
                                  std::vector<RefTensor> params = {}) {
  llvm::Expected<std::unique_ptr<Graph>> g = b.finish();
  if (!g) {
    ADD_FAILURE() << errorToString(g.takeError());
    return {};
  }
  llvm::Expected<std::vector<RefTensor>> out = evaluate(**g, inputs, params);
  if (!out) {
    ADD_FAILURE() << errorToString(out.takeError());
    return {};
  }
  return std::move(*out);
}

/// Same shape, NaN exactly where expected, infinities equal, other values
/// within rtol * |expected| + atol.
inline void expectClose(const RefTensor &actual, const RefTensor &expected,
                        double rtol = 1e-12, double atol = 1e-12) {
  ASSERT_EQ(llvm::ArrayRef<int64_t>(actual.shape),
            llvm::ArrayRef<int64_t>(expected.shape));
  ASSERT_EQ(actual.data.size(), expected.data.size());
  for (size_t i = 0; i < actual.data.size(); ++i) {
    double a = actual.data[i], e = expected.data[i];
    if (std::isnan(e) || std::isinf(e)) {
      EXPECT_TRUE(std::isnan(e) ? std::isnan(a) : a == e)
          << "at " << i << ": got " << a << ", want " << e;
      continue;
    }
    EXPECT_NEAR(a, e, rtol * std::abs(e) + atol) << "at " << i;
  }
}

} // namespace kiln::test

#endif
