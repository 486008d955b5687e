//===- KernelBuildTest.cpp - Building a graph's many kernels --------------===//
//
// No GPU needed. A graph's kernels are compiled by a pool of at most one
// thread per hardware thread; CompileOptions::onKernelReady hears of each
// one as it becomes ready, one call at a time, counting up to the total.
//
//===----------------------------------------------------------------------===//
#include "Engine.h"
#include "OfflineOptions.h"
#include "Parser.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

namespace kiln {
namespace {

TEST(KernelBuild, EveryKernelIsReportedReadyOnceCountingUp) {
  // A reduction kernel and a pointwise kernel per step, each source
  // distinct (a literal per step), so none comes from the memory cache.
  constexpr int kSteps = 9;
  std::string kg = "graph g(x: f32[5, 17]) {\n";
  std::string prev = "x";
  for (int i = 0; i < kSteps; ++i) {
    kg += fmt::format("  p{0} = mul({1}, {2}.0)\n"
                      "  s{0} = sum(p{0}, dim=1, keepdim=true)\n"
                      "  a{0} = add({1}, s{0})\n  v{0} = mul(a{0}, {3}.0)\n",
                      i, prev, i + 2, i + 3);
    prev = fmt::format("v{}", i);
  }
  kg += "  return " + prev + "\n}\n";
  auto g = parseGraph(kg, "steps.kg");
  ASSERT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());

  std::mutex mu;
  std::vector<std::pair<size_t, size_t>> calls;
  std::set<std::thread::id> threads;
  bool overlapped = false;
  std::atomic<int> inside{0};
  CompileOptions opts = offlineOptions(false);
  opts.cache.recompile = true;
  opts.onKernelReady = [&](size_t ready, size_t total) {
    // Calls must not overlap; the lock only guards the bookkeeping.
    overlapped |= ++inside > 1;
    {
      std::lock_guard<std::mutex> lock(mu);
      calls.emplace_back(ready, total);
      threads.insert(std::this_thread::get_id());
    }
    --inside;
  };
  auto exe = Executable::compile(**g, {{5, 17}}, opts);
  ASSERT_TRUE(static_cast<bool>(exe)) << llvm::toString(exe.takeError());
  const size_t n = (*exe)->kernels().size();
  EXPECT_EQ(n, static_cast<size_t>(2 * kSteps));
  ASSERT_EQ(calls.size(), n);
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(calls[i].first, i + 1);
    EXPECT_EQ(calls[i].second, n);
  }
  EXPECT_FALSE(overlapped);
  EXPECT_LE(threads.size(),
            std::max<size_t>(1, std::thread::hardware_concurrency()));
  ASSERT_EQ((*exe)->builds().size(), n);
  for (const KernelBuild &b : (*exe)->builds()) {
    EXPECT_FALSE(b.key.empty());
    EXPECT_GT(b.compileMs, 0.0);
  }
}

} // namespace
} // namespace kiln
