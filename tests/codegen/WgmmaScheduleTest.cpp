//===- WgmmaScheduleTest.cpp - When linear runs on Hopper's tensor cores --===//
//
// No GPU, no code generation: a linear alone in its group is scheduled for
// a target and a matmul precision, and the choice between the tensor-core
// kernel (wgmmaLinear: 3xTF32 at highest from K = 512, TF32 at high and
// medium) and the FFMA one (gemmNT) is checked as data, with the tiles, the
// ring's stages, the launch shape and the shared memory it asks for.
//
//===----------------------------------------------------------------------===//
#include "Parser.h"
#include "Pipeline.h"
#include "schedule/Scheduler.h"

#include "kiln/tiling.cuh"

#include "llvm/ADT/STLExtras.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

namespace kiln {
namespace {

constexpr MatmulPrecision kAllPrecisions[] = {
    MatmulPrecision::Highest, MatmulPrecision::High, MatmulPrecision::Medium};

/// The schedule of the one contraction of graph `text` on `arch`'s default
/// target at `precision`.
Schedule scheduleOf(const std::string &text, const std::string &arch,
                    MatmulPrecision precision, bool constantParams = false) {
  auto g = parseGraph(text, "wgmma.kg");
  if (!g) {
    ADD_FAILURE() << llvm::toString(g.takeError());
    return {};
  }
  auto spec = prepareForExecution(**g, {});
  if (!spec) {
    ADD_FAILURE() << llvm::toString(spec.takeError());
    return {};
  }
  FusionPlan plan = partitionGraph(**spec);
  if (plan.groups.size() != 1) {
    ADD_FAILURE() << plan.groups.size() << " groups for a lone contraction";
    return {};
  }
  auto s = scheduleGroup(plan.groups[0], defaultTarget(arch), precision,
                         constantParams);
  if (!s) {
    ADD_FAILURE() << llvm::toString(s.takeError());
    return {};
  }
  return std::move(*s);
}

/// The schedule of y = linear(x, w) for x f32[m, k], w f32[n, k] on `arch`'s
/// default target at `precision`.
Schedule linearSchedule(int64_t k, int64_t n, MatmulPrecision precision,
                        const std::string &arch = "sm_90", int64_t m = 8) {
  return scheduleOf(fmt::format("graph l(x: f32[{0}, {1}]) {{\n"
                                "  param w: f32[{2}, {1}] = zeros\n"
                                "  y = linear(x, w)\n  return y\n}}\n",
                                m, k, n),
                    arch, precision);
}

bool hasParam(const Schedule &s, llvm::StringRef name) {
  return llvm::any_of(s.params,
                      [&](const ScheduleParam &p) { return p.name == name; });
}

/// Checks that `s` is the FFMA linear, for no "a" arch.
void expectFfma(const Schedule &s, const std::string &what) {
  EXPECT_EQ(s.kernel, "gemmNT") << what << ": " << s.str();
  EXPECT_FALSE(s.archSpecific) << what;
  EXPECT_FALSE(hasParam(s, "passes")) << what;
  EXPECT_EQ(s.launch.sharedBytes, 0u) << what;
}

// At highest, from K = 512 (kMin3xTf32K), 3xTF32: three passes in tiles of
// 128 columns (three accumulators leave no room for 256), a ring of four
// stages, a producer warpgroup and two consumers, compiled for sm_90a.
TEST(WgmmaSchedule, HighestFromK512Runs3xTf32) {
  const Schedule s = linearSchedule(512, 64, MatmulPrecision::Highest);
  EXPECT_EQ(s.kernel, "wgmmaLinear") << s.str();
  EXPECT_EQ(s.get("passes"), 3);
  EXPECT_EQ(s.get("bn"), 128);
  EXPECT_EQ(s.get("stages"), 4);
  EXPECT_EQ(s.launch.block, 384u);
  EXPECT_EQ(s.launch.sharedBytes,
            static_cast<unsigned>(wgmmaSharedBytes(128, 4, 3)));
  EXPECT_EQ(s.launch.grid, 1u);
  EXPECT_TRUE(s.archSpecific);
  EXPECT_NE(s.reason.find("3xTF32"), std::string::npos) << s.reason;

  // Wider than 128 columns: still 128-column tiles, one block per tile
  // (K = 512: too short to split).
  const Schedule wide =
      linearSchedule(512, 300, MatmulPrecision::Highest, "sm_90", 200);
  EXPECT_EQ(wide.kernel, "wgmmaLinear");
  EXPECT_EQ(wide.get("bn"), 128);
  EXPECT_EQ(wide.get("stages"), 4);
  EXPECT_EQ(wide.get("splitK"), 1);
  EXPECT_EQ(wide.launch.grid, 2u * 3);

  // sm_90a is Hopper too.
  EXPECT_EQ(linearSchedule(512, 64, MatmulPrecision::Highest, "sm_90a").kernel,
            "wgmmaLinear");
}

// 3xTF32 splits w once per run, into a workspace, where x has 32 row tiles
// or more (4096 rows: each tile would split it again); the blocks then wait
// for each other, so the launch is cooperative. Fewer rows, or TF32, split
// nothing.
TEST(WgmmaSchedule, HighestSplitsWOnceFrom32RowTiles) {
  const Schedule tall =
      linearSchedule(1024, 300, MatmulPrecision::Highest, "sm_90", 3969);
  EXPECT_EQ(tall.get("splitW"), 1) << tall.str();
  EXPECT_TRUE(tall.launch.cooperative);
  EXPECT_NE(tall.reason.find("w split into a workspace of 2.3 MiB each run"),
            std::string::npos)
      << tall.reason;
  const Schedule short_ =
      linearSchedule(1024, 300, MatmulPrecision::Highest, "sm_90", 3968);
  EXPECT_EQ(short_.get("splitW"), 0) << short_.str();
  EXPECT_FALSE(short_.launch.cooperative);
  const Schedule high =
      linearSchedule(1024, 300, MatmulPrecision::High, "sm_90", 8192);
  EXPECT_EQ(high.get("splitW"), 0) << high.str();
  EXPECT_FALSE(high.launch.cooperative);
}

// With constant parameters (kiln run, bench), a parameter w that is split
// before the tiles is split only when the parameters change: splitW 2
// (kWgmmaSplitFlagged). An input w is split every run, and with fewer rows
// nothing changes (the kept parts would be two more copies of w).
TEST(WgmmaSchedule, ConstantParametersKeepTheSplitAcrossRuns) {
  auto schedule = [](const std::string &w, int64_t m) {
    return scheduleOf(
        fmt::format("graph l(x: f32[{}, 1024]{}) {{\n{}  y = linear(x, w)\n"
                    "  return y\n}}\n",
                    m, w == "input" ? ", w: f32[300, 1024]" : "",
                    w == "input" ? "" : "  param w: f32[300, 1024] = zeros\n"),
        "sm_90", MatmulPrecision::Highest, /*constantParams=*/true);
  };
  const Schedule kept = schedule("param", 4096);
  EXPECT_EQ(kept.get("splitW"), kWgmmaSplitFlagged) << kept.str();
  EXPECT_TRUE(kept.launch.cooperative);
  EXPECT_NE(kept.reason.find("w split into a workspace of 2.3 MiB when its "
                             "parameter changes"),
            std::string::npos)
      << kept.reason;
  EXPECT_EQ(schedule("input", 4096).get("splitW"), kWgmmaSplitEachLaunch);
  EXPECT_EQ(schedule("param", 1024).get("splitW"), kWgmmaSplitNone);
}

/// The schedule of out = matmul(x, y), x f32[xs], y f32[ys] (a parameter
/// with `param`), at `precision` on sm_90.
Schedule matmulSchedule(const std::string &xs, const std::string &ys,
                        MatmulPrecision precision, bool param = false,
                        bool constantParams = false) {
  const std::string text =
      param ? fmt::format("graph m(x: f32[{}]) {{\n  param y: f32[{}] = "
                          "zeros\n  out = matmul(x, y)\n  return out\n}}\n",
                          xs, ys)
            : fmt::format("graph m(x: f32[{}], y: f32[{}]) {{\n"
                          "  out = matmul(x, y)\n  return out\n}}\n",
                          xs, ys);
  return scheduleOf(text, "sm_90", precision, constantParams);
}

// matmul with a 2-D right operand runs the tensor-core linear, that operand
// transposed (and split at highest) into a workspace before the tiles:
// every run, or with constant parameters when the parameter changes. A
// batched right operand runs batch after batch, each of its matrices
// transposed. A 1-D one, or K % 4 != 0, keep the FFMA kernel.
TEST(WgmmaSchedule, MatmulWithA2DRightOperandRunsOnTensorCores) {
  const Schedule s =
      matmulSchedule("3, 50, 512", "512, 200", MatmulPrecision::Highest);
  EXPECT_EQ(s.kernel, "wgmmaLinear") << s.str();
  EXPECT_EQ(s.get("passes"), 3);
  EXPECT_EQ(s.get("splitW"), kWgmmaSplitEachLaunch);
  EXPECT_EQ(s.get("tiles"), wgmmaBlocks(150, 200, 128));
  EXPECT_TRUE(s.launch.cooperative);
  EXPECT_NE(s.reason.find("the 512 x 200 operand transposed and split into "
                          "a workspace of 800 KiB each run"),
            std::string::npos)
      << s.reason;
  const Schedule high =
      matmulSchedule("9, 36", "36, 257", MatmulPrecision::High);
  EXPECT_EQ(high.kernel, "wgmmaLinear") << high.str();
  EXPECT_EQ(high.get("passes"), 1);
  EXPECT_NE(high.reason.find("the 36 x 257 operand transposed into"),
            std::string::npos)
      << high.reason;
  const Schedule kept =
      matmulSchedule("8, 512", "512, 64", MatmulPrecision::Highest, true, true);
  EXPECT_EQ(kept.get("splitW"), kWgmmaSplitFlagged) << kept.str();
  const Schedule batched =
      matmulSchedule("3, 8, 512", "3, 512, 64", MatmulPrecision::High);
  EXPECT_EQ(batched.kernel, "wgmmaLinear") << batched.str();
  EXPECT_EQ(batched.get("tiles"), 3 * wgmmaBlocks(8, 64, 128));
  EXPECT_NE(batched.reason.find("the right operand's 512 x 64 matrices (3) "
                                "transposed into a workspace of 384 KiB each "
                                "run, 3 batches"),
            std::string::npos)
      << batched.reason;
  EXPECT_EQ(matmulSchedule("8, 512", "512", MatmulPrecision::High).kernel,
            "gemmNN");
  EXPECT_EQ(matmulSchedule("8, 514", "514, 64", MatmulPrecision::High).kernel,
            "gemmNN");
  EXPECT_EQ(
      matmulSchedule("8, 256", "256, 64", MatmulPrecision::Highest).kernel,
      "gemmNN");
}

// The FFMA matmul puts its batches on grid.y (at most 65535); the
// tensor-core kernel has no such bound: 70000 batches of x folded into its
// rows, or of both operands run batch after batch. Where FFMA runs them
// (sm_80), the matmul is refused at the op, saying where the bound is not.
TEST(WgmmaSchedule, TensorCoreMatmulTakesMoreThan65535Batches) {
  const Schedule folded =
      matmulSchedule("70000, 2, 512", "512, 64", MatmulPrecision::High);
  EXPECT_EQ(folded.kernel, "wgmmaLinear") << folded.str();
  EXPECT_EQ(folded.get("tiles"), wgmmaBlocks(140000, 64, 128));
  const Schedule batched =
      matmulSchedule("70000, 2, 8", "70000, 8, 16", MatmulPrecision::High);
  EXPECT_EQ(batched.kernel, "wgmmaLinear") << batched.str();
  EXPECT_EQ(batched.get("tiles"), 70000);
  auto g = parseGraph("graph m(x: f32[70000, 2, 8], y: f32[70000, 8, 16]) {\n"
                      "  out = matmul(x, y)\n  return out\n}\n",
                      "many.kg");
  ASSERT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());
  auto spec = prepareForExecution(**g, {});
  ASSERT_TRUE(static_cast<bool>(spec)) << llvm::toString(spec.takeError());
  FusionPlan plan = partitionGraph(**spec);
  ASSERT_EQ(plan.groups.size(), 1u);
  auto s = scheduleGroup(plan.groups[0], defaultTarget("sm_80"),
                         MatmulPrecision::High, false);
  ASSERT_FALSE(static_cast<bool>(s));
  const std::string msg = llvm::toString(s.takeError());
  EXPECT_NE(msg.find("many.kg:2:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("matmul with 70000 batches is more than the FFMA kernel "
                     "takes (65535"),
            std::string::npos)
      << msg;
}

// Below K = 512, FFMA is as accurate as 3xTF32 and costs little: highest
// keeps it there, while high takes the tensor cores at the same K.
TEST(WgmmaSchedule, HighestBelowK512KeepsFfma) {
  expectFfma(linearSchedule(256, 64, MatmulPrecision::Highest), "K = 256");
  expectFfma(linearSchedule(508, 64, MatmulPrecision::Highest), "K = 508");
  EXPECT_EQ(linearSchedule(508, 64, MatmulPrecision::High).kernel,
            "wgmmaLinear");
}

// Where the tiles fill at most half of the SMs (66 of the default
// target's 132), K is split: each tile's 128-byte K slices shared out over
// up to 16 blocks with 16 slices each at least, the launch a block per work
// item. More tiles, or too few slices, split nothing.
TEST(WgmmaSchedule, FewTilesSplitK) {
  // 2 x 3 tiles of 128 x 128, K = 4100 (129 slices of 32): 8 ways.
  const Schedule s =
      linearSchedule(4100, 300, MatmulPrecision::Highest, "sm_90", 200);
  EXPECT_EQ(s.get("splitK"), 8) << s.str();
  EXPECT_EQ(s.get("tiles"), 6);
  EXPECT_EQ(s.launch.grid, 48u);
  EXPECT_FALSE(s.launch.cooperative);
  EXPECT_NE(s.reason.find("K split 8 ways (16 slices each or more)"),
            std::string::npos)
      << s.reason;
  // One tile: 16 ways, the most; TF32 tiles of 128 x 256.
  const Schedule one = linearSchedule(8192, 256, MatmulPrecision::High);
  EXPECT_EQ(one.get("splitK"), 16) << one.str();
  EXPECT_EQ(one.launch.grid, 16u);
  // 66 tiles: 2 ways; 67: none.
  EXPECT_EQ(linearSchedule(1024, 256 * 66, MatmulPrecision::High).get("splitK"),
            2);
  EXPECT_EQ(linearSchedule(1024, 256 * 67, MatmulPrecision::High).get("splitK"),
            1);
  // 31 slices: one share; 32: two.
  EXPECT_EQ(linearSchedule(992, 256, MatmulPrecision::High).get("splitK"), 1);
  EXPECT_EQ(linearSchedule(1024, 256, MatmulPrecision::High).get("splitK"), 2);
  // The flagships' GEMMs fill the GPU: no split.
  EXPECT_EQ(linearSchedule(8192, 8192, MatmulPrecision::High, "sm_90", 1024)
                .get("splitK"),
            1);
  EXPECT_EQ(linearSchedule(1024, 4096, MatmulPrecision::Highest, "sm_90", 32768)
                .get("splitK"),
            1);
}

/// The schedule of `op`(x, w) (stride etc. in `attrs`) for x f32[x], w
/// f32[w] at `precision` on `arch`.
Schedule convSchedule(const std::string &op, const std::string &x,
                      const std::string &w, const std::string &attrs,
                      MatmulPrecision precision,
                      const std::string &arch = "sm_90",
                      bool constantParams = false) {
  return scheduleOf(fmt::format("graph c(x: f32[{}]) {{\n"
                                "  param w: f32[{}] = zeros\n"
                                "  y = {}(x, w{})\n  return y\n}}\n",
                                x, w, op, attrs),
                    arch, precision, constantParams);
}

/// The schedule of `conv` (an expression of x and w) for x bf16[x], w
/// bf16[w] at `high` on sm_90.
Schedule bf16ConvSchedule(const std::string &x, const std::string &w,
                          const std::string &conv) {
  return scheduleOf(fmt::format("graph c(x: bf16[{}]) {{\n"
                                "  param w: bf16[{}] = zeros\n"
                                "  y = {}\n  return y\n}}\n",
                                x, w, conv),
                    "sm_90", MatmulPrecision::High);
}

// conv2d whose weight, kept whole in shared memory, leaves parts narrower
// than 64 output channels (32 at highest) streams it through the ring
// beside the patch where the blocks' images can hold it (w a constant
// parameter): 3 x 3 256 -> 256 in parts of 128 at high (two stages), of 32
// at highest (three). With parameters that may change, the images are made
// at every launch.
TEST(WgmmaSchedule, LargeWeightsStreamThroughTheRing) {
  for (MatmulPrecision p : {MatmulPrecision::High, MatmulPrecision::Highest}) {
    const bool high = p == MatmulPrecision::High;
    const Schedule s =
        convSchedule("conv2d", "2, 256, 64, 64", "256, 256, 3, 3",
                     ", padding=1", p, "sm_90a", true);
    ASSERT_EQ(s.kernel, "wgmmaConv") << s.str();
    EXPECT_EQ(s.get("stream", 0), 16) << s.str();
    EXPECT_EQ(s.get("nb"), high ? 128 : 32) << s.str();
    EXPECT_EQ(s.get("stages"), high ? 2 : 3) << s.str();
    const WgmmaConvLayout l(false, 3, 3, 1, 1, 1, 1, 1, 1, 256, high ? 128 : 32,
                            high ? 1 : 3, false, 4, true, 16);
    EXPECT_EQ(s.get("image"), 256 / (high ? 128 : 32) * l.imageBytes);
    EXPECT_EQ(s.launch.sharedBytes, static_cast<unsigned>(l.sharedBytes()));
    EXPECT_NE(s.reason.find("streamed through the ring beside the patch"),
              std::string::npos)
        << s.reason;
    EXPECT_EQ(s.get("splitW"), kWgmmaSplitFlagged) << s.str();
    const Schedule changing =
        convSchedule("conv2d", "2, 256, 64, 64", "256, 256, 3, 3",
                     ", padding=1", p, "sm_90a", false);
    EXPECT_EQ(changing.get("stream", 0), 16) << changing.str();
    EXPECT_EQ(changing.get("nb"), high ? 128 : 32) << changing.str();
    EXPECT_EQ(changing.get("splitW"), kWgmmaSplitEachLaunch) << changing.str();
    EXPECT_NE(changing.reason.find("each run"), std::string::npos)
        << changing.reason;
    // conv_transpose2d streams too; strided, in TF32 products by row phase
    // in parts of 64 (a tile's column phases together, each stage its row
    // phase's 8 taps: two images a part), in 3xTF32's by phase (each block
    // one phase's taps).
    const Schedule transposed =
        convSchedule("conv_transpose2d", "2, 256, 64, 64", "256, 256, 3, 3",
                     ", padding=1", p, "sm_90a", true);
    EXPECT_EQ(transposed.get("stream", 0), 16) << transposed.str();
    EXPECT_EQ(transposed.get("nb"), high ? 128 : 32) << transposed.str();
    EXPECT_EQ(transposed.get("phaseBlocks"), 0) << transposed.str();
    const Schedule byPhase =
        convSchedule("conv_transpose2d", "2, 256, 64, 64", "256, 128, 4, 4",
                     ", stride=2, padding=1", p, "sm_90a", true);
    EXPECT_EQ(byPhase.get("stream", 0), 16) << byPhase.str();
    EXPECT_EQ(byPhase.get("nb"), high ? 64 : 32) << byPhase.str();
    EXPECT_EQ(byPhase.get("phaseBlocks"), high ? 0 : 1) << byPhase.str();
    const WgmmaConvLayout pl(true, 4, 4, 2, 2, 1, 1, 1, 1, 256, high ? 64 : 32,
                             high ? 1 : 3, !high, 4, true, 16);
    EXPECT_EQ(pl.rowImages, high);
    EXPECT_EQ(pl.taps, high ? 8 : 4);
    EXPECT_EQ(pl.images, high ? 2 : 4);
    EXPECT_EQ(pl.streamBytes, pl.taps * (high ? 64 * 64 : 2 * 32 * 64));
    EXPECT_EQ(byPhase.get("image"),
              128 / (high ? 64 : 32) * pl.images * pl.imageBytes);
    if (high)
      EXPECT_NE(byPhase.reason.find("a tile's row phase's taps alone"),
                std::string::npos)
          << byPhase.reason;
    // 4 x 4 of stride 2 from 128 channels: a patch of 34 x 40 pixels, 85
    // KiB a stage of 16 channels, leaves parts of 32 (16 at highest); in
    // stages of 8 channels, 128 (32).
    const Schedule k4 =
        convSchedule("conv2d", "2, 128, 64, 64", "128, 128, 4, 4",
                     ", stride=2, padding=1", p, "sm_90a", true);
    EXPECT_EQ(k4.get("stream", 0), 8) << k4.str();
    EXPECT_EQ(k4.get("nb"), high ? 128 : 32) << k4.str();
    EXPECT_NE(k4.reason.find("a stage of 8 input channels"), std::string::npos)
        << k4.reason;
  }
}

// A convolution with one group, or groups of 8 input channels or more, runs
// on the tensor cores (wgmmaConv): conv2d of any stride and
// conv_transpose2d of any stride (a pass per output phase),
// output channels a multiple of 8 taken in parts of up to 128 (where K is
// 144 or more and one accumulator buffer serves; else 64; highest: 32) by
// blocks of their own, TF32 at high and medium, 3xTF32 at highest; input
// rows of any width, the weight of a part and the patch ring within
// 227 KiB (narrower parts, then two stages, where they do not fit).
// A depthwise conv2d (one input channel a group) runs the direct kernel;
// everything else keeps the FFMA kernel.
TEST(WgmmaSchedule, ConvolutionsRunOnTensorCores) {
  const Schedule l2_19 =
      convSchedule("conv_transpose2d", "2, 64, 256, 256", "64, 64, 3, 3", "",
                   MatmulPrecision::High);
  EXPECT_EQ(l2_19.kernel, "wgmmaConv") << l2_19.str();
  EXPECT_TRUE(l2_19.archSpecific);
  EXPECT_EQ(l2_19.launch.block, 384u);
  EXPECT_EQ(l2_19.get("tiles"), 2 * 17 * 17);
  EXPECT_EQ(l2_19.launch.grid, 132u);
  EXPECT_EQ(l2_19.get("stages"), 3);
  EXPECT_EQ(l2_19.get("passes"), 1);
  EXPECT_EQ(l2_19.get("nb"), 64);
  constexpr WgmmaConvLayout l2_19Layout(true, 3, 3, 1, 1, 0, 0, 1, 1, 64, 64, 1,
                                        false);
  EXPECT_EQ(l2_19.launch.sharedBytes,
            static_cast<unsigned>(l2_19Layout.sharedBytes()));
  EXPECT_EQ(l2_19Layout.plane % 32, 8); // 18 rows of 20 columns: 360 words
  EXPECT_NE(l2_19.reason.find("TF32 tensor cores"), std::string::npos)
      << l2_19.reason;
  EXPECT_EQ(convSchedule("conv_transpose2d", "2, 64, 256, 256", "64, 64, 3, 3",
                         "", MatmulPrecision::Medium)
                .kernel,
            "wgmmaConv");
  // 64 channels with padding 1: 24-column rows, two stages.
  const Schedule padded =
      convSchedule("conv2d", "2, 64, 32, 32", "64, 64, 3, 3", ", padding=1",
                   MatmulPrecision::High);
  EXPECT_EQ(padded.kernel, "wgmmaConv") << padded.str();
  EXPECT_EQ(padded.get("stages"), 2);
  // Ping-pong consumers: one column phase a tile, parts of 32, or of 64
  // with K >= 64 (f16 and bf16 tensors: 288).
  EXPECT_EQ(padded.get("pingPong"), 1);
  EXPECT_NE(padded.reason.find("a tile each in turn"), std::string::npos)
      << padded.reason;
  EXPECT_EQ(l2_19.get("pingPong"), 1); // conv_transpose2d of stride 1
  EXPECT_EQ(convSchedule("conv2d", "2, 16, 32, 32", "64, 16, 3, 3",
                         ", padding=1", MatmulPrecision::High)
                .get("pingPong"),
            1); // parts of 64, K 144
  EXPECT_EQ(convSchedule("conv2d", "2, 32, 32, 32", "64, 32, 1, 1", "",
                         MatmulPrecision::High)
                .get("pingPong"),
            0); // parts of 64, K 32
  const Schedule k16 = bf16ConvSchedule("2, 16, 32, 32", "64, 16, 3, 3",
                                        "conv2d(x, w, padding=1)");
  EXPECT_EQ(k16.get("nb"), 64) << k16.str();
  EXPECT_EQ(k16.get("pingPong"), 0) << k16.str(); // k16 products, K 144
  // Halves at stride 2 multiply in TF32 (k16's stages do not fit), and
  // keep K 288 too (ptxas spilled in ping-pong at K 144).
  const Schedule s2 = bf16ConvSchedule("2, 16, 64, 64", "64, 16, 3, 3",
                                       "conv2d(x, w, stride=2, padding=1)");
  EXPECT_EQ(s2.get("nb"), 64) << s2.str();
  EXPECT_EQ(s2.get("pingPong"), 0) << s2.str();
  EXPECT_EQ(convSchedule("conv2d", "2, 16, 32, 32", "32, 16, 3, 3",
                         ", padding=1", MatmulPrecision::High)
                .get("pingPong"),
            1); // parts of 32, K 144
  EXPECT_EQ(convSchedule("conv2d", "2, 16, 32, 32", "16, 16, 3, 3",
                         ", padding=1", MatmulPrecision::High)
                .get("pingPong"),
            0); // parts of 16
  EXPECT_EQ(convSchedule("conv_transpose2d", "2, 32, 32, 32", "32, 32, 3, 3",
                         ", stride=2, padding=1, output_padding=1",
                         MatmulPrecision::High)
                .get("pingPong"),
            0); // both column phases in a tile
  EXPECT_EQ(convSchedule("conv2d", "2, 64, 32, 32", "64, 64, 3, 3",
                         ", padding=1", MatmulPrecision::Highest)
                .get("pingPong"),
            0); // 3xTF32

  // Groups of 8 input channels or more: a block within one group, its
  // output channels in parts of that group's.
  const Schedule grouped =
      convSchedule("conv2d", "2, 64, 32, 32", "128, 32, 3, 3", ", groups=2",
                   MatmulPrecision::High);
  EXPECT_EQ(grouped.kernel, "wgmmaConv") << grouped.str();
  EXPECT_EQ(grouped.get("nb"), 64);
  EXPECT_NE(grouped.reason.find("one of the 2 groups"), std::string::npos)
      << grouped.reason;
  EXPECT_EQ(convSchedule("conv2d", "2, 64, 32, 32", "64, 8, 3, 3", ", groups=8",
                         MatmulPrecision::High)
                .get("nb"),
            8);
  EXPECT_EQ(convSchedule("conv_transpose2d", "2, 32, 32, 32", "32, 16, 3, 3",
                         ", stride=2, groups=2", MatmulPrecision::Highest)
                .kernel,
            "wgmmaConv");

  // Input rows of any width (W % 4 != 0: copies of 8 or 4 bytes).
  for (const char *x : {"2, 64, 32, 30", "2, 64, 14, 14", "2, 64, 7, 7"})
    EXPECT_EQ(convSchedule("conv2d", x, "64, 64, 3, 3", ", padding=1",
                           MatmulPrecision::High)
                  .kernel,
              "wgmmaConv")
        << x;

  // Depthwise: the direct kernel at every precision, a channel multiplier
  // of 2, stride and dilation.
  for (MatmulPrecision p : {MatmulPrecision::High, MatmulPrecision::Highest}) {
    const Schedule dw = convSchedule("conv2d", "2, 64, 32, 30", "128, 1, 3, 3",
                                     ", stride=2, dilation=2, groups=64", p);
    EXPECT_EQ(dw.kernel, "depthwiseConv2d") << dw.str();
    EXPECT_EQ(dw.launch.grid, 2u * 128 * 1 * 1) << dw.str(); // 14 x 13 outputs
    EXPECT_EQ(dw.get("rows"), 16) << dw.str(); // no more than the image
    EXPECT_NE(dw.reason.find("direct depthwise"), std::string::npos)
        << dw.reason;
  }

  // Tiles of 64 rows where the image has them and their input fits 48 KiB
  // (3 x 3, stride 2, dilation 2: 32).
  EXPECT_EQ(convSchedule("conv2d", "2, 64, 256, 256", "64, 1, 3, 3",
                         ", padding=1, groups=64", MatmulPrecision::High)
                .get("rows"),
            64);
  EXPECT_EQ(convSchedule("conv2d", "2, 64, 256, 256", "64, 1, 3, 3",
                         ", stride=2, dilation=2, groups=64",
                         MatmulPrecision::High)
                .get("rows"),
            32);

  const struct {
    const char *what, *op, *x, *w, *attrs;
  } ffma[] = {
      {"groups of 4 input channels", "conv2d", "2, 64, 32, 32", "64, 4, 3, 3",
       ", groups=16"},
      {"depthwise of 81 taps", "conv2d", "2, 64, 32, 32", "64, 1, 9, 9",
       ", padding=4, groups=64"},
      {"groups of 4 output channels", "conv2d", "2, 64, 32, 32", "32, 8, 3, 3",
       ", groups=8"},
      {"12 output channels", "conv2d", "2, 64, 32, 32", "12, 64, 3, 3", ""},
      // 2^15 slices of 32 input channels: GiBs in parts of 64, counted
      // before the layout's int.
      {"2^20 input channels", "conv2d", "1, 1048576, 4, 4", "64, 1048576, 3, 3",
       ""},
      {"a dilated kernel of 601", "conv2d", "1, 16, 700, 700", "16, 16, 3, 3",
       ", dilation=300"},
  };
  for (const auto &c : ffma)
    EXPECT_EQ(
        convSchedule(c.op, c.x, c.w, c.attrs, MatmulPrecision::High).kernel,
        "conv2d")
        << c.what;
  // A weight part of 288 KiB even in 8 channels streams through the ring.
  const Schedule deep = convSchedule(
      "conv2d", "2, 1024, 8, 8", "64, 1024, 3, 3", "", MatmulPrecision::High);
  ASSERT_EQ(deep.kernel, "wgmmaConv") << deep.str();
  EXPECT_EQ(deep.get("stream", 0), 16) << deep.str();
  EXPECT_EQ(deep.get("nb"), 64) << deep.str();
  // Parts of the output channels: the widest that divides Cout and fits.
  const struct {
    const char *what, *op, *x, *w, *attrs;
    MatmulPrecision precision;
    int nb;
    long long items;
  } parts[] = {
      {"32 output channels", "conv2d", "2, 64, 32, 32", "32, 64, 3, 3", "",
       MatmulPrecision::High, 32, 2 * 2 * 2},
      // Streamed: kept whole (288 KiB in 128 channels), parts of 64.
      {"128 output channels", "conv2d", "2, 64, 32, 32", "128, 64, 3, 3",
       ", padding=1", MatmulPrecision::High, 128, 2 * 2 * 2},
      // 128 a block where its weight fits (144 KiB) and K = 288.
      {"128 from 32 channels", "conv2d", "2, 32, 32, 32", "128, 32, 3, 3",
       ", padding=1", MatmulPrecision::High, 128, 2 * 2 * 2},
      // 128 a block from K = 64 (a 1 x 1 of 64 channels), not from 32.
      {"1 x 1 into 128", "conv2d", "2, 64, 32, 32", "128, 64, 1, 1", "",
       MatmulPrecision::High, 128, 2 * 2 * 2},
      {"1 x 1 from 32 into 128", "conv2d", "2, 32, 32, 32", "128, 32, 1, 1", "",
       MatmulPrecision::High, 64, 2 * 2 * 2},
      // Both column phases a tile (two accumulator buffers): 64 at most.
      // 32 x 32 outputs: a 16 x 16 tile of each phase, two row phases.
      {"stride 2 into 128", "conv_transpose2d", "2, 16, 16, 16",
       "16, 128, 3, 3", ", stride=2, padding=1, output_padding=1",
       MatmulPrecision::High, 64, 2 * 2},
      {"128 at highest", "conv2d", "2, 64, 32, 32", "128, 64, 3, 3",
       ", padding=1", MatmulPrecision::Highest, 32, 2 * 2 * 2},
      {"Cin 8 (zeros to 16)", "conv2d", "2, 8, 32, 32", "64, 8, 3, 3", "",
       MatmulPrecision::High, 64, 2 * 2 * 2},
      {"40 channels", "conv2d", "2, 16, 32, 32", "40, 16, 1, 1", "",
       MatmulPrecision::High, 8, 2 * 2 * 2},
      // Streamed (kept whole: 400 KiB in 64 channels).
      {"a 5 x 5 weight", "conv2d", "2, 64, 32, 32", "64, 64, 5, 5", "",
       MatmulPrecision::High, 64, 2 * 2 * 2},
      // 128 x 128 outputs: 4 phases of 64 x 64, 4 x 4 tiles each; an item
      // takes both column phases of a tile (TF32).
      {"stride 2, kernel 4", "conv_transpose2d", "2, 64, 64, 64",
       "64, 32, 4, 4", ", stride=2, padding=1", MatmulPrecision::High, 32,
       2 * 2 * 4 * 4},
      // 129 x 129 outputs: phases of 65 and 64 rows, 5 x 5 tiles.
      {"stride 2, kernel 3", "conv_transpose2d", "2, 64, 64, 64",
       "64, 64, 3, 3", ", stride=2", MatmulPrecision::High, 64, 2 * 2 * 5 * 5},
  };
  for (const auto &c : parts) {
    const Schedule s = convSchedule(c.op, c.x, c.w, c.attrs, c.precision);
    ASSERT_EQ(s.kernel, "wgmmaConv") << c.what;
    EXPECT_EQ(s.get("phaseBlocks"), 0) << c.what;
    // Pairs of neighbouring columns where the rows are even (column stride
    // 1, or both column phases a tile): all but the 129 columns.
    EXPECT_EQ(s.get("vec"), std::string(c.what) == "stride 2, kernel 3" ? 1 : 2)
        << c.what;
    EXPECT_EQ(s.get("nb"), c.nb) << c.what;
    EXPECT_EQ(s.get("tiles"), c.items) << c.what;
    // Cout: w's first dim, conv_transpose2d's second.
    const std::string w = c.w;
    const long long cout = std::string(c.op) == "conv2d"
                               ? std::stoll(w)
                               : std::stoll(w.substr(w.find(',') + 1));
    const long long n = cout / c.nb; // parts
    EXPECT_EQ(s.launch.grid % n, 0u) << c.what;
    EXPECT_EQ(s.launch.grid, std::min<long long>(c.items * n, 132) / n * n)
        << c.what;
  }
  // conv2d of stride 2: the tile's patch spans 33 x 36 input pixels (76
  // KiB a stage of 16 channels), two stages beside 64 channels' weight.
  const Schedule strided =
      convSchedule("conv2d", "2, 32, 64, 64", "64, 32, 3, 3",
                   ", stride=2, padding=1", MatmulPrecision::High);
  ASSERT_EQ(strided.kernel, "wgmmaConv") << strided.str();
  EXPECT_EQ(strided.get("nb"), 64);
  EXPECT_EQ(strided.get("stages"), 2);
  EXPECT_EQ(strided.get("tiles"), 2 * 2 * 2); // 32 x 32 outputs
  constexpr WgmmaConvLayout stridedLayout(false, 3, 3, 2, 2, 1, 1, 1, 1, 32, 64,
                                          1, false);
  EXPECT_EQ(stridedLayout.rows, 33);
  EXPECT_EQ(stridedLayout.rowW, 36);
  EXPECT_NE(strided.reason.find("input stride 2x2"), std::string::npos)
      << strided.reason;
  // Stride 2 over 64 input channels: 64 channels' weight (144 KiB) and two
  // stages do not fit, 32 do; streamed, 64, in ping-pong, where stages of
  // 16 channels would leave two: stages of 8, three.
  const Schedule strided64 =
      convSchedule("conv2d", "2, 64, 64, 64", "64, 64, 3, 3",
                   ", stride=2, padding=1", MatmulPrecision::High);
  EXPECT_EQ(strided64.get("nb"), 64);
  EXPECT_EQ(strided64.get("pingPong"), 1) << strided64.str();
  EXPECT_EQ(strided64.get("stream", 0), 8) << strided64.str();
  EXPECT_EQ(strided64.get("stages"), 3) << strided64.str();
  // A strided conv_transpose2d whose every tap would leave parts of 16
  // channels: blocks of one phase each, keeping its 4 taps of 32 channels.
  const Schedule byPhase =
      convSchedule("conv_transpose2d", "2, 128, 64, 64", "128, 32, 4, 4",
                   ", stride=2, padding=1", MatmulPrecision::High);
  ASSERT_EQ(byPhase.kernel, "wgmmaConv") << byPhase.str();
  EXPECT_EQ(byPhase.get("phaseBlocks"), 1);
  EXPECT_EQ(byPhase.get("nb"), 32);
  constexpr WgmmaConvLayout byPhaseLayout(true, 4, 4, 2, 2, 1, 1, 1, 1, 128, 32,
                                          1, true);
  EXPECT_EQ(byPhaseLayout.taps, 4);
  EXPECT_EQ(byPhaseLayout.weightBytes, 4 * 4 * 32 * 128);
  // Into 64 channels (a multiple of 64) the weight streams instead, in
  // parts of 64 with a tile's column phases together, each stage its row
  // phase's 8 taps.
  const Schedule byRows =
      convSchedule("conv_transpose2d", "2, 128, 64, 64", "128, 64, 4, 4",
                   ", stride=2, padding=1", MatmulPrecision::High);
  EXPECT_EQ(byRows.get("phaseBlocks"), 0) << byRows.str();
  EXPECT_EQ(byRows.get("nb"), 64) << byRows.str();
  EXPECT_EQ(byRows.get("stream", 0), 16) << byRows.str();
  EXPECT_EQ(byRows.get("vec"), 2) << byRows.str();
  EXPECT_NE(byPhase.reason.find("a phase a block"), std::string::npos)
      << byPhase.reason;
  // Tiles from a counter (two for each part of the output channels, 8
  // bytes), except by phase, whose blocks keep dealing out their phase's.
  EXPECT_EQ(byPhase.get("tickets"), 0);
  EXPECT_EQ(l2_19.get("tickets"), 8);
  EXPECT_NE(l2_19.reason.find("next tile from a counter"), std::string::npos)
      << l2_19.reason;
  EXPECT_EQ(convSchedule("conv2d", "2, 32, 128, 128", "128, 32, 1, 1", "",
                         MatmulPrecision::High)
                .get("tickets"),
            16); // two parts of 64
  const Schedule accurate =
      convSchedule("conv_transpose2d", "2, 64, 256, 256", "64, 64, 3, 3", "",
                   MatmulPrecision::Highest);
  EXPECT_EQ(accurate.kernel, "wgmmaConv") << accurate.str();
  EXPECT_EQ(accurate.get("passes"), 3);
  EXPECT_EQ(accurate.launch.grid, 132u);
  EXPECT_EQ(accurate.launch.sharedBytes, l2_19.launch.sharedBytes);
  EXPECT_NE(accurate.reason.find("3xTF32"), std::string::npos)
      << accurate.reason;
  // One tile: two blocks, one a half of the channels.
  EXPECT_EQ(convSchedule("conv2d", "1, 16, 8, 8", "64, 16, 3, 3", ", padding=1",
                         MatmulPrecision::Highest)
                .launch.grid,
            2u);
  EXPECT_EQ(convSchedule("conv_transpose2d", "2, 64, 256, 256", "64, 64, 3, 3",
                         "", MatmulPrecision::High, "sm_80")
                .kernel,
            "convTranspose2d");
}

// The plan says where the row taps of a column tap share their fragments
// (wgmmaConvSharesRows, which the template reads too): TF32 at input row
// stride 1 (conv2d and conv_transpose2d, ping-pong or not), k16 in ping-pong
// conv2d only, 3xTF32 with one output phase and 2 or 3 row taps; not conv2d
// of stride 2, not k16's conv_transpose2d, not 3xTF32 by phase or of one
// row tap.
TEST(WgmmaSchedule, ConvolutionReasonSaysWhereRowTapsShareFragments) {
  const std::string shared = "each patch row's fragments loaded once";
  auto shares = [&](const Schedule &s) {
    EXPECT_EQ(s.kernel, "wgmmaConv") << s.str();
    return s.reason.find(shared) != std::string::npos;
  };
  const auto high = MatmulPrecision::High;
  EXPECT_TRUE(shares(convSchedule("conv_transpose2d", "2, 64, 256, 256",
                                  "64, 64, 3, 3", "", high)));
  const Schedule parts128 = convSchedule("conv2d", "2, 16, 32, 32",
                                         "128, 16, 3, 3", ", padding=1", high);
  EXPECT_EQ(parts128.get("pingPong"), 0) << parts128.str(); // parts of 128
  EXPECT_TRUE(shares(parts128));
  const auto highest = MatmulPrecision::Highest;
  EXPECT_TRUE(shares(convSchedule("conv_transpose2d", "2, 64, 256, 256",
                                  "64, 64, 3, 3", "", highest)));
  EXPECT_FALSE(
      shares(convSchedule("conv_transpose2d", "2, 64, 64, 64", "64, 64, 4, 4",
                          ", stride=2, padding=1", highest)));
  EXPECT_FALSE(shares(
      convSchedule("conv2d", "2, 64, 64, 64", "64, 64, 1, 1", "", highest)));
  EXPECT_FALSE(shares(convSchedule("conv2d", "2, 32, 64, 64", "64, 32, 3, 3",
                                   ", stride=2, padding=1", high)));
  const Schedule conv = bf16ConvSchedule("2, 64, 64, 64", "64, 64, 3, 3",
                                         "conv2d(x, w, padding=1)");
  EXPECT_EQ(conv.get("pingPong"), 1);
  EXPECT_NE(conv.reason.find("bf16 tensor cores"), std::string::npos)
      << conv.reason;
  EXPECT_TRUE(shares(conv));
  const Schedule convt = bf16ConvSchedule("2, 64, 64, 64", "64, 64, 3, 3",
                                          "conv_transpose2d(x, w)");
  EXPECT_EQ(convt.get("pingPong"), 1);
  EXPECT_FALSE(shares(convt));
  // Wide halves stream their weight in k16 products (3 x 3 256 -> 256:
  // parts of 16 kept whole, 128 streamed), 128 -> 64 not in ping-pong
  // (k16's ran slower in it); conv2d 4
  // x 4 of stride 2 from 128 (its k16 stages do not fit) in TF32 products,
  // stages of 8 channels.
  const Schedule wide = bf16ConvSchedule("2, 256, 32, 32", "256, 256, 3, 3",
                                         "conv2d(x, w, padding=1)");
  EXPECT_EQ(wide.get("stream", 0), 16) << wide.str();
  EXPECT_EQ(wide.get("nb"), 128) << wide.str();
  EXPECT_NE(wide.reason.find("bf16 tensor cores"), std::string::npos)
      << wide.reason;
  const Schedule narrow = bf16ConvSchedule("2, 128, 32, 32", "64, 128, 3, 3",
                                           "conv2d(x, w, padding=1)");
  EXPECT_EQ(narrow.get("stream", 0), 16) << narrow.str();
  EXPECT_EQ(narrow.get("nb"), 64) << narrow.str();
  EXPECT_EQ(narrow.get("pingPong"), 0) << narrow.str();
  const Schedule strided = bf16ConvSchedule(
      "2, 128, 64, 64", "128, 128, 4, 4", "conv2d(x, w, stride=2, padding=1)");
  EXPECT_EQ(strided.get("stream", 0), 8) << strided.str();
  EXPECT_EQ(strided.get("nb"), 128) << strided.str();
  EXPECT_NE(strided.reason.find("TF32 (exact for bf16)"), std::string::npos)
      << strided.reason;
}

// With constant parameters the tensor-core convolution makes its blocks'
// images of the weight once (when the parameter changes) into a workspace
// of a part's shared-memory weight per part (with blocks by phase, per part
// and phase), a cooperative launch, where a block's part has 8192 values or
// more; without them, with a weight that is a graph input, or a smaller
// part, each block gathers its part from w.
TEST(WgmmaSchedule, ConvolutionWeightImagesWithConstantParameters) {
  const Schedule l2_19 =
      convSchedule("conv_transpose2d", "2, 64, 256, 256", "64, 64, 3, 3", "",
                   MatmulPrecision::High, "sm_90", /*constantParams=*/true);
  ASSERT_EQ(l2_19.kernel, "wgmmaConv") << l2_19.str();
  EXPECT_EQ(l2_19.get("image"), 9 * 2 * 64 * 128); // one part of 64
  EXPECT_EQ(l2_19.get("splitW"), kWgmmaSplitFlagged);
  EXPECT_TRUE(l2_19.launch.cooperative);
  EXPECT_NE(l2_19.reason.find("when its parameter changes"), std::string::npos)
      << l2_19.reason;
  // Two parts of 64 at high; 3xTF32's parts of 32 keep big and small.
  EXPECT_EQ(convSchedule("conv2d", "2, 64, 32, 32", "128, 64, 3, 3",
                         ", padding=1", MatmulPrecision::High, "sm_90", true)
                .get("image"),
            2 * (9 * 2 * 64 * 128));
  EXPECT_EQ(convSchedule("conv2d", "2, 64, 32, 32", "128, 64, 3, 3",
                         ", padding=1", MatmulPrecision::Highest, "sm_90", true)
                .get("image"),
            4 * (9 * 2 * 32 * 128 * 2));
  // By phase: a part of 32 and 4 phases of 4 taps.
  const Schedule byPhase = convSchedule(
      "conv_transpose2d", "2, 128, 64, 64", "128, 32, 4, 4",
      ", stride=2, padding=1", MatmulPrecision::High, "sm_90", true);
  ASSERT_EQ(byPhase.get("phaseBlocks"), 1) << byPhase.str();
  EXPECT_EQ(byPhase.get("image"), 4 * (4 * 4 * 32 * 128));
  // By row phase (streamed): a part of 64, 2 row phases of 8 taps, 8
  // stages of 16 channels.
  EXPECT_EQ(convSchedule("conv_transpose2d", "2, 128, 64, 64", "128, 64, 4, 4",
                         ", stride=2, padding=1", MatmulPrecision::High,
                         "sm_90", true)
                .get("image"),
            2 * 8 * (8 * 64 * 64));
  // A block's part of fewer than 8192 values: gathered (the cooperative
  // launch would cost more): Cin 8 into 32 channels, 9 taps (2304).
  EXPECT_EQ(convSchedule("conv2d", "2, 8, 64, 64", "32, 8, 3, 3", ", padding=1",
                         MatmulPrecision::High, "sm_90", true)
                .get("image"),
            0);
  // Not constant: gathered by each block, no grid barrier.
  const Schedule gathered =
      convSchedule("conv_transpose2d", "2, 64, 256, 256", "64, 64, 3, 3", "",
                   MatmulPrecision::High);
  EXPECT_EQ(gathered.get("image"), 0);
  EXPECT_FALSE(gathered.launch.cooperative);
  const Schedule input =
      scheduleOf("graph c(x: f32[2, 64, 32, 32], w: f32[64, 64, 3, 3]) {\n"
                 "  y = conv2d(x, w, padding=1)\n  return y\n}\n",
                 "sm_90", MatmulPrecision::High, /*constantParams=*/true);
  ASSERT_EQ(input.kernel, "wgmmaConv") << input.str();
  EXPECT_EQ(input.get("image"), 0);
}

// TF32 (one pass) needs only K % 4 == 0, however small K is.
TEST(WgmmaSchedule, HighRunsTf32FromAnyK) {
  const Schedule s = linearSchedule(4, 64, MatmulPrecision::High);
  EXPECT_EQ(s.kernel, "wgmmaLinear") << s.str();
  EXPECT_EQ(s.get("passes"), 1);
  EXPECT_TRUE(s.archSpecific);
  EXPECT_NE(s.reason.find("TF32 tensor cores"), std::string::npos) << s.reason;
  EXPECT_EQ(s.reason.find("3xTF32"), std::string::npos) << s.reason;
}

// TF32 takes 256-column tiles (4 stages) once the output is wider than 128
// columns, else 128-column tiles with a deeper ring (6 stages).
TEST(WgmmaSchedule, HighTileWidthFollowsN) {
  const Schedule wide =
      linearSchedule(64, 129, MatmulPrecision::High, "sm_90", 300);
  EXPECT_EQ(wide.get("bn"), 256);
  EXPECT_EQ(wide.get("stages"), 4);
  EXPECT_EQ(wide.launch.sharedBytes,
            static_cast<unsigned>(wgmmaSharedBytes(256, 4, 1)));
  EXPECT_EQ(wide.launch.grid,
            static_cast<unsigned>(wgmmaBlocks(300, 129, 256)));
  EXPECT_EQ(wide.launch.grid, 3u);

  const Schedule narrow =
      linearSchedule(64, 128, MatmulPrecision::High, "sm_90", 300);
  EXPECT_EQ(narrow.get("bn"), 128);
  EXPECT_EQ(narrow.get("stages"), 6);
  EXPECT_EQ(narrow.launch.sharedBytes,
            static_cast<unsigned>(wgmmaSharedBytes(128, 6, 1)));
  EXPECT_EQ(narrow.launch.grid, 3u);
}

// The tensor-core kernel copies 16-byte rows of x and w: K % 4 != 0 runs
// FFMA whatever the precision, as does K = 0 (the output is the bias).
TEST(WgmmaSchedule, KThatIsNotAMultipleOf4OrZeroKeepsFfma) {
  for (MatmulPrecision p : kAllPrecisions) {
    const std::string name = precisionName(p).str();
    expectFfma(linearSchedule(514, 64, p), name + ", K = 514");
    expectFfma(linearSchedule(1023, 256, p), name + ", K = 1023");
    expectFfma(linearSchedule(6, 64, p), name + ", K = 6");
    expectFfma(linearSchedule(0, 64, p), name + ", K = 0");
  }
}

// Before Hopper there is no wgmma: FFMA at every precision.
TEST(WgmmaSchedule, Sm80KeepsFfmaAtEveryPrecision) {
  for (MatmulPrecision p : kAllPrecisions)
    expectFfma(linearSchedule(1024, 256, p, "sm_80"), precisionName(p).str());
}

// Medium allows bf16 products; on f32 tensors Kiln runs TF32, exactly as
// high does (docs/precision.md says why).
TEST(WgmmaSchedule, MediumSchedulesAsHigh) {
  const struct {
    int64_t k, n;
  } shapes[] = {{4, 64}, {256, 128}, {512, 129}, {1024, 512}, {6, 64}};
  for (const auto &sh : shapes) {
    const Schedule high = linearSchedule(sh.k, sh.n, MatmulPrecision::High);
    const Schedule medium = linearSchedule(sh.k, sh.n, MatmulPrecision::Medium);
    EXPECT_EQ(medium.str(), high.str()) << "K = " << sh.k << ", N = " << sh.n;
    EXPECT_EQ(medium.archSpecific, high.archSpecific);
  }
}

} // namespace
} // namespace kiln
