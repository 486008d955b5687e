//===- ContractionEpilogueTest.cpp - What fuses into the wgmma linear -----===//
//
// No GPU needed: plans only. When the partitioner is told that a linear's
// kernel takes an epilogue (contractionTakesEpilogue: the tensor-core
// linear on sm_90 at the given precision), the elementwise f32 nodes over
// its result shape that follow it join its group, then a group_norm whose
// groups lie in one tile, then the elementwise nodes after that which read
// only the normalised values. Anything else stays in a kernel of its own.
//
//===----------------------------------------------------------------------===//
#include "Parser.h"
#include "Pipeline.h"
#include "schedule/Scheduler.h"

#include "kiln/tiling.cuh"

#include <gtest/gtest.h>

#include <fmt/format.h>

namespace kiln {
namespace {

/// A plan with the graph its groups point into.
struct Planned {
  std::unique_ptr<Graph> graph;
  FusionPlan plan;
};

/// The plan of `text` with the pipeline's callback for `arch` at
/// `precision`, or with default PartitionOptions (no callback).
Planned planOf(const std::string &text, const std::string &arch = "sm_90",
               MatmulPrecision precision = MatmulPrecision::Highest,
               bool callback = true) {
  Planned out;
  auto g = parseGraph(text, "epilogue.kg");
  if (!g) {
    ADD_FAILURE() << llvm::toString(g.takeError());
    return out;
  }
  auto spec = prepareForExecution(**g, {});
  if (!spec) {
    ADD_FAILURE() << llvm::toString(spec.takeError());
    return out;
  }
  out.graph = std::move(*spec);
  PartitionOptions opts;
  const TargetInfo target = defaultTarget(arch);
  if (callback)
    opts.contractionEpilogue = [=](const Node &anchor, const Node *norm) {
      return contractionTakesEpilogue(anchor, norm, target, precision);
    };
  out.plan = partitionGraph(*out.graph, opts);
  return out;
}

/// "a, b": the result names of `nodes`.
std::string names(const std::vector<const Node *> &nodes) {
  std::string s;
  for (const Node *n : nodes)
    s += (s.empty() ? "" : ", ") + n->result()->name();
  return s;
}

std::string names(const std::vector<const Value *> &values) {
  std::string s;
  for (const Value *v : values)
    s += (s.empty() ? "" : ", ") + v->name();
  return s;
}

std::string nameOf(const Node *n) { return n ? n->result()->name() : "-"; }

/// L2_37's pattern: linear [8, k] x [n, k]^T, swish, + bias, group_norm.
std::string l2_37(int64_t k, int64_t n, int64_t groups) {
  return fmt::format("graph l2_37(x: f32[8, {0}]) {{\n"
                     "  param w: f32[{1}, {0}] = zeros\n"
                     "  param b: f32[{1}] = zeros\n"
                     "  param bias: f32[{1}] = zeros\n"
                     "  param gamma: f32[{1}] = ones\n"
                     "  param beta: f32[{1}] = zeros\n"
                     "  y = linear(x, w, b)\n"
                     "  s = mul(sigmoid(y), y)\n"
                     "  z = add(s, bias)\n"
                     "  out = group_norm(z, gamma, beta, groups={2})\n"
                     "  return out\n}}\n",
                     k, n, groups);
}

/// A linear [8, 512] x [n, 512]^T into y, then `body`.
std::string linearThen(int64_t n, const std::string &body,
                       const std::string &inputs = "") {
  return fmt::format("graph l(x: f32[8, 512]{2}) {{\n"
                     "  param w: f32[{0}, 512] = zeros\n"
                     "  y = linear(x, w)\n{1}}}\n",
                     n, body, inputs);
}

/// A linear [2, 16, 512] x [64, 512]^T into y (a [B, T, N] result), then
/// `body`.
std::string rank3LinearThen(const std::string &body) {
  return "graph l(x: f32[2, 16, 512]) {\n"
         "  param w: f32[64, 512] = zeros\n"
         "  y = linear(x, w)\n" +
         body + "}\n";
}

TEST(ContractionEpilogue, L2_37SwishBiasAndGroupNormFuse) {
  Planned p = planOf(l2_37(512, 256, 4)); // groups of 64 columns
  ASSERT_EQ(p.plan.groups.size(), 1u);
  const FusionGroup &g = p.plan.groups[0];
  EXPECT_EQ(g.kind, GroupKind::Contraction);
  EXPECT_EQ(nameOf(g.anchor), "y");
  EXPECT_EQ(names(g.epilogue), "%0, s, z");
  EXPECT_EQ(nameOf(g.norm), "out");
  EXPECT_TRUE(g.normEpilogue.empty());
  EXPECT_EQ(names(g.inputs), "x, w, b, bias, gamma, beta");
  EXPECT_EQ(names(g.outputs), "out");
}

TEST(ContractionEpilogue, L2_62NodesAfterTheGroupNormFuse) {
  Planned p =
      planOf(linearThen(256, "  g = group_norm(y, groups=16)\n"
                             "  l = leaky_relu(g, negative_slope=0.01)\n"
                             "  out = add(l, l)\n  return out\n"));
  ASSERT_EQ(p.plan.groups.size(), 1u);
  const FusionGroup &g = p.plan.groups[0];
  EXPECT_TRUE(g.epilogue.empty());
  EXPECT_EQ(nameOf(g.norm), "g");
  EXPECT_EQ(names(g.normEpilogue), "l, out");
  EXPECT_EQ(names(g.outputs), "out");
}

// A group_norm fuses only when each group's columns are a multiple of 8
// that divides 128 (a group lies in one tile, over whole 8-column blocks).
TEST(ContractionEpilogue, GroupNormFusesOnlyWithGroupsInATile) {
  const struct {
    int64_t n, groups;
    bool fuses;
  } cases[] = {{256, 2, true},   // 128 columns
               {256, 32, true},  // 8
               {256, 1, false},  // 256: wider than a tile
               {96, 8, false},   // 12: neither
               {64, 16, false},  // 4: not a multiple of 8
               {192, 8, false}}; // 24: does not divide 128
  for (const auto &c : cases) {
    SCOPED_TRACE(fmt::format("N = {}, {} groups", c.n, c.groups));
    Planned p = planOf(l2_37(512, c.n, c.groups));
    ASSERT_EQ(p.plan.groups.size(), c.fuses ? 1u : 2u);
    const FusionGroup &g = p.plan.groups[0];
    EXPECT_EQ(names(g.epilogue), "%0, s, z");
    if (c.fuses) {
      EXPECT_EQ(nameOf(g.norm), "out");
      continue;
    }
    EXPECT_EQ(g.norm, nullptr);
    EXPECT_EQ(names(g.outputs), "z");
    EXPECT_EQ(p.plan.groups[1].kind, GroupKind::GroupNorm);
    EXPECT_EQ(nameOf(p.plan.groups[1].anchor), "out");
  }
}

// On a [B, T, N] result the group_norm's channels are T, not the linear's
// columns: the epilogue cannot normalise it (T / groups = 8 would pass the
// column test).
TEST(ContractionEpilogue, GroupNormOfARank3LinearStaysOut) {
  Planned p = planOf(rank3LinearThen("  r = relu(y)\n"
                                     "  out = group_norm(r, groups=2)\n"
                                     "  return out\n"));
  ASSERT_EQ(p.plan.groups.size(), 2u);
  EXPECT_EQ(names(p.plan.groups[0].epilogue), "r");
  EXPECT_EQ(p.plan.groups[0].norm, nullptr);
  EXPECT_EQ(p.plan.groups[1].kind, GroupKind::GroupNorm);
}

// After the group_norm the pre-norm values are gone from the kernel's
// registers: a node reading one of them runs in a kernel of its own, and
// the contraction's group writes that value.
TEST(ContractionEpilogue, NodeReadingThePreNormValueStaysOut) {
  Planned p = planOf(linearThen(256, "  g = group_norm(y, groups=16)\n"
                                     "  out = add(g, y)\n  return out\n"));
  ASSERT_EQ(p.plan.groups.size(), 2u);
  const FusionGroup &g = p.plan.groups[0];
  EXPECT_EQ(nameOf(g.norm), "g");
  EXPECT_TRUE(g.normEpilogue.empty());
  EXPECT_EQ(names(g.outputs), "y, g");
  EXPECT_EQ(p.plan.groups[1].kind, GroupKind::Pointwise);
  EXPECT_EQ(names(p.plan.groups[1].prologue), "out");
}

// The epilogue computes and stores f32 only: a node with an f16 operand
// stays out, while the f32 node before it fuses.
TEST(ContractionEpilogue, NodeWithAnF16OperandStaysOut) {
  Planned p = planOf(linearThen(256,
                                "  r = relu(y)\n  z = add(r, h)\n"
                                "  return z\n",
                                ", h: f16[256]"));
  ASSERT_EQ(p.plan.groups.size(), 2u);
  EXPECT_EQ(names(p.plan.groups[0].epilogue), "r");
  EXPECT_EQ(names(p.plan.groups[0].outputs), "r");
  EXPECT_EQ(names(p.plan.groups[1].prologue), "z");
}

// Without the callback, or where the linear runs FFMA (sm_80; highest
// below K = 512), the linear stays alone and the GroupNorm kernel takes
// the swish and the bias as its prologue.
TEST(ContractionEpilogue, LinearStaysAloneWithoutTensorCoreEpilogue) {
  const struct {
    std::string what, arch;
    int64_t k;
    MatmulPrecision precision;
    bool callback;
  } cases[] = {
      {"no callback", "sm_90", 512, MatmulPrecision::High, false},
      {"sm_80 highest", "sm_80", 512, MatmulPrecision::Highest, true},
      {"sm_80 high", "sm_80", 512, MatmulPrecision::High, true},
      {"highest, K = 256", "sm_90", 256, MatmulPrecision::Highest, true},
      {"highest, K = 508", "sm_90", 508, MatmulPrecision::Highest, true}};
  for (const auto &c : cases) {
    SCOPED_TRACE(c.what);
    Planned p = planOf(l2_37(c.k, 256, 4), c.arch, c.precision, c.callback);
    ASSERT_EQ(p.plan.groups.size(), 2u);
    EXPECT_EQ(names(p.plan.groups[0].nodes()), "y");
    EXPECT_EQ(p.plan.groups[1].kind, GroupKind::GroupNorm);
    EXPECT_EQ(names(p.plan.groups[1].prologue), "%0, s, z");
  }
  // TF32 at the same K takes the epilogue.
  Planned high = planOf(l2_37(256, 256, 4), "sm_90", MatmulPrecision::High);
  ASSERT_EQ(high.plan.groups.size(), 1u);
  EXPECT_EQ(nameOf(high.plan.groups[0].norm), "out");
}

// L2_75's pattern: the min over the columns after the group_norm becomes
// the group's tail, and the add that broadcasts it its tail epilogue: one
// kernel writes only the add's result.
TEST(ContractionEpilogue, L2_75MinAndBroadcastAddFuse) {
  Planned p = planOf(linearThen(256,
                                "  g = group_norm(y, groups=16)\n"
                                "  m = min(g, dim=1, keepdim=true)\n"
                                "  out = add(m, bias)\n  return out\n",
                                ", bias: f32[1, 256, 1, 1]"));
  ASSERT_EQ(p.plan.groups.size(), 1u);
  const FusionGroup &g = p.plan.groups[0];
  EXPECT_EQ(nameOf(g.norm), "g");
  EXPECT_EQ(nameOf(g.tail), "m");
  EXPECT_EQ(names(g.tailEpilogue), "out");
  EXPECT_EQ(names(g.inputs), "x, w, bias");
  EXPECT_EQ(names(g.outputs), "out");
}

// Without a group_norm the tail reads the epilogue's values; it may reduce
// several last dims (each key whole rows), never dims before them.
TEST(ContractionEpilogue, TailReducesTheLastDims) {
  Planned rows = planOf(linearThen(256, "  r = relu(y)\n"
                                        "  m = max(r, dim=1)\n"
                                        "  out = mul(m, 2.0)\n  return out\n"));
  ASSERT_EQ(rows.plan.groups.size(), 1u);
  EXPECT_EQ(names(rows.plan.groups[0].epilogue), "r");
  EXPECT_EQ(nameOf(rows.plan.groups[0].tail), "m");
  EXPECT_EQ(names(rows.plan.groups[0].tailEpilogue), "out");

  Planned samples =
      planOf(rank3LinearThen("  m = min(y, dim=[1, 2])\n  return m\n"));
  ASSERT_EQ(samples.plan.groups.size(), 1u);
  EXPECT_EQ(nameOf(samples.plan.groups[0].tail), "m");

  Planned first = planOf(rank3LinearThen("  m = min(y, dim=1)\n  return m\n"));
  ASSERT_EQ(first.plan.groups.size(), 2u);
  EXPECT_EQ(first.plan.groups[0].tail, nullptr);
  EXPECT_EQ(first.plan.groups[1].kind, GroupKind::Reduction);
}

// A sum, mean or logsumexp over the last dims is a contraction's tail too
// (partials per tile, combined after the tiles); a GroupNorm kernel's tail
// stays a min or max, so there a sum is a reduction kernel of its own.
TEST(ContractionEpilogue, SumMeanAndLogsumexpAreTails) {
  for (const char *op : {"sum", "mean", "logsumexp"}) {
    SCOPED_TRACE(op);
    Planned p =
        planOf(linearThen(256, fmt::format("  g = group_norm(y, groups=16)\n"
                                           "  s = {}(g, dim=1)\n  return s\n",
                                           op)));
    ASSERT_EQ(p.plan.groups.size(), 1u);
    EXPECT_EQ(nameOf(p.plan.groups[0].tail), "s");
    Planned ffma = planOf(linearThen(256, fmt::format("  g = group_norm(y, "
                                                      "groups=16)\n"
                                                      "  s = {}(g, dim=1)\n"
                                                      "  return s\n",
                                                      op)),
                          "sm_80");
    ASSERT_EQ(ffma.plan.groups.size(), 3u);
    EXPECT_EQ(ffma.plan.groups[1].tail, nullptr);
    EXPECT_EQ(ffma.plan.groups[2].kind, GroupKind::Reduction);
  }
}

// After a tail the kernel's values are keys: a node reading the value the
// min reads runs in a kernel of its own (the group writes that value), and
// a group_norm after a tail of the pre-norm values does too.
TEST(ContractionEpilogue, NothingButTheTailEpilogueFollowsATail) {
  Planned p = planOf(linearThen(256, "  g = group_norm(y, groups=16)\n"
                                     "  m = min(g, dim=1, keepdim=true)\n"
                                     "  out = add(g, m)\n  return out\n"));
  ASSERT_EQ(p.plan.groups.size(), 2u);
  EXPECT_EQ(nameOf(p.plan.groups[0].tail), "m");
  EXPECT_EQ(names(p.plan.groups[0].outputs), "g, m");
  EXPECT_EQ(names(p.plan.groups[1].prologue), "out");

  Planned norm = planOf(linearThen(256, "  m = max(y, dim=1)\n"
                                        "  g = group_norm(y, groups=16)\n"
                                        "  return m, g\n"));
  ASSERT_EQ(norm.plan.groups.size(), 2u);
  EXPECT_EQ(nameOf(norm.plan.groups[0].tail), "m");
  EXPECT_EQ(norm.plan.groups[0].norm, nullptr);
  EXPECT_EQ(norm.plan.groups[1].kind, GroupKind::GroupNorm);
}

// Where the linear runs FFMA (sm_80) the GroupNorm kernel takes the tail,
// as before.
TEST(ContractionEpilogue, TailStaysWithTheGroupNormOffTensorCores) {
  Planned p = planOf(linearThen(256,
                                "  g = group_norm(y, groups=16)\n"
                                "  m = min(g, dim=1, keepdim=true)\n"
                                "  out = add(m, bias)\n  return out\n",
                                ", bias: f32[1, 256, 1, 1]"),
                     "sm_80");
  ASSERT_EQ(p.plan.groups.size(), 2u);
  EXPECT_EQ(names(p.plan.groups[0].nodes()), "y");
  EXPECT_EQ(p.plan.groups[1].kind, GroupKind::GroupNorm);
  EXPECT_EQ(nameOf(p.plan.groups[1].tail), "m");
}

/// A conv2d 16 -> 32 (3 x 3, padding 1) on [2, 16, 20, 24], then `rest`.
std::string convThen(const std::string &rest, const std::string &extra = "") {
  return fmt::format("graph c(x: f32[2, 16, 20, 24]{}) {{\n"
                     "  param w: f32[32, 16, 3, 3] = zeros\n"
                     "  param b: f32[32] = zeros\n"
                     "  y = conv2d(x, w, b, padding=1)\n{}}}\n",
                     extra, rest);
}

// The tensor-core convolution takes the elementwise nodes after it (a
// residual input too), unless a group_norm reads their value: L2_19's GELU
// stays the GroupNorm kernel's prologue. Off tensor cores (sm_80) nothing
// joins the convolution.
TEST(ContractionEpilogue, ConvolutionsTakeElementwiseEpilogues) {
  Planned p = planOf(convThen("  z = add(y, r)\n  a = relu(z)\n"
                              "  return a, y\n",
                              ", r: f32[2, 32, 20, 24]"),
                     "sm_90", MatmulPrecision::High);
  ASSERT_EQ(p.plan.groups.size(), 1u);
  EXPECT_EQ(p.plan.groups[0].kind, GroupKind::Convolution);
  EXPECT_EQ(names(p.plan.groups[0].epilogue), "z, a");
  EXPECT_EQ(names(p.plan.groups[0].outputs), "y, a");

  Planned gn = planOf(convThen("  g = gelu(y)\n"
                               "  n = group_norm(g, groups=8)\n"
                               "  return n\n"),
                      "sm_90", MatmulPrecision::High);
  ASSERT_EQ(gn.plan.groups.size(), 2u);
  EXPECT_EQ(names(gn.plan.groups[0].nodes()), "y");
  EXPECT_EQ(gn.plan.groups[1].kind, GroupKind::GroupNorm);
  EXPECT_EQ(names(gn.plan.groups[1].prologue), "g");

  Planned ffma = planOf(convThen("  a = relu(y)\n  return a\n"), "sm_80",
                        MatmulPrecision::High);
  ASSERT_EQ(ffma.plan.groups.size(), 2u);
  EXPECT_EQ(names(ffma.plan.groups[0].nodes()), "y");
}

// A weight that fits shared memory only streamed (3 x 3 from 512 input
// channels at highest: even parts of 8 channels kept whole take 288 KiB)
// runs on tensor cores and takes its epilogue, its parameters constant or
// not (the blocks' images it streams from made once, or at every launch).
TEST(ContractionEpilogue, StreamedWeightsTakeEpilogues) {
  const std::string text = "graph c(x: f32[2, 512, 16, 16]) {\n"
                           "  param w: f32[64, 512, 3, 3] = zeros\n"
                           "  y = conv2d(x, w, padding=1)\n"
                           "  a = relu(y)\n  return a\n}\n";
  for (bool constant : {true, false}) {
    Planned p = planOf(text, "sm_90", MatmulPrecision::Highest);
    ASSERT_EQ(p.plan.groups.size(), 1u) << constant;
    auto s = scheduleGroup(p.plan.groups[0], defaultTarget("sm_90"),
                           MatmulPrecision::Highest, constant);
    ASSERT_TRUE(static_cast<bool>(s)) << llvm::toString(s.takeError());
    EXPECT_EQ(s->kernel, "wgmmaConv") << constant;
    EXPECT_EQ(s->get("stream", 0), 16) << constant;
    EXPECT_EQ(s->get("splitW"),
              constant ? kWgmmaSplitFlagged : kWgmmaSplitEachLaunch)
        << constant;
  }
}

// A residual read in the epilogue keeps runs of 8 columns where rows are
// whole sectors (pairs cost that 6-7%, bench/NOTES.md v38); rows that are
// not (130 wide) and epilogues without one (a per-channel input does not
// count) keep their pairs.
TEST(ContractionEpilogue, ResidualsPairColumnsOnlyWhereRowsSplitSectors) {
  auto vecOf = [](const std::string &op, int h, int out, bool residual) {
    Planned p = planOf(
        fmt::format("graph c(x: f32[2, 64, {0}, {0}], r: f32[2, 64, {1}, "
                    "{1}], s: f32[64, 1, 1]) {{\n"
                    "  param w: f32[64, 64, 3, 3] = zeros\n"
                    "  y = {2}(x, w{3})\n  a = add(y, {4})\n"
                    "  o = relu(a)\n  return o\n}}\n",
                    h, out, op, op == "conv2d" ? ", padding=1" : "",
                    residual ? "r" : "s"),
        "sm_90", MatmulPrecision::High);
    EXPECT_EQ(p.plan.groups.size(), 1u) << op << " " << out;
    if (p.plan.groups.size() != 1)
      return int64_t{0};
    auto s = scheduleGroup(p.plan.groups[0], defaultTarget("sm_90"),
                           MatmulPrecision::High);
    if (!s) {
      ADD_FAILURE() << llvm::toString(s.takeError());
      return int64_t{0};
    }
    EXPECT_EQ(s->kernel, "wgmmaConv") << op << " " << out;
    return s->get("vec");
  };
  EXPECT_EQ(vecOf("conv2d", 256, 256, true), 1);
  EXPECT_EQ(vecOf("conv2d", 256, 256, false), 2);
  EXPECT_EQ(vecOf("conv_transpose2d", 128, 130, true), 2);
  EXPECT_EQ(vecOf("conv_transpose2d", 128, 130, false), 2);
}

// A min, max, sum, mean or logsumexp over the channels (dim 1) becomes the
// tensor-core convolution's tail where its tiles hold every channel (one
// part): 32 channels at high and highest; 64 at high but not at highest
// (parts of 32 in 3xTF32). Nodes over the tail's shape join after it.
// Other dims, conv groups and off tensor cores (sm_80): a reduction
// kernel.
TEST(ContractionEpilogue, ChannelReductionsAreConvolutionTails) {
  for (const char *op : {"min", "max", "sum", "mean", "logsumexp"})
    for (MatmulPrecision prec :
         {MatmulPrecision::High, MatmulPrecision::Highest}) {
      Planned p = planOf(convThen(fmt::format("  a = relu(y)\n"
                                              "  m = {}(a, dim=1)\n"
                                              "  o = mul(m, 2.0)\n"
                                              "  return o\n",
                                              op)),
                         "sm_90", prec);
      ASSERT_EQ(p.plan.groups.size(), 1u) << op;
      EXPECT_EQ(p.plan.groups[0].kind, GroupKind::Convolution);
      EXPECT_EQ(names(p.plan.groups[0].epilogue), "a");
      EXPECT_EQ(nameOf(p.plan.groups[0].tail), "m");
      EXPECT_EQ(names(p.plan.groups[0].tailEpilogue), "o");
    }
  auto conv64 = [](const std::string &rest) {
    return "graph c(x: f32[2, 16, 20, 24]) {\n"
           "  param w: f32[64, 16, 3, 3] = zeros\n"
           "  param b: f32[64] = zeros\n"
           "  y = conv2d(x, w, b, padding=1)\n" +
           rest + "}\n";
  };
  const std::string min64 = conv64("  m = min(y, dim=1, keepdim=true)\n"
                                   "  return m\n");
  EXPECT_EQ(planOf(min64, "sm_90", MatmulPrecision::High).plan.groups.size(),
            1u);
  Planned parts = planOf(min64, "sm_90", MatmulPrecision::Highest);
  ASSERT_EQ(parts.plan.groups.size(), 2u);
  EXPECT_EQ(parts.plan.groups[1].kind, GroupKind::Reduction);
  for (const char *dims : {"dim=2", "dim=[1, 2]", "dim=[2, 3]"}) {
    Planned other =
        planOf(convThen(fmt::format("  m = max(y, {})\n  return m\n", dims)),
               "sm_90", MatmulPrecision::High);
    EXPECT_EQ(other.plan.groups.size(), 2u) << dims;
  }
  Planned grouped = planOf("graph c(x: f32[2, 16, 20, 24]) {\n"
                           "  param w: f32[32, 8, 3, 3] = zeros\n"
                           "  param b: f32[32] = zeros\n"
                           "  y = conv2d(x, w, b, padding=1, groups=2)\n"
                           "  m = max(y, dim=1)\n  return m\n}\n",
                           "sm_90", MatmulPrecision::High);
  EXPECT_EQ(grouped.plan.groups.size(), 2u);
  Planned ffma = planOf(convThen("  m = max(y, dim=1)\n  return m\n"), "sm_80",
                        MatmulPrecision::High);
  EXPECT_EQ(ffma.plan.groups.size(), 2u);
  // A node after the tail over another shape (m broadcast back over y)
  // stays out.
  Planned broadcast = planOf(convThen("  m = max(y, dim=1, keepdim=true)\n"
                                      "  d = sub(y, m)\n  return d\n"),
                             "sm_90", MatmulPrecision::High);
  ASSERT_EQ(broadcast.plan.groups.size(), 2u);
  EXPECT_EQ(nameOf(broadcast.plan.groups[0].tail), "m");
  EXPECT_TRUE(broadcast.plan.groups[0].tailEpilogue.empty());
}

// An f32 convolution's epilogue reads and writes f32 alone (as the
// linear's): a node with an f16 operand stays out. An f16 or bf16
// convolution's takes f32, f16 and bf16 nodes.
TEST(ContractionEpilogue, HalfNodesJoinOnlyHalfConvolutions) {
  Planned f32 = planOf(convThen("  a = relu(y)\n  z = add(a, h)\n"
                                "  return z\n",
                                ", h: f16[2, 32, 20, 24]"),
                       "sm_90", MatmulPrecision::High);
  ASSERT_EQ(f32.plan.groups.size(), 2u);
  EXPECT_EQ(names(f32.plan.groups[0].epilogue), "a");
  EXPECT_EQ(names(f32.plan.groups[1].prologue), "z");

  std::string bf16 = convThen("  a = relu(y)\n  z = add(a, r)\n"
                              "  return z\n",
                              ", r: f32[2, 32, 20, 24]");
  for (const char *from : {"x: f32", "w: f32", "b: f32"}) {
    std::string to = from;
    to.replace(to.find("f32"), 3, "bf16");
    bf16.replace(bf16.find(from), std::string(from).size(), to);
  }
  Planned half = planOf(bf16, "sm_90", MatmulPrecision::High);
  ASSERT_EQ(half.plan.groups.size(), 1u);
  EXPECT_EQ(names(half.plan.groups[0].epilogue), "a, z");
}

} // namespace
} // namespace kiln
