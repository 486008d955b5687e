//===- HalfCodegenTest.cpp - f16 and bf16 tensors in generated kernels ----===//
//
// No GPU needed. Elementwise, reduction and GroupNorm kernels take f16 and
// bf16 tensors: loads convert to float, each op's result is rounded to its
// dtype, stores convert back. Every such kernel compiles with NVRTC for
// sm_90 and sm_80; so does f16 and bf16 linear on Hopper (sm_90a), and
// other contractions with half operands are refused with the op's
// location. (tests/gpu runs them against the reference evaluator.)
//
//===----------------------------------------------------------------------===//
#include "Engine.h"
#include "Execute.h"
#include "IR/OpInfo.h"
#include "OfflineOptions.h"
#include "Parser.h"

#include "llvm/ADT/StringExtras.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

namespace kiln {
namespace {

struct HalfCase {
  std::string name;
  std::string kg;
  std::vector<llvm::SmallVector<int64_t, 6>> shapes;
  std::vector<std::string> expect; // substrings of some kernel's source
};

void PrintTo(const HalfCase &c, std::ostream *os) { *os << c.name; }

class HalfKernels : public ::testing::TestWithParam<HalfCase> {};

std::string sources(const Executable &exe) {
  std::string all;
  for (const EmittedKernel &k : exe.kernels())
    all += k.source;
  return all;
}

TEST_P(HalfKernels, GenerateAndCompileForSm90AndSm80) {
  const HalfCase &c = GetParam();
  auto g = parseGraph(c.kg, c.name + ".kg");
  ASSERT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());
  for (const char *arch : {"sm_90", "sm_80"}) {
    auto exe = Executable::compile(**g, c.shapes, offlineOptions(false, arch));
    ASSERT_TRUE(static_cast<bool>(exe))
        << arch << ": " << llvm::toString(exe.takeError());
    const std::string src = sources(**exe);
    EXPECT_NE(src.find("#include \"kiln/half.cuh\""), std::string::npos);
    for (const std::string &e : c.expect)
      EXPECT_NE(src.find(e), std::string::npos) << "expected '" << e << "' in\n"
                                                << src;
  }
}

std::vector<HalfCase> halfCases() {
  std::vector<HalfCase> cs;
  // Each op rounds its result; the f32 rank-0 tensor is rounded to f16
  // first (PyTorch's common dtype); a literal stays exact.
  cs.push_back(
      {"pw_f16_vec4",
       "graph h(x: f16[A, B], y: f16[B], z: f32[]) {\n"
       "  a = gelu(x)\n  b = add(a, y)\n  c = mul(b, z)\n"
       "  d = add(c, 0.1)\n  return d, a\n}\n",
       {{6, 64}, {64}, {}},
       {"const kiln::f16 *__restrict__ in_x", "kiln::f16 *__restrict__ out_d",
        "kiln::roundF16(kiln::geluErf(", "* kiln::roundF16(v", "0.1f)",
        "kiln::loadVec<4>(in_x"}});
  cs.push_back({"pw_bf16_odd",
                "graph h(x: bf16[A, B]) {\n  a = sigmoid(x)\n"
                "  b = mul(a, x)\n  return b\n}\n",
                {{37, 53}},
                {"const kiln::bf16 *__restrict__ in_x",
                 "kiln::roundBF16(kiln::sigmoid(", "kiln::toFloat(in_x[ii])"}});
  // f16 with f32 promotes to f32: nothing is rounded.
  cs.push_back({"pw_mixed_to_f32",
                "graph h(x: f16[A, B], y: f32[A, B]) {\n"
                "  a = add(x, y)\n  b = tanh(a)\n  return b\n}\n",
                {{8, 30}, {8, 30}},
                {"float *__restrict__ out_b", "kiln::loadVec<2>(in_x"}});
  cs.push_back({"reduce_f16",
                "graph h(x: f16[A, B]) {\n  a = exp(x)\n"
                "  s = sum(a, dim=1)\n  m = min(x, dim=0)\n"
                "  l = logsumexp(x, dim=1)\n  return s, m, l\n}\n",
                {{33, 77}},
                {"kiln::roundF16(value)", "kiln::roundF16(expf("}});
  cs.push_back({"gn_warp_bf16",
                "graph h(x: bf16[N, 16, 12], w: bf16[16], b: bf16[16]) {\n"
                "  a = swish(x)\n"
                "  g = group_norm(a, w, b, groups=4)\n"
                "  r = relu(g)\n  return r\n}\n",
                {{5, 16, 12}, {16}, {16}},
                {"kiln::gnWarp<", "kiln::roundBF16(y[l] * gw[l] + gb[l])",
                 "kiln::toFloat(in_w["}});
  cs.push_back({"gn_team_f16_prefetch_within",
                "graph h(x: f16[N, 8, 64, 96], w: f16[8], b: f16[8]) {\n"
                "  g = group_norm(x, w, b, groups=2)\n  return g\n}\n",
                {{3, 8, 64, 96}, {8}, {8}},
                {"kiln::gnTeam<", "8-wide vectors",
                 "kiln::prefetchL2Within(in_x + i, bytes / 4)",
                 "prefetch, 4096ll, (kiln::f16 *)nullptr)"}});
  cs.push_back({"gn_tail_f16",
                "graph h(x: f16[N, 64], w: f16[64], b: f16[64], c: f16[64]) {\n"
                "  g = group_norm(x, w, b, groups=8)\n"
                "  m = min(g, dim=1, keepdim=true)\n  o = add(m, c)\n"
                "  return o\n}\n",
                {{64, 64}, {64}, {64}, {64}},
                {"kiln::gridBarrier", "kiln::f16 *__restrict__ out_o"}});
  return cs;
}

INSTANTIATE_TEST_SUITE_P(Codegen, HalfKernels, ::testing::ValuesIn(halfCases()),
                         [](const auto &info) { return info.param.name; });

// Every elementwise op and reduction of the op table, in both half dtypes,
// with half, f32 rank-0 and literal operands: one graph per dtype, every
// result an output, compiled for sm_90.
TEST(HalfKernels, EveryElementwiseOpAndReductionCompiles) {
  for (const char *t : {"f16", "bf16"}) {
    std::string kg =
        fmt::format("graph all(x: {0}[7, 13], y: {0}[13], s: f32[]) {{\n", t);
    std::vector<std::string> outs;
    for (const OpInfo &op : allOps()) {
      const std::string name = op.name.str(), r = "r_" + name;
      if (op.family == OpFamily::Unary)
        kg += fmt::format("  {} = {}(x{})\n", r, name,
                          op.kind == OpKind::Clamp ? ", min=-0.5" : "");
      else if (op.family == OpFamily::Binary)
        kg += fmt::format("  {0} = {1}(x, y)\n  {0}_s = {1}({0}, s)\n"
                          "  {0}_l = {1}({0}_s, 1.5)\n",
                          r, name);
      else if (op.family == OpFamily::Reduction)
        kg += fmt::format("  {0} = {1}(x, dim=1)\n  {0}_0 = {1}(x, dim=0)\n", r,
                          name);
      else
        continue;
      outs.push_back(op.family == OpFamily::Binary ? r + "_l" : r);
      if (op.family == OpFamily::Reduction)
        outs.push_back(r + "_0");
    }
    kg += fmt::format("  return {}\n}}\n", llvm::join(outs, ", "));
    auto g = parseGraph(kg, std::string("all_") + t + ".kg");
    ASSERT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError()) << kg;
    auto exe =
        Executable::compile(**g, {{7, 13}, {13}, {}}, offlineOptions(false));
    ASSERT_TRUE(static_cast<bool>(exe))
        << t << ": " << llvm::toString(exe.takeError());
    EXPECT_GE((*exe)->kernels().size(), 2u);
  }
}

