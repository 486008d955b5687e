//===- GpuCases.h - The graphs the GPU suite runs --------------*- C++ -*-===//
//
// Shared by GpuKernelsTest (each case on the GPU against the reference) and
// KernelSourcesTest (each case's generated sources, fixed by their hashes,
// with no GPU).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TESTS_GPU_GPUCASES_H
#define KILN_TESTS_GPU_GPUCASES_H

#include "schedule/Precision.h"

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace kiln {

/// One graph, the shapes of its inputs, and how to fill and judge them.
struct Case {
  std::string name;
  std::string kg;
  std::vector<std::vector<int64_t>> shapes;
  double offset = 0;  // added to every input element
  double nanRate = 0; // fraction of input elements set to NaN
  double tol = 2e-6;  // on ||gpu - ref|| / ||ref||
  MatmulPrecision precision = MatmulPrecision::Highest;
  /// CompileOptions::constantParams (kernels keep what they derive from the
  /// parameters across runs, as the CLI compiles).
  bool constantParams = false;
  double infRate = 0; // fraction of input elements set to +inf or -inf
  /// The first input's element at this flat index set to NaN (-1: none):
  /// one sample's results NaN, and no other's.
  int64_t nanAt = -1;
  /// f16 and bf16 results: the share of values that may lie one ulp of
  /// their dtype from the reference (a rounding boundary between the two
  /// sums; a wrong rounding would put about half there).
  double flipShare = 0.01;
};

/// Every case of the GPU suite.
std::vector<Case> cases();

/// `count` random convolutions (ConvFuzzCases.cpp): a fixed set, or another
/// drawn with KILN_CONV_FUZZ_SEED (KILN_CONV_FUZZ_COUNT: how many).
std::vector<Case> convFuzzCases(int count);
/// `count` random linears and matmuls (LinearFuzzCases.cpp; the same with
/// KILN_LINEAR_FUZZ_SEED and KILN_LINEAR_FUZZ_COUNT).
std::vector<Case> linearFuzzCases(int count);
/// `count` random group_norms and reductions (NormFuzzCases.cpp;
/// KILN_NORM_FUZZ_SEED, KILN_NORM_FUZZ_COUNT).
std::vector<Case> normFuzzCases(int count);

/// For gtest: a case prints as its name.
void PrintTo(const Case &c, std::ostream *os);

} // namespace kiln

#endif
