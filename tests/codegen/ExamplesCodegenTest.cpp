//===- ExamplesCodegenTest.cpp - Plans and NVRTC for every example --------===//
//
// No GPU needed. For each example graph at its real and small shapes: the
// fusion plan matches tests/data/plans/<name>.txt (KILN_UPDATE_GOLDEN=1
// rewrites them), and every generated kernel compiles with NVRTC for sm_90
// and sm_80.
//
//===----------------------------------------------------------------------===//
#include "Engine.h"
#include "Execute.h"
#include "OfflineOptions.h"
#include "PlanPrinter.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

namespace kiln {
namespace {

struct Example {
  const char *file;
  int64_t n;
};

const Example kExamples[] = {
    {"l1_35", 112},     {"l1_35_small", 3},    {"l2_19", 128},
    {"l2_19_small", 2}, {"l2_37", 32768},      {"l2_37_small", 5},
    {"l2_62", 1024},    {"l2_62_small", 7},    {"l2_75", 1024},
    {"l2_75_small", 6}, {"decoder_block", 16}, {"decoder_block_small", 2},
};

std::unique_ptr<Executable> generate(const Example &e, const char *arch,
                                     bool generateOnly) {
  std::string path =
      std::string(KILN_SOURCE_DIR) + "/examples/" + e.file + ".kg";
  auto g = loadGraph(path);
  EXPECT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());
  if (!g)
    return nullptr;
  llvm::SmallVector<int64_t, 6> shape = (*g)->inputs()[0]->shape().sizes();
  shape[0] = e.n;
  // As `kiln plan` and `kiln run` compile: parameters constant.
  CompileOptions opts = offlineOptions(generateOnly, arch);
  opts.constantParams = true;
  auto exe = Executable::compile(**g, {shape}, opts);
  EXPECT_TRUE(static_cast<bool>(exe)) << llvm::toString(exe.takeError());
  return exe ? std::move(*exe) : nullptr;
}

class Examples : public ::testing::TestWithParam<Example> {};

TEST_P(Examples, PlanMatchesGolden) {
  auto exe = generate(GetParam(), "sm_90", true);
  ASSERT_TRUE(exe);
  std::string text = planText(*exe, MatmulPrecision::Highest);
  std::string golden = std::string(KILN_SOURCE_DIR) + "/tests/data/plans/" +
                       GetParam().file + ".txt";
  if (std::getenv("KILN_UPDATE_GOLDEN")) {
    std::ofstream(golden) << text;
    GTEST_SKIP() << "rewrote " << golden;
  }
  std::ifstream in(golden);
  ASSERT_TRUE(in.good()) << "missing " << golden;
  std::string want((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  EXPECT_EQ(text, want) << "the plan changed; if that is intended, rerun with "
                           "KILN_UPDATE_GOLDEN=1 and review the diff";
}

// The second compile of a graph in one process takes every kernel from the
// kernel cache, and the timings say where the time went (no device here).
TEST(ExamplesCache, ASecondCompileTakesEveryKernelFromTheCache) {
  const Example e{"l2_62_small", 7};
  auto first = generate(e, "sm_90", false);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->cachedKernels() + first->compiledKernels(),
            first->kernels().size());
  // Kernels compile in parallel: ready no sooner than the slowest compile.
  for (const KernelBuild &b : first->builds())
    EXPECT_GE(first->kernelsReadyMs(), b.compileMs);
  auto second = generate(e, "sm_90", false);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->cachedKernels(), second->kernels().size());
  EXPECT_EQ(second->compiledKernels(), 0u);
  EXPECT_EQ(second->device(), nullptr) << "compileOnly opens no device";
  EXPECT_EQ(second->contextWaitMs(), 0.0) << "nor waits for one";
}

TEST_P(Examples, EveryKernelCompilesWithNvrtc) {
  for (const char *arch : {"sm_90", "sm_80"}) {
    auto exe = generate(GetParam(), arch, false);
    ASSERT_TRUE(exe) << arch;
    ASSERT_EQ(exe->builds().size(), exe->kernels().size());
    for (const KernelBuild &b : exe->builds())
      EXPECT_FALSE(b.key.empty());
  }
}

INSTANTIATE_TEST_SUITE_P(All, Examples, ::testing::ValuesIn(kExamples),
                         [](const auto &info) {
                           return std::string(info.param.file);
                         });

} // namespace
} // namespace kiln