TEST(HalfKernels, TheF32FlagshipKernelsDoNotIncludeHalfSupport) {
  auto g = loadGraph(std::string(KILN_SOURCE_DIR) + "/examples/l2_75.kg");
  ASSERT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());
  auto exe = Executable::compile(**g, {{16, 8192}}, offlineOptions(true));
  ASSERT_TRUE(static_cast<bool>(exe)) << llvm::toString(exe.takeError());
  EXPECT_EQ(sources(**exe).find("half.cuh"), std::string::npos);
}

/// The error of compiling `kg` (x and w of the given shapes) for `arch`,
/// "" when it compiles.
std::string compileError(const char *kg, const char *file,
                         std::vector<llvm::SmallVector<int64_t, 6>> shapes,
                         const std::string &arch) {
  auto g = parseGraph(kg, file);
  if (!g)
    return llvm::toString(g.takeError());
  auto exe = Executable::compile(**g, shapes, offlineOptions(false, arch));
  return exe ? "" : llvm::toString(exe.takeError());
}

// f16 and bf16 linear runs on Hopper's tensor cores (wgmma of its dtype,
// compiled by NVRTC for sm_90a) and stores its result in its dtype.
TEST(HalfKernels, HalfLinearRunsOnHopperTensorCores) {
  for (const char *t : {"f16", "bf16"}) {
    const std::string kg =
        fmt::format("graph h(x: {0}[N, 8], w: {0}[4, 8], b: {0}[4]) {{\n"
                    "  y = linear(x, w, b)\n  return y\n}}\n",
                    t);
    auto g = parseGraph(kg, "lin.kg");
    ASSERT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());
    auto exe =
        Executable::compile(**g, {{3, 8}, {4, 8}, {4}}, offlineOptions(false));
    ASSERT_TRUE(static_cast<bool>(exe))
        << t << ": " << llvm::toString(exe.takeError());
    ASSERT_EQ((*exe)->kernels().size(), 1u);
    const EmittedKernel &k = (*exe)->kernels()[0];
    EXPECT_TRUE(k.archSpecific) << t;
    EXPECT_NE(k.source.find("kiln/half.cuh"), std::string::npos) << k.source;
    EXPECT_NE(k.source.find(fmt::format("const kiln::{} *__restrict__", t)),
              std::string::npos)
        << k.source;
    EXPECT_NE(k.source.find(fmt::format("{} tensor cores (wgmma)", t)),
              std::string::npos)
        << k.source;
  }
}

