//===- GroupNormScheduleTest.cpp - Launch shapes of GroupNorm kernels -----===//
//
// No GPU needed: the blocks per SM the scheduler gives a register GroupNorm
// kernel with a tail (a cooperative launch, so every block must be resident)
// follow the target's resident-thread limit.
//
//===----------------------------------------------------------------------===//
#include "Engine.h"
#include "OfflineOptions.h"
#include "Parser.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

namespace kiln {
namespace {

/// GroupNorm over slices of 16 (teams of 4 lanes, no prologue), then a min
/// per sample and a broadcast add: one cooperative kernel. 8448 samples
/// of 16 groups are more slices than any grid takes in one round.
std::unique_ptr<Executable> compileFor(const std::string &arch) {
  const char *text = "graph g(x: f32[8448, 256]) {\n"
                     "  param gamma: f32[256] = ones\n"
                     "  param beta: f32[256] = zeros\n"
                     "  param bias: f32[1, 256, 1, 1] = zeros\n"
                     "  y = group_norm(x, gamma, beta, groups=16)\n"
                     "  m = min(y, dim=1, keepdim=true)\n"
                     "  out = add(m, bias)\n  return out\n}\n";
  auto g = parseGraph(text, "schedule.kg");
  EXPECT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());
  if (!g)
    return nullptr;
  auto exe =
      Executable::compile(**g, {{8448, 256}}, offlineOptions(true, arch));
  EXPECT_TRUE(static_cast<bool>(exe)) << llvm::toString(exe.takeError());
  return exe ? std::move(*exe) : nullptr;
}

TEST(GroupNormSchedule, SmallTeamsFillTheSMsButNoMoreThanTheyHold) {
  struct Want {
    const char *arch;
    int perSM, sms;
  };
  // sm_90 and sm_80 hold 2048 threads per SM (eight blocks of 256);
  // sm_89 holds 1536 (six).
  for (const Want &w :
       {Want{"sm_90", 8, 132}, Want{"sm_80", 8, 108}, Want{"sm_89", 6, 108}}) {
    auto exe = compileFor(w.arch);
    ASSERT_TRUE(exe) << w.arch;
    ASSERT_EQ(exe->kernels().size(), 1u) << w.arch;
    const EmittedKernel &k = exe->kernels()[0];
    EXPECT_TRUE(k.cooperative) << w.arch;
    EXPECT_EQ(k.block, 256u) << w.arch;
    EXPECT_EQ(k.grid, unsigned(w.perSM * w.sms)) << w.arch;
    EXPECT_NE(k.source.find(fmt::format("__launch_bounds__(256, {})", w.perSM)),
              std::string::npos)
        << w.arch;
  }
}

// A tail's min/max that the graph returns is stored over its own shape, in
// a loop of its own, when the tail epilogue broadcasts it to a larger one
// (before, it was stored at the epilogue's index: 256x past its buffer).
TEST(GroupNormSchedule, AReturnedTailIsStoredOverItsOwnShape) {
  const char *text = "graph g(x: f32[37, 256]) {\n"
                     "  param bias: f32[1, 256, 1, 1] = zeros\n"
                     "  y = group_norm(x, groups=16)\n"
                     "  m = min(y, dim=1, keepdim=true)\n"
                     "  out = add(m, bias)\n  return out, m\n}\n";
  auto g = parseGraph(text, "tail.kg");
  ASSERT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());
  auto exe = Executable::compile(**g, {{37, 256}}, offlineOptions(false));
  ASSERT_TRUE(static_cast<bool>(exe)) << llvm::toString(exe.takeError());
  ASSERT_EQ((*exe)->kernels().size(), 1u);
  const std::string &src = (*exe)->kernels()[0].source;
  const size_t outLoop = src.find("o < 9472ll;"), mLoop = src.find("o < 37ll;"),
               mStore = src.find("(out_m + ii");
  ASSERT_NE(outLoop, std::string::npos) << src;
  ASSERT_NE(mLoop, std::string::npos) << src;
  EXPECT_LT(outLoop, mLoop);
  EXPECT_GT(mStore, mLoop) << src;
  EXPECT_EQ(src.find("(out_m + ii", mStore + 1), std::string::npos) << src;
}

// eps is a float literal in the generated code whatever its value (1 was
// emitted as `1f`, which NVRTC rejects), in the register and team kernels.
TEST(GroupNormSchedule, EpsOfAnyValueCompiles) {
  for (const char *eps : {"1", "0", "-1.0", "1e10", "inf", "nan"})
    for (int hw : {3, 3000}) {
      std::string text = fmt::format("graph g(x: f32[N, 4, {}]) {{\n"
                                     "  y = group_norm(x, groups=2, eps={})\n"
                                     "  return y\n}}\n",
                                     hw, eps);
      auto g = parseGraph(text, "eps.kg");
      ASSERT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());
      auto exe = Executable::compile(**g, {{3, 4, hw}}, offlineOptions(false));
      EXPECT_TRUE(static_cast<bool>(exe))
          << text << llvm::toString(exe.takeError());
    }
}

// A team kernel keeps its part on chip in the input's dtype: 2 bytes an
// element for f16 and bf16, so L1_35's slices need teams of 37 blocks, not
// 88 (twice the bytes streamed per team barrier); an f32 input, or an f16
// one whose prologue makes f32 (adding an f32 bias), keeps floats.
TEST(GroupNormSchedule, HalfInputsKeepHalfPartsOnChip) {
  struct Want {
    const char *input, *prologue;
    unsigned teams, teamBlocks, bytesPerElement;
  };
  for (const Want &w : {Want{"f16", "", 7, 37, 2}, Want{"bf16", "", 7, 37, 2},
                        Want{"f32", "", 3, 88, 4},
                        Want{"f16", "  x = add(x16, b)\n", 3, 88, 4}}) {
    const bool mixed = *w.prologue != 0;
    std::string text =
        fmt::format("graph g({}: {}[112, 64, 512, 512]{}) {{\n{}"
                    "  y = group_norm(x, groups=8)\n  return y\n}}\n",
                    mixed ? "x16" : "x", w.input,
                    mixed ? ", b: f32[64, 1, 1]" : "", w.prologue);
    auto g = parseGraph(text, "half_parts.kg");
    ASSERT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());
    std::vector<llvm::SmallVector<int64_t, 6>> shapes = {{112, 64, 512, 512}};
    if (mixed)
      shapes.push_back({64, 1, 1});
    auto exe = Executable::compile(**g, shapes, offlineOptions(true));
    ASSERT_TRUE(static_cast<bool>(exe)) << llvm::toString(exe.takeError());
    ASSERT_EQ((*exe)->kernels().size(), 1u) << text;
    const EmittedKernel &k = (*exe)->kernels()[0];
    EXPECT_EQ(k.grid, w.teams * w.teamBlocks) << text;
    EXPECT_NE(k.strategy.find(fmt::format("{} team(s) of {} block(s)", w.teams,
                                          w.teamBlocks)),
              std::string::npos)
        << text << k.strategy;
    // The part of a block: its share of the 2097152-element slice.
    const unsigned part = (2097152 + w.teamBlocks - 1) / w.teamBlocks;
    EXPECT_NEAR(k.sharedBytes, double(part) * w.bytesPerElement,
                8.0 * w.bytesPerElement)
        << text;
  }
}

} // namespace
} // namespace kiln
