//===- ScheduleTest.cpp - Schedule choices, without emitting a kernel -----===//
//
// No GPU, no code generation: each graph is specialised and partitioned,
// and the scheduler's choice for its groups (template, parameters, launch
// shape) is checked for the target, as data.
//
//===----------------------------------------------------------------------===//
#include "Engine.h"
#include "OfflineOptions.h"
#include "Parser.h"
#include "Pipeline.h"
#include "schedule/Scheduler.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

/// The schedules of `text` at `bindings` for `arch`'s default target.
std::vector<Schedule> schedulesOf(const std::string &text,
                                  const DimBindings &bindings,
                                  const std::string &arch = "sm_90") {
  auto g = parseGraph(text, "schedule.kg");
  if (!g) {
    ADD_FAILURE() << llvm::toString(g.takeError());
    return {};
  }
  auto spec = prepareForExecution(**g, bindings);
  if (!spec) {
    ADD_FAILURE() << llvm::toString(spec.takeError());
    return {};
  }
  FusionPlan plan = partitionGraph(**spec);
  std::vector<Schedule> out;
  for (const FusionGroup &fg : plan.groups) {
    auto s = scheduleGroup(fg, defaultTarget(arch));
    if (!s) {
      ADD_FAILURE() << llvm::toString(s.takeError());
      return {};
    }
    out.push_back(std::move(*s));
  }
  return out;
}

/// A GroupNorm of 8 groups over `channels`.
std::string groupNorm(int channels) {
  return "graph g(x: f32[N, " + std::to_string(channels) +
         ", H, W]) {\n  y = group_norm(x, groups=8)\n  return y\n}\n";
}

// L1_35's slices (8 channels of 512x512, 2 Mi floats) are split over teams
// of blocks whose parts fit in shared memory: on 132 SMs, 3 teams of 88
// blocks, two blocks per SM, a cooperative launch.
TEST(Schedule, LargeGroupNormSlicesGoToTeamsOfBlocks) {
  auto ss = schedulesOf(groupNorm(64), {{"N", 112}, {"H", 512}, {"W", 512}});
  ASSERT_EQ(ss.size(), 1u);
  const Schedule &s = ss[0];
  EXPECT_EQ(s.kernel, "gnTeam");
  EXPECT_EQ(s.get("vec"), 4);
  EXPECT_EQ(s.get("teamBlocks"), 88);
  EXPECT_EQ(s.get("teams"), 3);
  EXPECT_EQ(s.get("blocksPerSM"), 2);
  EXPECT_EQ(s.launch.grid, 264u);
  EXPECT_EQ(s.launch.block, 512u);
  EXPECT_TRUE(s.launch.cooperative);
  EXPECT_EQ(s.launch.sharedBytes, uint64_t(s.get("smem")) * 4);
  // Fewer SMs (an A100's 108): the same slice in teams that fill them.
  auto a100 =
      schedulesOf(groupNorm(64), {{"N", 112}, {"H", 512}, {"W", 512}}, "sm_80");
  ASSERT_EQ(a100.size(), 1u);
  EXPECT_LE(a100[0].launch.grid, 2u * 108);
}