// Elsewhere, and where K is not a multiple of 8 (16-byte rows), half
// linear is refused at the op, saying why; so is half matmul everywhere.
TEST(HalfKernels, OtherHalfContractionsAreRefusedAtTheOp) {
  const char *lin = "graph h(x: f16[N, 8], w: f16[4, 8]) {\n"
                    "  y = linear(x, w)\n  return y\n}\n";
  std::string msg = compileError(lin, "lin.kg", {{3, 8}, {4, 8}}, "sm_80");
  EXPECT_NE(msg.find("lin.kg:2:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Hopper's tensor cores only"), std::string::npos) << msg;
  EXPECT_NE(msg.find("the target is sm_80"), std::string::npos) << msg;

  const char *odd = "graph h(x: bf16[N, 12], w: bf16[4, 12]) {\n"
                    "  y = linear(x, w)\n  return y\n}\n";
  msg = compileError(odd, "odd.kg", {{3, 12}, {4, 12}}, "sm_90");
  EXPECT_NE(msg.find("odd.kg:2:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("K is 12"), std::string::npos) << msg;

  const char *mv = "graph h(x: f16[3, 8], w: f16[8]) {\n"
                   "  y = matmul(x, w)\n  return y\n}\n";
  msg = compileError(mv, "mv.kg", {{3, 8}, {8}}, "sm_90");
  EXPECT_NE(msg.find("mv.kg:2:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("the right operand is a vector"), std::string::npos)
      << msg;
}

// f16 and bf16 convolutions run on Hopper's tensor cores (products in
// their type, exact: one pass even at highest), the patch kept in
// their type, and take the elementwise nodes after them, the sums rounded
// to the dtype first (what PyTorch's gelu reads).
TEST(HalfKernels, HalfConvolutionsRunOnHopperTensorCores) {
  for (const char *t : {"f16", "bf16"}) {
    const std::string kg = fmt::format(
        "graph c(x: {0}[N, 16, 9, 10], w: {0}[32, 16, 3, 3], b: {0}[32]) {{\n"
        "  y = conv2d(x, w, b, padding=1)\n  a = gelu(y)\n  return a\n}}\n",
        t);
    auto g = parseGraph(kg, "conv.kg");
    ASSERT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());
    auto exe = Executable::compile(**g, {{2, 16, 9, 10}, {32, 16, 3, 3}, {32}},
                                   offlineOptions(false));
    ASSERT_TRUE(static_cast<bool>(exe))
        << t << ": " << llvm::toString(exe.takeError());
    ASSERT_EQ((*exe)->kernels().size(), 1u) << t; // gelu fused
    const EmittedKernel &k = (*exe)->kernels()[0];
    EXPECT_TRUE(k.archSpecific) << t;
    EXPECT_NE(
        k.source.find(fmt::format("const kiln::{} *__restrict__ in_x", t)),
        std::string::npos)
        << k.source;
    EXPECT_NE(k.source.find(fmt::format("implicit GEMM on {} tensor cores", t)),
              std::string::npos)
        << k.source;
    EXPECT_NE(k.source.find(", true, 1, 32,"), std::string::npos)
        << k.source; // one pass at highest
    const std::string round = std::string("v[l] = kiln::round") +
                              (t == std::string("f16") ? "F16" : "BF16") +
                              "(v[l])";
    EXPECT_LT(k.source.find(round), k.source.find("geluErf")) << k.source;
  }
}

// A half depthwise conv2d runs the direct depthwise kernel with its
// elementwise nodes; elsewhere (another target, a narrow-group or
// depthwise conv_transpose2d) a half convolution runs the FFMA tiles,
// converting as they load and rounding y once: every target, no epilogue
// (the gelu runs apart).
TEST(HalfKernels, HalfDepthwiseConv2dRunsTheDirectKernel) {
  auto g = parseGraph("graph c(x: bf16[N, 16, 9, 10], w: bf16[16, 1, 3, 3]) "
                      "{\n  y = conv2d(x, w, padding=1, groups=16)\n"
                      "  a = relu(y)\n  return a\n}\n",
                      "dw.kg");
  ASSERT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());
  auto exe = Executable::compile(**g, {{2, 16, 9, 10}, {16, 1, 3, 3}},
                                 offlineOptions(false, "sm_80"));
  ASSERT_TRUE(static_cast<bool>(exe)) << llvm::toString(exe.takeError());
  ASSERT_EQ((*exe)->kernels().size(), 1u); // relu fused
  const EmittedKernel &k = (*exe)->kernels()[0];
  EXPECT_NE(k.source.find("kiln::depthwiseConv2d<"), std::string::npos)
      << k.source;
  EXPECT_NE(k.source.find("const kiln::bf16 *__restrict__ in_x"),
            std::string::npos)
      << k.source;
}

TEST(HalfKernels, OtherHalfConvolutionsRunTheFfmaTiles) {
  const struct {
    const char *what, *kg, *arch;
    std::vector<llvm::SmallVector<int64_t, 6>> shapes;
    const char *dtype;
  } cases[] = {
      {"sm_80",
       "graph c(x: bf16[N, 16, 9, 10], w: bf16[32, 16, 3, 3], b: bf16[32]) "
       "{\n  y = conv2d(x, w, b)\n  a = gelu(y)\n  return a\n}\n",
       "sm_80",
       {{2, 16, 9, 10}, {32, 16, 3, 3}, {32}},
       "bf16"},
      {"a depthwise conv_transpose2d on sm_90",
       "graph c(x: f16[N, 16, 9, 10], w: f16[16, 1, 3, 3]) {\n"
       "  y = conv_transpose2d(x, w, stride=2, groups=16)\n  return y\n}\n",
       "sm_90",
       {{2, 16, 9, 10}, {16, 1, 3, 3}},
       "f16"},
  };
  for (const auto &c : cases) {
    auto g = parseGraph(c.kg, "c.kg");
    ASSERT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());
    auto exe =
        Executable::compile(**g, c.shapes, offlineOptions(false, c.arch));
    ASSERT_TRUE(static_cast<bool>(exe))
        << c.what << ": " << llvm::toString(exe.takeError());
    const EmittedKernel &k = (*exe)->kernels()[0];
    EXPECT_FALSE(k.archSpecific) << c.what;
    EXPECT_NE(k.source.find("kiln/half.cuh"), std::string::npos) << k.source;
    EXPECT_NE(k.source.find(
                  fmt::format("const kiln::{} *__restrict__ in_x", c.dtype)),
              std::string::npos)
        << k.source;
    EXPECT_NE(k.source.find("  kiln::conv"), std::string::npos) << k.source;
    EXPECT_EQ(k.source.find("wgmma"), std::string::npos) << k.source;
  }
}

// A batched right operand runs batch after batch (kiln::BatchMap), each of
// its matrices transposed into the workspace.
TEST(HalfKernels, BatchedHalfMatmulRunsOnHopper) {
  const char *mm = "graph h(x: f16[2, 3, 8], w: f16[2, 8, 4]) {\n"
                   "  y = matmul(x, w)\n  return y\n}\n";
  auto g = parseGraph(mm, "mm.kg");
  ASSERT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());
  auto exe =
      Executable::compile(**g, {{2, 3, 8}, {2, 8, 4}}, offlineOptions(false));
  ASSERT_TRUE(static_cast<bool>(exe)) << llvm::toString(exe.takeError());
  const EmittedKernel &k = (*exe)->kernels()[0];
  EXPECT_NE(k.source.find("kiln::BatchMap<2, 24ll, 32ll>"), std::string::npos)
      << k.source;
  EXPECT_EQ(k.params[k.params.size() - 2].bytes, 2u * 8 * 4 * 2);
}

