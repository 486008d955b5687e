//===- WgmmaEmitTest.cpp - The tensor-core linear's kernel and its arch ---===//
//
// No GPU, no NVRTC: graphs are compiled with generateOnly. A linear with a
// fused epilogue renders kiln::wgmmaLinear with the epilogue's vector width
// and group columns, is marked arch-specific, and its NVRTC request asks
// for sm_90a; the graph's other kernels stay on plain sm_90.
//
//===----------------------------------------------------------------------===//
#include "Engine.h"
#include "OfflineOptions.h"
#include "Parser.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

namespace kiln {
namespace {

/// L2_37's pattern (linear [8, k] x [256, k]^T, swish, + bias, group_norm
/// in groups of 64 columns), then `more` before the return of `outs`.
std::string l2_37(int64_t k, const std::string &more = "",
                  const std::string &outs = "out") {
  return fmt::format("graph l2_37(x: f32[8, {0}]) {{\n"
                     "  param w: f32[256, {0}] = zeros\n"
                     "  param b: f32[256] = zeros\n"
                     "  param bias: f32[256] = zeros\n"
                     "  param gamma: f32[256] = ones\n"
                     "  param beta: f32[256] = zeros\n"
                     "  y = linear(x, w, b)\n"
                     "  s = mul(sigmoid(y), y)\n"
                     "  z = add(s, bias)\n"
                     "  out = group_norm(z, gamma, beta, groups=4)\n"
                     "{1}  return {2}\n}}\n",
                     k, more, outs);
}

/// The kernels of `text` for inputs of `shapes`, generated for `arch` at
/// `precision`.
std::vector<EmittedKernel>
kernelsOfInputs(const std::string &text,
                const std::vector<llvm::SmallVector<int64_t, 6>> &shapes,
                const std::string &arch, MatmulPrecision precision) {
  auto g = parseGraph(text, "wgmma_emit.kg");
  if (!g) {
    ADD_FAILURE() << llvm::toString(g.takeError());
    return {};
  }
  CompileOptions opts = offlineOptions(/*generateOnly=*/true, arch);
  opts.matmulPrecision = precision;
  auto exe = Executable::compile(**g, shapes, opts);
  if (!exe) {
    ADD_FAILURE() << llvm::toString(exe.takeError());
    return {};
  }
  return (*exe)->kernels();
}

/// The kernels of `text` for x of `shape`, generated for `arch` at
/// `precision`.
std::vector<EmittedKernel>
kernelsOf(const std::string &text, const llvm::SmallVector<int64_t, 6> &shape,
          const std::string &arch = "sm_90",
          MatmulPrecision precision = MatmulPrecision::Highest) {
  return kernelsOfInputs(text, {shape}, arch, precision);
}

bool contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

TEST(WgmmaEmit, L2_37RendersTheGroupNormEpilogueForSm90a) {
  auto ks = kernelsOf(l2_37(512), {8, 512});
  ASSERT_EQ(ks.size(), 1u);
  const EmittedKernel &k = ks[0];
  EXPECT_TRUE(contains(k.source, "kiln::WgmmaEpilogue<2, 64>")) << k.source;
  EXPECT_TRUE(contains(k.source, "kiln::WgmmaConfig<128, 4, 3>")) << k.source;
  EXPECT_TRUE(contains(k.name, "gemm_linear_sigmoid_mul_add_group_norm"))
      << k.name;
  EXPECT_TRUE(k.archSpecific);
  EXPECT_EQ(compileRequest(k, "sm_90", {}).arch, "sm_90a");
  // An arch that already is the "a" one stays as it is.
  EXPECT_EQ(compileRequest(k, "sm_90a", {}).arch, "sm_90a");
}

// With w split once per run (x of 4096 rows), the kernel takes the split's
// workspace and the count of the blocks' arrivals after it (zeroed once),
// and the launch is cooperative.
TEST(WgmmaEmit, SplitWTakesItsWorkspaces) {
  std::string tall = l2_37(512);
  tall.replace(tall.find("[8, "), 4, "[4096, ");
  auto ks = kernelsOf(tall, {4096, 512});
  ASSERT_EQ(ks.size(), 1u);
  const EmittedKernel &k = ks[0];
  EXPECT_TRUE(contains(k.source, "kiln::WgmmaConfig<128, 4, 3, "
                                 "kiln::kWgmmaGroupM, 1>"))
      << k.source;
  EXPECT_TRUE(contains(k.source, "float *parts, unsigned long long *launches"))
      << k.source;
  EXPECT_TRUE(contains(k.source, "1e-05f, parts, launches);")) << k.source;
  EXPECT_TRUE(k.cooperative);
  ASSERT_GE(k.params.size(), 2u);
  const KernelParam &parts = k.params[k.params.size() - 2],
                    &launches = k.params.back();
  EXPECT_EQ(parts.kind, KernelParam::Kind::Workspace);
  EXPECT_EQ(parts.bytes, 2u * 256 * 512 * 4);
  EXPECT_FALSE(parts.zeroed);
  EXPECT_EQ(launches.kind, KernelParam::Kind::Workspace);
  EXPECT_EQ(launches.bytes, 8u);
  EXPECT_TRUE(launches.zeroed);

  // 8 rows split nothing: no workspace.
  auto few = kernelsOf(l2_37(512), {8, 512});
  ASSERT_EQ(few.size(), 1u);
  EXPECT_FALSE(contains(few[0].source, "parts")) << few[0].source;
  EXPECT_FALSE(few[0].cooperative);
  for (const KernelParam &p : few[0].params)
    EXPECT_EQ(p.kind, KernelParam::Kind::Tensor);
}

// With constant parameters, the kept split's flag follows the parameters:
// a third workspace, set to 1 when allocated and by run() on new ones.
TEST(WgmmaEmit, AKeptSplitTakesAFlagSetOnNewParameters) {
  std::string tall = l2_37(512);
  tall.replace(tall.find("[8, "), 4, "[4096, ");
  auto g = parseGraph(tall, "kept.kg");
  ASSERT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());
  CompileOptions opts = offlineOptions(/*generateOnly=*/true, "sm_90");
  opts.constantParams = true;
  auto exe = Executable::compile(**g, {{4096, 512}}, opts);
  ASSERT_TRUE(static_cast<bool>(exe)) << llvm::toString(exe.takeError());
  const EmittedKernel &k = (*exe)->kernels()[0];
  EXPECT_TRUE(contains(k.source, "kiln::kWgmmaGroupM, 2>")) << k.source;
  EXPECT_TRUE(contains(k.source, "parts, launches, splitFlag);")) << k.source;
  ASSERT_GE(k.params.size(), 3u);
  const KernelParam &flag = k.params.back();
  EXPECT_EQ(flag.kind, KernelParam::Kind::Workspace);
  EXPECT_EQ(flag.bytes, 4u);
  EXPECT_TRUE(flag.setOnNewParams);
  EXPECT_FALSE(flag.zeroed);
}

// A matmul the tensor cores run takes the linear's epilogue: L2_37's
// pattern on x @ W is one kernel, W transposed into its workspace.
TEST(WgmmaEmit, MatmulTakesTheLinearsEpilogue) {
  auto ks = kernelsOf("graph m(x: f32[8, 512]) {\n"
                      "  param w: f32[512, 256] = zeros\n"
                      "  param bias: f32[256] = zeros\n"
                      "  y = matmul(x, w)\n  s = mul(sigmoid(y), y)\n"
                      "  z = add(s, bias)\n"
                      "  out = group_norm(z, groups=4)\n  return out\n}\n",
                      {8, 512});
  ASSERT_EQ(ks.size(), 1u);
  const EmittedKernel &k = ks[0];
  EXPECT_TRUE(contains(k.name, "gemm_matmul_sigmoid_mul_add_group_norm"))
      << k.name;
  EXPECT_TRUE(contains(k.source, "// Kiln matmul: [8, 512] x [512, 256]"))
      << k.source;
  EXPECT_TRUE(contains(k.source, "kiln::WgmmaEpilogue<2, 64>")) << k.source;
  EXPECT_TRUE(contains(k.source, "kiln::kWgmmaGroupM, 1, true>")) << k.source;
  EXPECT_TRUE(k.cooperative);
  EXPECT_EQ(k.params.back().bytes, 8u); // the launch counter
  EXPECT_EQ(k.params[k.params.size() - 2].bytes, 2u * 512 * 256 * 4);
}

// An odd N allows no pairs of columns: one column at a time, no
// group_norm.
TEST(WgmmaEmit, OddNRendersOneColumnAtATime) {
  auto ks = kernelsOf("graph l(x: f32[8, 512]) {\n"
                      "  param w: f32[63, 512] = zeros\n"
                      "  y = linear(x, w)\n  r = relu(y)\n  return r\n}\n",
                      {8, 512});
  ASSERT_EQ(ks.size(), 1u);
  EXPECT_TRUE(contains(ks[0].source, "WgmmaEpilogue<1, 0>")) << ks[0].source;
  EXPECT_TRUE(ks[0].archSpecific);
}

// Only the tensor-core kernel is compiled for sm_90a: the reduction after
// it in the same graph (over the rows: not the kernel's tail) is not.
TEST(WgmmaEmit, OnlyTheTensorCoreKernelAsksForSm90a) {
  auto ks =
      kernelsOf(l2_37(512, "  m = sum(out, dim=0)\n", "out, m"), {8, 512});
  ASSERT_EQ(ks.size(), 2u);
  EXPECT_TRUE(contains(ks[0].source, "kiln::wgmmaLinear<")) << ks[0].source;
  EXPECT_TRUE(ks[0].archSpecific);
  EXPECT_EQ(compileRequest(ks[0], "sm_90", {}).arch, "sm_90a");
  EXPECT_FALSE(contains(ks[1].source, "wgmma")) << ks[1].source;
  EXPECT_FALSE(ks[1].archSpecific);
  EXPECT_EQ(compileRequest(ks[1], "sm_90", {}).arch, "sm_90");
}

// CompileOptions::matmulPrecision reaches both the partitioner and the
// scheduler: at K = 256 highest keeps FFMA (two kernels, none for sm_90a)
// and high fuses everything into a TF32 kernel of 256-column tiles.
TEST(WgmmaEmit, MatmulPrecisionPicksTheKernel) {
  auto highest = kernelsOf(l2_37(256), {8, 256});
  ASSERT_EQ(highest.size(), 2u);
  EXPECT_TRUE(contains(highest[0].source, "kiln::gemmNT<"))
      << highest[0].source;
  for (const EmittedKernel &k : highest) {
    EXPECT_FALSE(k.archSpecific) << k.name;
    EXPECT_EQ(compileRequest(k, "sm_90", {}).arch, "sm_90");
  }
  auto high = kernelsOf(l2_37(256), {8, 256}, "sm_90", MatmulPrecision::High);
  ASSERT_EQ(high.size(), 1u);
  EXPECT_TRUE(contains(high[0].source, "kiln::WgmmaConfig<256, 4, 1>"))
      << high[0].source;
  EXPECT_TRUE(contains(high[0].source, "kiln::WgmmaEpilogue<2, 64>"));
  EXPECT_TRUE(high[0].archSpecific);
}

// On sm_80 nothing is arch-specific, at any precision.
TEST(WgmmaEmit, Sm80KernelsAreNotArchSpecific) {
  for (MatmulPrecision p : {MatmulPrecision::Highest, MatmulPrecision::High}) {
    auto ks = kernelsOf(l2_37(512), {8, 512}, "sm_80", p);
    ASSERT_EQ(ks.size(), 2u) << precisionName(p).str();
    for (const EmittedKernel &k : ks) {
      EXPECT_FALSE(k.archSpecific) << k.name;
      EXPECT_FALSE(contains(k.source, "wgmma")) << k.name;
      EXPECT_EQ(compileRequest(k, "sm_80", {}).arch, "sm_80");
    }
  }
}

// The tensor-core convolution's epilogue stores (and loads an operand of
// y's shape) at the 64-bit index i where its tiles cover y and its
// consumers do not take turns: constant offsets from i fold into the
// addresses. Elsewhere it indexes with the 32-bit ii, as before: past y's
// edges the template passes index 0 (a select a value), and in ping-pong
// the 64-bit stores slowed relu epilogues (bench/NOTES.md v47).
TEST(WgmmaEmit, ConvolutionEpiloguesIndexIn64BitsWhereTilesCoverY) {
  auto conv = [](int cin, int cout, int hw, const char *act) {
    const std::string text = fmt::format(
        "graph c(x: f32[2, {0}, {2}, {2}], r: f32[2, {1}, {2}, {2}]) {{\n"
        "  param w: f32[{1}, {0}, 3, 3] = zeros\n"
        "  param b: f32[{1}] = zeros\n"
        "  y = conv2d(x, w, b, padding=1)\n"
        "  z = add(y, r)\n  out = {3}(z)\n  return out\n}}\n",
        cin, cout, hw, act);
    auto ks = kernelsOfInputs(text, {{2, cin, hw, hw}, {2, cout, hw, hw}},
                              "sm_90", MatmulPrecision::High);
    EXPECT_EQ(ks.size(), 1u) << text;
    return ks.empty() ? std::string() : ks[0].source;
  };
  const char *turns = "its two consumer warpgroups a tile each in turn";
  // 64 -> 128 streams its weight in parts of 128: no ping-pong.
  const std::string covered = conv(64, 128, 32, "silu");
  EXPECT_FALSE(contains(covered, turns)) << covered;
  EXPECT_TRUE(contains(covered, "out_out + i,")) << covered;
  EXPECT_TRUE(contains(covered, "in_r[i]")) << covered;
  // 30 x 30: the last tiles run past y's edges.
  const std::string edges = conv(64, 128, 30, "silu");
  EXPECT_FALSE(contains(edges, turns)) << edges;
  EXPECT_TRUE(contains(edges, "out_out + ii,")) << edges;
  EXPECT_TRUE(contains(edges, "in_r + ii,")) << edges;
  // 32 -> 64 takes ping-pong.
  const std::string turn = conv(32, 64, 32, "relu");
  EXPECT_TRUE(contains(turn, turns)) << turn;
  EXPECT_TRUE(contains(turn, "out_out + ii,")) << turn;
  EXPECT_TRUE(contains(turn, "in_r[ii]")) << turn;
}

// TF32 epilogues take the short sigmoid and swish (their error far below
// the products'); 3xTF32's and the FFMA kernels' keep the accurate ones.
TEST(WgmmaEmit, TensorCoreEpiloguesAtTf32TakeTheShortSigmoidAndSwish) {
  const std::string linear =
      "graph l(x: f32[N, 1024]) {\n"
      "  param w: f32[96, 1024] = zeros\n  param b: f32[96] = zeros\n"
      "  y = linear(x, w, b)\n  s = sigmoid(y)\n  out = swish(s)\n"
      "  return out\n}\n";
  const std::string conv =
      "graph c(x: f32[2, 32, 32, 32]) {\n"
      "  param w: f32[64, 32, 3, 3] = zeros\n  param b: f32[64] = zeros\n"
      "  y = conv2d(x, w, b, padding=1)\n  s = sigmoid(y)\n"
      "  out = swish(s)\n  return out\n}\n";
  // (K 1024: 3xTF32 at highest, not FFMA.)
  const llvm::SmallVector<int64_t, 6> rows = {300, 1024},
                                      image = {2, 32, 32, 32};
  for (MatmulPrecision p : {MatmulPrecision::High, MatmulPrecision::Medium,
                            MatmulPrecision::Highest})
    for (const auto &[text, shape] :
         {std::pair{linear, rows}, std::pair{conv, image}}) {
      auto ks = kernelsOf(text, shape, "sm_90", p);
      ASSERT_EQ(ks.size(), 1u) << text;
      const std::string &src = ks[0].source;
      const bool tf32 = p != MatmulPrecision::Highest;
      EXPECT_TRUE(contains(src, "wgmma")) << src;
      EXPECT_EQ(contains(src, "kiln::swishShort("), tf32) << src;
      EXPECT_EQ(contains(src, "kiln::sigmoidShort("), tf32) << src;
      EXPECT_EQ(contains(src, "kiln::swish("), !tf32) << src;
      EXPECT_EQ(contains(src, "kiln::sigmoid("), !tf32) << src;
      // The schedule's reason (`kiln plan`'s launch line) says so.
      EXPECT_EQ(contains(ks[0].strategy, "sigmoid and swish in short forms"),
                tf32)
          << ks[0].strategy;
    }
  // On sm_80 the convolution runs on FFMA: fp32 products, accurate forms.
  std::string sm80;
  for (const EmittedKernel &k :
       kernelsOf(conv, image, "sm_80", MatmulPrecision::High))
    sm80 += k.source;
  EXPECT_FALSE(contains(sm80, "wgmma")) << sm80;
  EXPECT_TRUE(contains(sm80, "kiln::swish(")) << sm80;
  EXPECT_FALSE(contains(sm80, "Short(")) << sm80;
}

} // namespace
} // namespace kiln