// Slices of up to 1024 elements live in registers: L2_62's GroupNorm
// (16 channels of one row) is 4 lanes of one 4-wide vector each.
TEST(Schedule, SmallGroupNormSlicesStayInRegisters) {
  auto ss = schedulesOf("graph g(x: f32[N, 8192]) {\n"
                        "  y = group_norm(x, groups=512)\n  return y\n}\n",
                        {{"N", 1024}});
  ASSERT_EQ(ss.size(), 1u);
  EXPECT_EQ(ss[0].kernel, "gnWarp");
  EXPECT_EQ(ss[0].get("team"), 4);
  EXPECT_EQ(ss[0].get("chunks"), 1);
  EXPECT_EQ(ss[0].get("vec"), 4);
  EXPECT_FALSE(ss[0].launch.cooperative);
  // An odd spatial size (7 x 9, 2 channels a group): vectors of 2 cross
  // from one channel into the next, the affine chosen per element.
  auto odd = schedulesOf(groupNorm(16), {{"N", 3}, {"H", 7}, {"W", 9}});
  ASSERT_EQ(odd.size(), 1u);
  EXPECT_EQ(odd[0].kernel, "gnWarp");
  EXPECT_EQ(odd[0].get("vec"), 2);
  EXPECT_EQ(odd[0].get("straddle", 0), 1);
  // Not with an operand broadcast along the channels (its value would
  // change within a vector): no vectors then.
  auto bias = schedulesOf("graph g(x: f32[N, 16, H, W]) {\n"
                          "  param b: f32[16, 1, 1]\n  p = add(x, b)\n"
                          "  y = group_norm(p, groups=8)\n  return y\n}\n",
                          {{"N", 3}, {"H", 7}, {"W", 9}});
  ASSERT_EQ(bias.size(), 1u);
  EXPECT_EQ(bias[0].get("vec"), 1);
  EXPECT_EQ(bias[0].get("straddle", 0), 0);
  // 8-wide f16 vectors across 30 x 30 planes (hw % 8 == 4).
  auto half = schedulesOf("graph g(x: f16[N, 16, 30, 30]) {\n"
                          "  y = group_norm(x, groups=4)\n  return y\n}\n",
                          {{"N", 5}});
  ASSERT_EQ(half.size(), 1u);
  EXPECT_EQ(half[0].get("vec"), 8);
  EXPECT_EQ(half[0].get("straddle", 0), 1);
}

// A reduction over the innermost dim takes a warp per output (coalesced
// rows); over an outer dim, a thread per output.
TEST(Schedule, ReductionsPickAWarpOrAThreadPerOutput) {
  auto inner = schedulesOf("graph r(x: f32[A, B]) {\n"
                           "  y = sum(x, dim=1)\n  return y\n}\n",
                           {{"A", 100}, {"B", 300}});
  ASSERT_EQ(inner.size(), 1u);
  EXPECT_EQ(inner[0].kernel, "reduce");
  EXPECT_EQ(inner[0].get("warpPerOutput"), 1);
  auto outer = schedulesOf("graph r(x: f32[A, B]) {\n"
                           "  y = sum(x, dim=0)\n  return y\n}\n",
                           {{"A", 100}, {"B", 300}});
  ASSERT_EQ(outer.size(), 1u);
  EXPECT_EQ(outer[0].get("warpPerOutput"), 0);
  EXPECT_EQ(outer[0].reason, "a thread per output");
}

// Pointwise kernels vectorise along the innermost dim larger than 1 as far
// as it divides, with at most 16 blocks of 256 per SM.
TEST(Schedule, PointwiseVectorsFollowTheInnermostDim) {
  const char *text = "graph p(x: f32[A, B]) {\n  y = relu(x)\n  return y\n}\n";
  auto four = schedulesOf(text, {{"A", 1 << 12}, {"B", 1 << 12}});
  ASSERT_EQ(four.size(), 1u);
  EXPECT_EQ(four[0].kernel, "pointwise");
  EXPECT_EQ(four[0].get("vec"), 4);
  EXPECT_EQ(four[0].get("wide"), 0);
  EXPECT_EQ(four[0].launch.grid, 16u * 132);
  auto two = schedulesOf(text, {{"A", 3}, {"B", 6}});
  ASSERT_EQ(two.size(), 1u);
  EXPECT_EQ(two[0].get("vec"), 2);
  EXPECT_EQ(two[0].launch.grid, 1u);
  auto wide = schedulesOf(text, {{"A", 1 << 16}, {"B", 1 << 15}});
  ASSERT_EQ(wide.size(), 1u);
  EXPECT_EQ(wide[0].get("wide"), 1);
}

