//===- ConvFuzzSourcesTest.cpp - Random convolutions compile ------------===//
//
// No GPU needed. The random convolutions of ConvFuzzCases.cpp (the GPU
// suite's 40 and 80 more) are generated and compiled with NVRTC for sm_90
// (the tensor-core kernels) and sm_80, with their options: each must give
// kernels NVRTC accepts (six of 1680 draws did not: halves streamed in
// stages of 8 channels, tiling.cuh's k16).
//
//===----------------------------------------------------------------------===//
#include "Execute.h"
#include "GpuCases.h"
#include "Parser.h"
#include "codegen/OfflineOptions.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

class ConvFuzzSources : public ::testing::TestWithParam<Case> {};

TEST_P(ConvFuzzSources, CompileWithNvrtc) {
  const Case &c = GetParam();
  auto g = parseGraph(c.kg, c.name + ".kg");
  ASSERT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError()) << "\n"
                                    << c.kg;
  std::vector<llvm::SmallVector<int64_t, 6>> shapes;
  for (const std::vector<int64_t> &s : c.shapes)
    shapes.emplace_back(s.begin(), s.end());
  for (const char *arch : {"sm_90", "sm_80"}) {
    CompileOptions opts = offlineOptions(false, arch);
    opts.matmulPrecision = c.precision;
    opts.constantParams = c.constantParams;
    auto exe = Executable::compile(**g, shapes, opts);
    ASSERT_TRUE(static_cast<bool>(exe))
        << arch << ": " << llvm::toString(exe.takeError()) << "\n"
        << c.kg;
    EXPECT_FALSE((*exe)->kernels().empty()) << arch;
  }
}

INSTANTIATE_TEST_SUITE_P(All, ConvFuzzSources,
                         ::testing::ValuesIn(convFuzzCases(120)),
                         [](const auto &info) { return info.param.name; });

} // namespace
} // namespace kiln