// f16 and bf16 matmul with a 2-D right operand runs the half linear, that
// operand transposed into a workspace of its dtype first.
TEST(HalfKernels, HalfMatmulWithA2DRightOperandRunsOnHopper) {
  const char *mm = "graph h(x: bf16[N, 16], w: bf16[16, 4]) {\n"
                   "  y = matmul(x, w)\n  return y\n}\n";
  auto g = parseGraph(mm, "mm.kg");
  ASSERT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());
  auto exe =
      Executable::compile(**g, {{3, 16}, {16, 4}}, offlineOptions(false));
  ASSERT_TRUE(static_cast<bool>(exe)) << llvm::toString(exe.takeError());
  const EmittedKernel &k = (*exe)->kernels()[0];
  EXPECT_TRUE(k.archSpecific);
  EXPECT_NE(k.source.find("kiln::bf16 *parts"), std::string::npos) << k.source;
  EXPECT_NE(k.source.find("the 16 x 4 operand transposed into"),
            std::string::npos)
      << k.source;
  EXPECT_EQ(k.params[k.params.size() - 2].bytes, 16u * 4 * 2);
}

TEST(HalfKernels, IntegerTensorsAreStillRefused) {
  const char *kg = "graph h(x: i64[4]) {\n  y = add(x, 1)\n  return y\n}\n";
  auto g = parseGraph(kg, "int.kg");
  ASSERT_TRUE(static_cast<bool>(g)) << llvm::toString(g.takeError());
  auto exe = Executable::compile(**g, {{4}}, offlineOptions(true));
  ASSERT_FALSE(static_cast<bool>(exe));
  std::string msg = llvm::toString(exe.takeError());
  EXPECT_NE(msg.find("'x' is i64"), std::string::npos) << msg;
  EXPECT_NE(msg.find("f32, f16 and bf16"), std::string::npos) << msg;
}

} // namespace
} // namespace kiln