// Contractions: the large FFMA tile once it alone fills the SMs, else the
// small one; matmul batches on grid.y; a convolution's groups on grid.y.
TEST(Schedule, ContractionTilesAndBatches) {
  auto linear = [](int out) {
    return "graph l(x: f32[M, 64]) {\n  param w: f32[" + std::to_string(out) +
           ", 64] = zeros\n  y = linear(x, w)\n  return y\n}\n";
  };
  auto big = schedulesOf(linear(4096), {{"M", 4096}});
  ASSERT_EQ(big.size(), 1u);
  EXPECT_EQ(big[0].kernel, "gemmNT");
  EXPECT_EQ(big[0].get("bp"), 128);
  EXPECT_EQ(big[0].launch.grid, 32u * 32);
  auto small = schedulesOf(linear(100), {{"M", 100}});
  ASSERT_EQ(small.size(), 1u);
  EXPECT_EQ(small[0].get("bp"), 64);
  EXPECT_EQ(small[0].launch.grid, 4u);

  auto mm = schedulesOf("graph m(a: f32[B, 5, 7], b: f32[7, 3]) {\n"
                        "  y = matmul(a, b)\n  return y\n}\n",
                        {{"B", 6}});
  ASSERT_EQ(mm.size(), 1u);
  EXPECT_EQ(mm[0].kernel, "gemmNN");
  EXPECT_EQ(mm[0].launch.gridY, 6u);

  auto conv = schedulesOf("graph c(x: f32[2, 8, 9, 9]) {\n"
                          "  param w: f32[8, 2, 3, 3] = zeros\n"
                          "  y = conv2d(x, w, groups=4)\n  return y\n}\n",
                          {});
  ASSERT_EQ(conv.size(), 1u);
  EXPECT_EQ(conv[0].kernel, "conv2d");
  EXPECT_EQ(conv[0].launch.gridY, 4u);
}

// A schedule can be replaced before it is emitted (a tuner's hook): the
// emitter renders the changed one, which NVRTC compiles.
TEST(Schedule, AnAdjustedScheduleIsWhatIsEmitted) {
  auto g = parseGraph("graph p(x: f32[64, 64]) {\n  y = relu(x)\n"
                      "  return y\n}\n",
                      "tune.kg");
  ASSERT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());
  CompileOptions opts = offlineOptions(/*generateOnly=*/false);
  opts.adjustSchedule = [](size_t, Schedule &s) {
    s.set("vec", 1);
    s.launch.grid = 3;
  };
  auto exe = Executable::compile(**g, {{64, 64}}, opts);
  ASSERT_TRUE(static_cast<bool>(exe)) << llvm::toString(exe.takeError());
  ASSERT_EQ((*exe)->kernels().size(), 1u);
  EXPECT_EQ((*exe)->schedules()[0].get("vec"), 1);
  EXPECT_EQ((*exe)->kernels()[0].grid, 3u);
  EXPECT_NE((*exe)->kernels()[0].source.find("kiln::pointwise<4096ll, 1>"),
            std::string::npos)
      << (*exe)->kernels()[0].source;
  EXPECT_EQ((*exe)->builds()[0].log.find("error"), std::string::npos);
}

// A schedule is data: set() changes a parameter in place, adds a new one
// after the others, and str() prints them with the launch.
TEST(Schedule, ParametersAreSetByNameAndPrinted) {
  Schedule s;
  s.kernel = "pointwise";
  s.set("vec", 4);
  s.set("wide", 0);
  s.set("vec", 2);
  s.launch.grid = 8;
  s.launch.block = 256;
  EXPECT_EQ(s.get("vec"), 2);
  EXPECT_EQ(s.templateStr(), "pointwise vec=2 wide=0");
  EXPECT_EQ(s.str(), "pointwise vec=2 wide=0; grid 8 x block 256");
}

} // namespace
} // namespace kiln
