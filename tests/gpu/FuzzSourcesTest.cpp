//===- FuzzSourcesTest.cpp - The GPU suite's random graphs compile --------===//
//
// No GPU needed. The random convolutions, linears, group_norms and
// reductions of ConvFuzzCases.cpp, LinearFuzzCases.cpp and
// NormFuzzCases.cpp (the GPU suite's 40 of each and 80 more) are generated
// and compiled with NVRTC for sm_90 (the tensor-core kernels) and sm_80,
// with their options: each must give kernels NVRTC accepts (six of 1680
// convolutions did not: halves streamed in stages of 8 channels,
// tiling.cuh's k16).
//
//===----------------------------------------------------------------------===//
#include "Execute.h"
#include "GpuCases.h"
#include "Parser.h"
#include "codegen/OfflineOptions.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

class FuzzSources : public ::testing::TestWithParam<Case> {};

TEST_P(FuzzSources, CompileWithNvrtc) {
  const Case &c = GetParam();
  auto g = parseGraph(c.kg, c.name + ".kg");
  ASSERT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError()) << "\n"
                                    << c.kg;
  std::vector<llvm::SmallVector<int64_t, 6>> shapes;
  for (const std::vector<int64_t> &s : c.shapes)
    shapes.emplace_back(s.begin(), s.end());
  // f16 and bf16 linear and matmul run on Hopper's tensor cores only: for
  // sm_80, a located error that says so (docs/precision.md).
  const DType dtype = (*g)->inputs()[0]->dtype();
  bool hopperOnly = false;
  for (const auto &n : (*g)->nodes())
    hopperOnly |= (n->op() == OpKind::Linear || n->op() == OpKind::Matmul) &&
                  (dtype == DType::F16 || dtype == DType::BF16);
  for (const char *arch : {"sm_90", "sm_80"}) {
    CompileOptions opts = offlineOptions(false, arch);
    opts.matmulPrecision = c.precision;
    opts.constantParams = c.constantParams;
    auto exe = Executable::compile(**g, shapes, opts);
    if (hopperOnly && std::string(arch) == "sm_80") {
      ASSERT_FALSE(static_cast<bool>(exe)) << c.kg;
      const std::string why = llvm::toString(exe.takeError());
      EXPECT_NE(why.find(".kg:"), std::string::npos) << why;
      EXPECT_NE(why.find("on Hopper's tensor cores only"), std::string::npos)
          << why;
      continue;
    }
    ASSERT_TRUE(static_cast<bool>(exe))
        << arch << ": " << llvm::toString(exe.takeError()) << "\n"
        << c.kg;
    EXPECT_FALSE((*exe)->kernels().empty()) << arch;
  }
}

INSTANTIATE_TEST_SUITE_P(Conv, FuzzSources,
                         ::testing::ValuesIn(convFuzzCases(120)),
                         [](const auto &info) { return info.param.name; });
INSTANTIATE_TEST_SUITE_P(Linear, FuzzSources,
                         ::testing::ValuesIn(linearFuzzCases(120)),
                         [](const auto &info) { return info.param.name; });
INSTANTIATE_TEST_SUITE_P(Norm, FuzzSources,
                         ::testing::ValuesIn(normFuzzCases(120)),
                         [](const auto &info) { return info.param.name; });

} // namespace
} // namespace kiln
