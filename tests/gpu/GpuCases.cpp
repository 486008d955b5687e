//===- GpuCases.cpp - The graphs the GPU suite runs -----------------------===//
#include "GpuCases.h"

#include <fmt/format.h>

namespace kiln {
namespace {

std::string unaryChain() {
  return "graph u(x: f32[A, B]) {\n"
         "  a = relu(x)\n  b = leaky_relu(x, negative_slope=0.2)\n"
         "  c = sigmoid(a)\n  d = tanh(b)\n  e = swish(c)\n"
         "  f = gelu(d)\n  g = gelu(e, approximate=\"tanh\")\n"
         "  h = hardtanh(f)\n  i = clamp(g, min=-0.5)\n  j = hardswish(h)\n"
         "  k = mish(i)\n  l = softplus(j)\n  m = abs(k)\n  n = exp(l)\n"
         "  o = log(n)\n  p = sqrt(m)\n  q = rsqrt(n)\n  r = neg(q)\n"
         "  s = add(o, p)\n  t = mul(s, r)\n  u = div(t, 3.0)\n"
         "  v = sub(u, x)\n  w = maximum(v, x)\n  z = minimum(w, b)\n"
         "  out = pow(z, 2.0)\n  return out, f\n}\n";
}

/// More elementwise nodes than the emitter inlines (kOutlineNodes): each
/// element is computed by one non-inlined function per lane. Two inputs,
/// one broadcast along the rows, and two outputs, one from mid-chain.
std::string longChain() {
  std::string kg = "graph c(x: f32[A, B], y: f32[B]) {\n  p0 = add(x, y)\n";
  const char *const steps[] = {
      "sigmoid(p{})", "mul(p{}, y)",         "add(p{}, x)", "tanh(p{})",
      "gelu(p{})",    "maximum(p{}, -0.75)", "swish(p{})",  "div(p{}, 1.5)"};
  constexpr int kNodes = 72;
  for (int i = 1; i < kNodes; ++i)
    kg += fmt::format("  p{} = ", i) +
          fmt::format(fmt::runtime(steps[i % 8]), i - 1) + "\n";
  return kg + fmt::format("  return p{}, p{}\n}}\n", kNodes - 1, kNodes / 2);
}

/// `count` elementwise nodes after `from`, each reading the one before (and
/// some `other`), named PREFIX1, PREFIX2, ... and the last `last`: more than
/// kOutlineNodes become a GroupNorm kernel's prologue or epilogue function.
std::string longRun(const std::string &prefix, const std::string &from,
                    const std::string &other, int count,
                    const std::string &last) {
  const char *const steps[] = {"sigmoid({})", "add({}, {})", "mul({}, 0.75)",
                               "tanh({})",    "add({}, {})", "swish({})"};
  std::string kg, prev = from;
  for (int i = 1; i <= count; ++i) {
    std::string name = i == count ? last : prefix + std::to_string(i);
    kg += fmt::format("  {} = ", name) +
          fmt::format(fmt::runtime(steps[i % 6]), prev, other) + "\n";
    prev = name;
  }
  return kg;
}

/// `s` with every `from` replaced by `to`.
std::string replaceAll(std::string s, const std::string &from,
                       const std::string &to) {
  for (size_t p = 0; (p = s.find(from, p)) != std::string::npos; p += to.size())
    s.replace(p, from.size(), to);
  return s;
}

} // namespace

std::vector<Case> cases() {
  std::vector<Case> cs;
  // Pointwise.
  cs.push_back({"pw_chain_odd", unaryChain(), {{37, 53}}});
  cs.push_back({"pw_chain_vec4", unaryChain(), {{64, 256}}});
  cs.push_back({"pw_chain_nan", unaryChain(), {{31, 33}}, 0, 0.05});
  cs.push_back({"pw_long_chain_odd", longChain(), {{37, 53}, {53}}});
  cs.push_back({"pw_long_chain_vec4", longChain(), {{65, 256}, {256}}});
  cs.push_back({"pw_long_chain_nan", longChain(), {{31, 36}, {36}}, 0, 0.05});
  cs.push_back({"pw_bool_scalars",
                "graph b(x: f32[A, B]) {\n  a = add(x, true)\n"
                "  c = mul(a, false)\n  d = sub(c, true)\n"
                "  return d, a\n}\n",
                {{19, 7}},
                0,
                0.1});
  cs.push_back({"pw_broadcast",
                "graph b(x: f32[N, 1], y: f32[1, C, 1, 1]) {\n"
                "  s = add(x, y)\n  out = mul(s, 2.0)\n  return out\n}\n",
                {{131, 1}, {1, 77, 1, 1}}});
  cs.push_back({"pw_bias_rows",
                "graph b(x: f32[N, C], y: f32[C]) {\n"
                "  s = add(x, y)\n  t = swish(s)\n  out = maximum(t, s)\n"
                "  return out\n}\n",
                {{129, 36}, {36}},
                0,
                0.01});
  cs.push_back({"pw_dag_two_outputs",
                "graph d(x: f32[A, B, C]) {\n  a = exp(x)\n  b = add(a, a)\n"
                "  c = mul(b, x)\n  return c, a\n}\n",
                {{3, 5, 7}}});
  // Reductions, with prologue and epilogue.
  for (const char *op : {"min", "max", "sum", "mean", "logsumexp"}) {
    cs.push_back({std::string("red_") + op + "_inner",
                  fmt::format("graph r(x: f32[A, B]) {{\n  e = mul(x, 3.0)\n"
                              "  m = {}(e, dim=1, keepdim=true)\n"
                              "  out = add(m, 1.0)\n  return out\n}}\n",
                              op),
                  {{37, 1001}}});
    cs.push_back({std::string("red_") + op + "_outer",
                  fmt::format("graph r(x: f32[A, B, C]) {{\n"
                              "  out = {}(x, dim=[0, 1])\n  return out\n}}\n",
                              op),
                  {{7, 13, 45}}});
  }
  cs.push_back({"red_min_nan",
                "graph r(x: f32[A, B]) {\n  out = min(x, dim=1)\n"
                "  return out\n}\n",
                {{64, 333}},
                0,
                0.002});
  // GroupNorm: registers (small slices), one block, teams of blocks.
  auto gn = [](const std::string &shape, int groups, const std::string &pro,
               const std::string &epi) {
    return fmt::format(
        "graph g(x: f32[{}]) {{\n  param gamma: f32[C] = uniform(0.5, 1.5, "
        "seed=4)\n  param beta: f32[C] = uniform(-1, 1, seed=5)\n{}"
        "  y = group_norm({}, gamma, beta, groups={})\n{}  return {}\n}}\n",
        shape, pro, pro.empty() ? "x" : "p", groups, epi,
        epi.empty() ? "y" : "out");
  };
  auto withC = [](const std::string &kg, int64_t c) {
    return replaceAll(kg, "f32[C]", fmt::format("f32[{}]", c));
  };
  cs.push_back({"gn_regs_odd",
                withC(gn("N, 64, 5, 7", 8, "", ""), 64),
                {{3, 64, 5, 7}}});
  cs.push_back({"gn_regs_rows", withC(gn("N, 12", 4, "", ""), 12), {{7, 12}}});
  const std::string l2_62Like = withC(
      gn("N, 8192", 512, "", "  l = leaky_relu(y)\n  out = add(l, l)\n"), 8192);
  const std::string l2_37Like =
      withC(gn("N, 4096", 64, "  s = swish(x)\n  p = add(s, 0.5)\n", ""), 4096);
  cs.push_back({"gn_regs_l2_62_like", l2_62Like, {{33, 8192}}});
  cs.push_back({"gn_regs_l2_37_like", l2_37Like, {{19, 4096}}});
  // More slices than one round of the grid takes: each warp loops over
  // several rounds, the last one partial (on 132 SMs a round is 1056 blocks
  // of 128 slices of 16 elements, or 792 blocks of 32 slices of 64).
  cs.push_back({"gn_regs_rounds", l2_62Like, {{437, 8192}}});
  cs.push_back({"gn_regs_rounds_prologue", l2_37Like, {{1001, 4096}}});
  cs.push_back({"gn_regs_offset",
                withC(gn("N, 256", 16, "", ""), 256),
                {{9, 256}},
                1e4,
                0,
                1e-5});
  // The widest register slices (1000 elements, statistics in float) on a
  // large offset, and NaN reaching them.
  cs.push_back({"gn_regs_wide_offset",
                withC(gn("N, 40, 5, 5", 1, "", ""), 40),
                {{6, 40, 5, 5}},
                1e4,
                0,
                1e-5});
  cs.push_back({"gn_regs_wide_nan",
                withC(gn("N, 40, 5, 5", 2, "", ""), 40),
                {{6, 40, 5, 5}},
                0,
                1e-3});
  cs.push_back({"gn_block",
                withC(gn("N, 16, 40, 41", 4, "", ""), 16),
                {{4, 16, 40, 41}}});
  cs.push_back({"gn_team",
                withC(gn("N, 64, 96, 97", 8, "", ""), 64),
                {{2, 64, 96, 97}}});
  cs.push_back({"gn_team_gelu_prologue",
                withC(gn("N, 16, 66, 66", 2, "  p = gelu(x)\n", ""), 16),
                {{3, 16, 66, 66}}});
  cs.push_back({"gn_team_few_slices",
                withC(gn("N, 8, 512, 512", 2, "", ""), 8),
                {{1, 8, 512, 512}}});
  cs.push_back({"gn_team_offset",
                withC(gn("N, 64, 96, 97", 8, "", ""), 64),
                {{2, 64, 96, 97}},
                1e4,
                0,
                1e-5});
  cs.push_back({"gn_team_nan",
                withC(gn("N, 64, 96, 97", 8, "", ""), 64),
                {{2, 64, 96, 97}},
                0,
                1e-6});
  // gnTeam's pipeline: many rounds per team (buffers and exchange slots
  // wrap around), one-block teams, parts too large for shared memory (the
  // rest re-read), and a prologue streaming two inputs.
  const std::string manyRounds = withC(gn("N, 32, 64, 64", 4, "", ""), 32);
  cs.push_back({"gn_team_many_rounds", manyRounds, {{257, 32, 64, 64}}});
  // A NaN slice among a team's rounds: its mean (NaN) was the next slice's
  // shift, so that slice came out NaN too.
  cs.push_back(
      {"gn_team_many_rounds_nan", manyRounds, {{257, 32, 64, 64}}, 0, 1e-7});
  Case oneNan{"gn_team_one_nan", manyRounds, {{257, 32, 64, 64}}};
  oneNan.nanAt = 32 * 64 * 64 + 1000; // sample 1, slice 4
  cs.push_back(oneNan);
  // About half the samples scaled by up to 1e15, the rest not: a team's
  // slice after a scaled one starts from a shift 1e12 or more times its
  // spread (one sum about the mean again was not enough).
  cs.push_back({"gn_team_huge_sample_scale",
                "graph g(x: f32[N, 32, 64, 64], s: f32[N, 1, 1, 1]) {\n"
                "  param gamma: f32[32] = uniform(0.5, 1.5, seed=4)\n"
                "  param beta: f32[32] = uniform(-1, 1, seed=5)\n"
                "  r = relu(s)\n  k = mul(r, 1e15)\n  f = add(k, 1.0)\n"
                "  p = mul(x, f)\n"
                "  y = group_norm(p, gamma, beta, groups=4)\n"
                "  return y\n}\n",
                {{257, 32, 64, 64}, {257, 1, 1, 1}},
                0,
                0,
                1e-5});
  cs.push_back({"gn_team_many_rounds_offset",
                manyRounds,
                {{130, 32, 64, 64}},
                1e4,
                0,
                1e-5});
  cs.push_back({"gn_team_one_block_rounds",
                withC(gn("N, 20, 10, 11", 2, "", ""), 20),
                {{1001, 20, 10, 11}}});
  // gnTeam sums a slice's moments about the previous slice's mean and sums
  // again about the new mean when that shift is more than a standard
  // deviation off. Levels per channel keep consecutive slices of a team
  // within that (the shift kept); levels per sample differ by about a
  // standard deviation (some kept, some not) or by far more (every round
  // sums twice). No offset: the prologue's float rounding at 1e4 would be
  // the error measured (gn_team_*_offset cover large offsets).
  auto levels = [](const char *channels, const char *scale) {
    return fmt::format(
        "graph g(x: f32[N, 32, 64, 64], lvl: f32[N, {}, 1, 1]) {{\n"
        "  param gamma: f32[32] = uniform(0.5, 1.5, seed=4)\n"
        "  param beta: f32[32] = uniform(-1, 1, seed=5)\n"
        "  l = mul(lvl, {})\n  p = add(x, l)\n"
        "  y = group_norm(p, gamma, beta, groups=4)\n  return y\n}}\n",
        channels, scale);
  };
  cs.push_back({"gn_team_levels_per_channel",
                levels("32", "0.3"),
                {{130, 32, 64, 64}, {130, 32, 1, 1}}});
  cs.push_back({"gn_team_levels_mixed",
                levels("1", "0.5"),
                {{131, 32, 64, 64}, {131, 1, 1, 1}}});
  cs.push_back({"gn_team_levels_far",
                levels("1", "20.0"),
                {{131, 32, 64, 64}, {131, 1, 1, 1}},
                0,
                0,
                5e-6});
  cs.push_back({"gn_team_reread",
                withC(gn("N, 12, 512, 513", 1, "", ""), 12),
                {{1, 12, 512, 513}}});
  cs.push_back({"gn_team_two_streams",
                "graph g(x: f32[N, 16, 66, 67], z: f32[N, 16, 66, 67]) {\n"
                "  param gamma: f32[16] = uniform(0.5, 1.5, seed=4)\n"
                "  param beta: f32[16] = uniform(-1, 1, seed=5)\n"
                "  p = mul(x, z)\n  q = sub(p, x)\n"
                "  y = group_norm(q, gamma, beta, groups=4)\n  return y\n}\n",
                {{5, 16, 66, 67}, {5, 16, 66, 67}}});
  // GroupNorm with a tail: a per-sample min/max and what follows it, in
  // the same kernel after a grid barrier (L2_75's shape of graph).
  auto minBiasOf = [](int64_t c, int groups) {
    return fmt::format(
        "graph g(x: f32[N, {0}]) {{\n"
        "  param gamma: f32[{0}] = uniform(0.5, 1.5, seed=4)\n"
        "  param beta: f32[{0}] = uniform(-1, 1, seed=5)\n"
        "  param bias: f32[1, {0}, 1, 1] = uniform(-1, 1, seed=6)\n"
        "  y = group_norm(x, gamma, beta, groups={1})\n"
        "  m = min(y, dim=1, keepdim=true)\n  out = add(m, bias)\n"
        "  return out\n}}\n",
        c, groups);
  };
  const std::string minBias = minBiasOf(256, 16);
  cs.push_back({"gn_tail_min_bias", minBias, {{37, 256}}});
  cs.push_back({"gn_tail_max_nan",
                "graph g(x: f32[N, 8, 6, 7]) {\n"
                "  param gamma: f32[8] = uniform(0.5, 1.5, seed=4)\n"
                "  param beta: f32[8] = uniform(-1, 1, seed=5)\n"
                "  y = group_norm(x, gamma, beta, groups=2)\n"
                "  out = max(y, dim=[1, 2, 3])\n  return out\n}\n",
                {{9, 8, 6, 7}},
                0,
                0.001});
  cs.push_back(
      {"gn_tail_team_two_outputs",
       "graph g(x: f32[N, 16, 40, 41]) {\n"
       "  param gamma: f32[16] = uniform(0.5, 1.5, seed=4)\n"
       "  param beta: f32[16] = uniform(-1, 1, seed=5)\n"
       "  y = group_norm(x, gamma, beta, groups=4)\n"
       "  s = swish(y)\n"
       "  m = min(s, dim=[1, 2, 3], keepdim=true)\n  out = mul(m, 2.0)\n"
       "  return s, out\n}\n",
       {{6, 16, 40, 41}}});
  cs.push_back({"gn_tail_min_bias_36_rows", minBias, {{36, 256}}});
  // The min returned too: stored over its own [N, 1], not over the broadcast
  // add's [1, 256, N, 1] (it was, writing past its buffer).
  std::string minReturned = minBias;
  minReturned.replace(minReturned.find("return out"), 10, "return out, m");
  cs.push_back({"gn_tail_min_returned", minReturned, {{37, 256}}});
  // Prologues and epilogues of 70 nodes: functions called per lane, in the
  // register and team kernels, and before a tail. Two outputs each, one
  // from mid-epilogue.
  const std::string longPro = longRun("a", "x", "x", 70, "p");
  const std::string longEpi =
      longRun("e", "y", "y", 35, "mid") + longRun("f", "mid", "y", 35, "out");
  auto gnLong = [&](const std::string &shape, int64_t c, int groups) {
    return fmt::format("graph g(x: f32[{0}]) {{\n"
                       "  param gamma: f32[{1}] = uniform(0.5, 1.5, seed=4)\n"
                       "  param beta: f32[{1}] = uniform(-1, 1, seed=5)\n"
                       "{3}  y = group_norm(p, gamma, beta, groups={2})\n"
                       "{4}  return out, mid\n}}\n",
                       shape, c, groups, longPro, longEpi);
  };
  cs.push_back({"gn_regs_long_runs",
                gnLong("N, 256", 256, 16),
                {{37, 256}},
                0,
                0,
                1e-4});
  cs.push_back({"gn_team_long_runs",
                gnLong("N, 64, 96, 97", 64, 8),
                {{2, 64, 96, 97}},
                0,
                0,
                1e-4});
  cs.push_back({"gn_tail_long_epilogue",
                "graph g(x: f32[N, 256]) {\n"
                "  param gamma: f32[256] = uniform(0.5, 1.5, seed=4)\n"
                "  param beta: f32[256] = uniform(-1, 1, seed=5)\n"
                "  param bias: f32[1, 256, 1, 1] = uniform(-1, 1, seed=6)\n"
                "  y = group_norm(x, gamma, beta, groups=16)\n" +
                    longEpi +
                    "  m = min(out, dim=1, keepdim=true)\n  t = add(m, bias)\n"
                    "  return t, mid\n}\n",
                {{37, 256}},
                0,
                0,
                1e-4});
  // A tail of more elements than the grid has threads (several per thread,
  // the last round partial): [1, 4000, 67, 1] over 131 blocks.
  cs.push_back({"gn_tail_min_bias_wide", minBiasOf(4000, 250), {{67, 4000}}});
  // A tail after several rounds per warp of the GroupNorm phase.
  cs.push_back(
      {"gn_tail_min_bias_rounds", minBiasOf(8192, 512), {{437, 8192}}});
  // f16 and bf16 tensors: computed in float, each op's result rounded to
  // its dtype (the reference rounds the same way, so they agree but for an
  // ulp where float and double round to different neighbours).
  auto as = [](const std::string &kg, const char *dtype) {
    return replaceAll(kg, "f32", dtype);
  };
  cs.push_back(
      {"half_f16_chain_odd", as(unaryChain(), "f16"), {{37, 53}}, 0, 0, 5e-5});
  cs.push_back({"half_bf16_chain_vec4",
                as(unaryChain(), "bf16"),
                {{64, 256}},
                0,
                0,
                1e-4});
  cs.push_back({"half_f16_chain_nan",
                as(unaryChain(), "f16"),
                {{31, 33}},
                0,
                0.05,
                5e-5});
  // An f32 rank-0 tensor is rounded to f16 before an f16 op uses it; f16
  // with an f32 tensor computes in f32.
  cs.push_back({"half_mixed_dtypes",
                "graph m(x: f16[A, B], y: f32[B], s: f32[]) {\n"
                "  a = mul(x, s)\n  b = add(a, y)\n  c = gelu(a)\n"
                "  d = sub(c, 0.3)\n  return b, d\n}\n",
                {{29, 44}, {44}, {}},
                0,
                0,
                5e-5});
  cs.push_back({"half_bf16_broadcast",
                "graph b(x: bf16[N, 1], y: bf16[1, C, 1, 1]) {\n"
                "  s = add(x, y)\n  out = mul(s, 2.0)\n  return out\n}\n",
                {{131, 1}, {1, 77, 1, 1}},
                0,
                0,
                1e-4});
  for (const char *op : {"min", "sum", "mean", "logsumexp"})
    cs.push_back({std::string("half_f16_red_") + op,
                  fmt::format("graph r(x: f16[A, B]) {{\n  e = mul(x, 3.0)\n"
                              "  m = {}(e, dim=1, keepdim=true)\n"
                              "  out = add(m, 1.0)\n  r = {}(x, dim=0)\n"
                              "  return out, r\n}}\n",
                              op, op),
                  {{37, 1001}},
                  0,
                  0,
                  5e-5});
  cs.push_back({"half_f16_gn_regs_l2_37_like",
                as(l2_37Like, "f16"),
                {{19, 4096}},
                0,
                0,
                5e-5});
  // An element next to a bf16 rounding boundary rounds one way here and the
  // other in the reference: one bf16 ulp (0.4%). Over 6720 elements a few
  // such gave 1.1e-4 in one run of ten (H200, session 19).
  cs.push_back(
      {"half_bf16_gn_regs_odd",
       as(withC(gn("N, 64, 5, 7", 8, "", "  out = relu(y)\n"), 64), "bf16"),
       {{3, 64, 5, 7}},
       0,
       0,
       2e-4});
  cs.push_back({"half_f16_gn_team_offset",
                as(withC(gn("N, 64, 96, 97", 8, "", ""), 64), "f16"),
                {{2, 64, 96, 97}},
                100,
                0,
                5e-5});
  cs.push_back(
      {"half_bf16_gn_team_gelu_prologue",
       as(withC(gn("N, 16, 66, 66", 2, "  p = gelu(x)\n", ""), 16), "bf16"),
       {{3, 16, 66, 66}},
       0,
       0,
       1e-4});
  // A half part is kept on chip as halves; one this large still overflows
  // shared memory, so the rest of each block's part is re-read, and the
  // prologue (a swish) is applied to the re-read values too.
  cs.push_back(
      // bf16 rounding boundaries as in half_bf16_gn_regs_odd, twice (the
      // swish and the output): 1.3e-4 seen once in about ten runs.
      {"half_bf16_gn_team_reread",
       as(withC(gn("N, 16, 1024, 1025", 1, "  p = swish(x)\n", ""), 16),
          "bf16"),
       {{1, 16, 1024, 1025}},
       0,
       0,
       2e-4});
  // Vectors of 8 across two channels (hw % 8 == 4: the affine chosen per
  // element), in registers with a gelu prologue and in a team.
  cs.push_back(
      {"half_bf16_gn_straddle_gelu",
       as(withC(gn("N, 16, 30, 30", 4, "  p = gelu(x)\n", ""), 16), "bf16"),
       {{5, 16, 30, 30}},
       0,
       0,
       2e-4});
  cs.push_back({"half_f16_gn_team_straddle",
                as(withC(gn("N, 64, 66, 66", 8, "", ""), 64), "f16"),
                {{3, 64, 66, 66}},
                0,
                0,
                5e-5});
  cs.push_back({"half_f16_gn_team_nan",
                as(withC(gn("N, 20, 10, 11", 2, "", ""), 20), "f16"),
                {{33, 20, 10, 11}},
                0,
                1e-4,
                5e-5});
  cs.push_back({"half_f16_gn_tail_min_bias",
                as(minBias, "f16"),
                {{37, 256}},
                0,
                0,
                5e-5});
  // A depthwise convolution whose Cin * Cout * 9 is above 2^31 (its weight
  // is 147456 floats): conv.cuh bounded the former and NVRTC failed it.
  cs.push_back({"conv_depthwise_16384",
                "graph d(x: f32[N, 16384, 5, 6]) {\n"
                "  param w: f32[16384, 1, 3, 3] = uniform(-1, 1, seed=3)\n"
                "  y = conv2d(x, w, padding=1, groups=16384)\n"
                "  return y\n}\n",
                {{1, 16384, 5, 6}}});
  // Depthwise (the direct kernel, fp32 at every precision): 3 x 3 with a
  // fused relu over partial tiles (37 x 70 outputs: 16 x 64 tiles); a
  // channel multiplier of 2 with stride 2, dilation 2 and NaN; 5 x 5 on
  // inputs offset by 100.
  const std::string dw3 =
      "graph d(x: f32[N, 24, 37, 70]) {\n"
      "  param w: f32[24, 1, 3, 3] = uniform(-1, 1, seed=3)\n"
      "  param b: f32[24] = uniform(-1, 1, seed=4)\n"
      "  y = conv2d(x, w, b, padding=1, groups=24)\n"
      "  r = relu(y)\n  return r\n}\n";
  const std::string dwMul2 =
      "graph d(x: f32[N, 8, 29, 31]) {\n"
      "  param w: f32[16, 1, 3, 3] = uniform(-1, 1, seed=3)\n"
      "  y = conv2d(x, w, stride=2, padding=2, dilation=2, groups=8)\n"
      "  return y\n}\n";
  const std::string dw5 =
      "graph d(x: f32[N, 16, 40, 70]) {\n"
      "  param w: f32[16, 1, 5, 5] = uniform(-1, 1, seed=3)\n"
      "  param b: f32[16] = uniform(-1, 1, seed=4)\n"
      "  y = conv2d(x, w, b, padding=2, groups=16)\n"
      "  return y\n}\n";
  cs.push_back({"conv_depthwise_relu", dw3, {{2, 24, 37, 70}}});
  cs.push_back({"conv_depthwise_relu_high",
                dw3,
                {{2, 24, 37, 70}},
                0,
                0,
                2e-6,
                MatmulPrecision::High});
  cs.push_back({"conv_depthwise_mul2_nan", dwMul2, {{2, 8, 29, 31}}, 0, 0.01});
  cs.push_back({"conv_depthwise_5x5_offset", dw5, {{2, 16, 40, 70}}, 100});
  // 300 inputs added in a chain: more than one kernel reads (256).
  {
    std::string kg = "graph w(";
    std::vector<std::vector<int64_t>> shapes;
    for (int i = 0; i < 300; ++i) {
      kg += fmt::format("{}x{}: f32[N]", i ? ", " : "", i);
      shapes.push_back({37});
    }
    kg += ") {\n  s1 = add(x0, x1)\n";
    for (int i = 2; i < 300; ++i)
      kg += fmt::format("  s{} = add(s{}, x{})\n", i, i - 1, i);
    kg += "  return s299\n}\n";
    cs.push_back({"pw_chain_300_inputs", kg, shapes});
  }
  // Horizontal fusion: 300 siblings reading x (and one a broadcast y) share
  // two kernels of up to 255 outputs each, computed in an outlined function.
  {
    std::string kg = "graph h(x: f32[A, B], y: f32[B]) {\n";
    std::string ret;
    for (int i = 0; i < 300; ++i) {
      const char *const ops[] = {"add(x, {})", "mul(x, {})", "sub(y, x)",
                                 "sigmoid(x)"};
      kg += fmt::format("  s{} = ", i) +
            fmt::format(fmt::runtime(ops[i % 4]), 0.25 * i) + "\n";
      ret += fmt::format("{}s{}", i ? ", " : "", i);
    }
    kg += "  return " + ret + "\n}\n";
    cs.push_back({"pw_siblings_300", kg, {{9, 52}, {52}}});
  }
  // A chain of 1200 elementwise nodes, cut where a kernel would exceed the
  // partitioner's compile budget: the cut values pass through memory.
  {
    std::string kg = "graph c(x: f32[A, B]) {\n  p0 = add(x, 0.5)\n";
    const char *const steps[] = {"mul(p{}, x)", "sigmoid(p{})", "add(p{}, x)"};
    for (int i = 1; i < 1200; ++i)
      kg += fmt::format("  p{} = ", i) +
            fmt::format(fmt::runtime(steps[i % 3]), i - 1) + "\n";
    kg += "  return p1199, p700\n}\n";
    cs.push_back({"pw_chain_1200_cut", kg, {{13, 40}}});
  }
  // Trailing dims of 1: vectors run along the last dim larger than 1.
  cs.push_back({"pw_trailing_ones",
                "graph p(x: f32[N, 1], y: f32[1, 6, 1, 1], "
                "z: f32[1, 6, N, 1]) {\n"
                "  s = add(x, y)\n  out = mul(s, z)\n  return out\n}\n",
                {{12, 1}, {1, 6, 1, 1}, {1, 6, 12, 1}}});
  // NaN bounds, as PyTorch: a lone one is ignored, with two every result is
  // NaN.
  cs.push_back({"pw_clamp_nan_bounds",
                "graph c(x: f32[A, B]) {\n  a = clamp(x, min=nan)\n"
                "  b = clamp(x, min=-0.5, max=nan)\n"
                "  c = hardtanh(x, min_val=nan)\n"
                "  d = clamp(x, max=0.25)\n  return a, b, c, d\n}\n",
                {{5, 67}},
                0,
                0.05});
  // Number exponents as PyTorch computes them (sqrt, rsqrt, x * x, ...), on
  // infinities (x / 0) and signed zeros (x * 0) as well as finite values.
  cs.push_back({"pw_pow_literals",
                "graph p(x: f32[A, B]) {\n  i = div(x, 0.0)\n"
                "  z = mul(x, 0.0)\n  a = pow(i, 0.5)\n  b = pow(z, -0.5)\n"
                "  c = pow(x, 0.5)\n  d = pow(x, -0.5)\n  e = pow(x, 2)\n"
                "  f = pow(x, 3.0)\n  g = pow(i, -1.0)\n  h = pow(z, -2.0)\n"
                "  k = pow(x, 1.5)\n  return a, b, c, d, e, f, g, h, k\n}\n",
                {{7, 45}},
                0,
                0.05});
  // matmul with 1-D operands, as torch.matmul: a row times a matrix (and a
  // batch of them), a matrix times a column, a dot product.
  cs.push_back({"mm_1d_operands",
                "graph m(v: f32[K], a: f32[M, K], c: f32[K, M], "
                "b: f32[3, K, 5]) {\n"
                "  p = matmul(v, c)\n  q = matmul(a, v)\n"
                "  r = matmul(v, v)\n  s = matmul(v, b)\n"
                "  return q, r, s, p\n}\n",
                {{37}, {19, 37}, {37, 19}, {3, 37, 5}}});
  // Tensors with a dim of 0, as PyTorch allows. An empty batch: no kernel
  // runs and every output is empty.
  cs.push_back({"empty_batch_gn_tail", minBias, {{0, 256}}});
  // One output empty, the other not: only the kernel of the full one runs.
  cs.push_back({"empty_and_full_outputs",
                "graph g(x: f32[N, 8], z: f32[8]) {\n  a = gelu(x)\n"
                "  b = exp(z)\n  c = add(a, b)\n  return c, b\n}\n",
                {{0, 8}, {8}}});
  // Reductions over an empty dim: sum 0, mean NaN, logsumexp -inf.
  cs.push_back({"empty_dim_reductions",
                "graph r(x: f32[A, B]) {\n  s = sum(x, dim=1)\n"
                "  m = mean(x, dim=1, keepdim=true)\n"
                "  l = logsumexp(x, dim=1)\n  t = sum(x, dim=0)\n"
                "  return s, m, l, t\n}\n",
                {{37, 0}}});
  // An empty batch reduced away: zeros and NaN where the rest is empty.
  cs.push_back({"empty_batch_reduced",
                "graph r(x: f32[N, 8, 3]) {\n  y = swish(x)\n"
                "  s = sum(y, dim=[0, 2])\n  m = mean(y, dim=0)\n"
                "  return s, m, y\n}\n",
                {{0, 8, 3}}});
  // Contractions over 0 features: the bias (through gelu), or zeros.
  cs.push_back({"empty_linear_features",
                "graph l(x: f32[N, 0]) {\n"
                "  param w: f32[6, 0] = uniform(-1, 1, seed=1)\n"
                "  param b: f32[6] = uniform(-1, 1, seed=2)\n"
                "  y = linear(x, w, b)\n  out = gelu(y)\n  return out\n}\n",
                {{7, 0}}});
  cs.push_back({"empty_matmul_inner",
                "graph m(x: f32[M, K], y: f32[K, N]) {\n"
                "  out = matmul(x, y)\n  return out\n}\n",
                {{5, 0}, {0, 3}}});
  // linear on every kernel that runs it: on an H100/H200, wgmma in 3xTF32
  // (highest, K >= 256) or TF32 (high), FFMA otherwise (K % 4 != 0,
  // highest with K < 256, other GPUs). Odd sizes cross every tile edge;
  // K of 260 and more wrap the shared-memory ring.
  auto linear = [](const std::string &x, int64_t n, int64_t k,
                   const std::string &tail = "  return y\n") {
    return fmt::format("graph lin(x: f32[{}]) {{\n"
                       "  param w: f32[{}, {}] = uniform(-1, 1, seed=1)\n"
                       "  param b: f32[{}] = uniform(-1, 1, seed=2)\n"
                       "  y = linear(x, w, b)\n{}}}\n",
                       x, n, k, n, tail);
  };
  const MatmulPrecision high = MatmulPrecision::High;
  // TF32 keeps 10 bits of each operand (truncated): about 1e-3 of the sum.
  const double tf32Tol = 3e-3;
  cs.push_back({"linear_odd", linear("M, 260", 517, 260), {{333, 260}}});
  cs.push_back({"linear_odd_high",
                linear("M, 260", 517, 260),
                {{333, 260}},
                0,
                0,
                tf32Tol,
                high});
  cs.push_back(
      {"linear_k4_high", linear("M, 4", 9, 4), {{7, 4}}, 0, 0, tf32Tol, high});
  cs.push_back({"linear_k36_ffma", linear("M, 36", 257, 36), {{129, 36}}});
  cs.push_back({"linear_k36_high",
                linear("M, 36", 257, 36),
                {{129, 36}},
                0,
                0,
                tf32Tol,
                high});
  cs.push_back({"linear_k_unaligned_high",
                linear("M, 258", 100, 258),
                {{65, 258}},
                0,
                0,
                2e-6, // FFMA: K % 4 != 0
                high});
  cs.push_back({"linear_wide_tail_high",
                linear("M, 1024", 300, 1024),
                {{200, 1024}},
                0,
                0,
                tf32Tol,
                high});
  cs.push_back(
      {"linear_3d_input", linear("B, T, 512", 300, 512), {{3, 50, 512}}});
  cs.push_back(
      {"linear_nan", linear("M, 512", 200, 512), {{64, 512}}, 0, 0.002});
  // Infinite inputs at highest. 3xTF32 multiplies x's big part by w's big
  // and small parts, and w's small part has the other sign from w half the
  // time (inf - inf) or is 0 where w's TF32 value is exact (inf * 0; every
  // weight of full(0.375)); so an infinity must be x's small part (big 0),
  // which meets only w's big part. Some results are inf - inf (NaN) in the
  // reference too. w split by the blocks, or before them (over 32 row
  // tiles: linear_inf_split_weights), or transposed and split (matmul).
  Case linearInf{"linear_inf", linear("M, 512", 200, 512), {{64, 512}}};
  linearInf.infRate = 0.002;
  cs.push_back(linearInf);
  linearInf.name = "linear_inf_exact_weights";
  linearInf.kg = "graph lin(x: f32[M, 512]) {\n"
                 "  param w: f32[200, 512] = full(0.375)\n"
                 "  param b: f32[200] = uniform(-1, 1, seed=2)\n"
                 "  y = linear(x, w, b)\n  return y\n}\n";
  cs.push_back(linearInf);
  linearInf.name = "linear_inf_split_weights";
  linearInf.kg = "graph lin(x: f32[M, 512]) {\n"
                 "  param w: f32[200, 512] = full(0.375)\n"
                 "  y = linear(x, w)\n  return y\n}\n";
  linearInf.shapes = {{4100, 512}};
  cs.push_back(linearInf);
  linearInf.name = "matmul_inf_exact_weights";
  linearInf.kg = "graph mm(x: f32[M, 512]) {\n"
                 "  param w: f32[512, 200] = full(0.375)\n"
                 "  y = matmul(x, w)\n  return y\n}\n";
  linearInf.shapes = {{100, 512}};
  cs.push_back(linearInf);
  cs.push_back({"linear_nan_high",
                linear("M, 512", 200, 512),
                {{64, 512}},
                0,
                0.002,
                tf32Tol,
                high});
  // Inputs near 1000: 3xTF32's small parts carry what TF32 drops.
  cs.push_back(
      {"linear_offset", linear("M, 768", 136, 768), {{130, 768}}, 1000});
  cs.push_back({"linear_gn_l2_62_like",
                linear("M, 1024", 1024, 1024,
                       "  g = group_norm(y, groups=64)\n"
                       "  l = leaky_relu(g)\n  out = add(l, l)\n"
                       "  return out\n"),
                {{33, 1024}}});
  cs.push_back({"linear_gn_l2_62_like_high",
                linear("M, 1024", 1024, 1024,
                       "  g = group_norm(y, groups=64)\n"
                       "  l = leaky_relu(g)\n  out = add(l, l)\n"
                       "  return out\n"),
                {{33, 1024}},
                0,
                0,
                tf32Tol,
                high});
  // Fused epilogues of the tensor-core linear: elementwise nodes (with
  // broadcast operands), a GroupNorm in registers, the nodes after it.
  const std::string l2_37Gn =
      linear("M, 512", 1024, 512,
             "  param bias: f32[1024] = uniform(-1, 1, seed=3)\n"
             "  param gamma: f32[1024] = uniform(0.5, 1.5, seed=4)\n"
             "  param beta: f32[1024] = uniform(-1, 1, seed=5)\n"
             "  s = swish(y)\n  z = add(s, bias)\n"
             "  out = group_norm(z, gamma, beta, groups=16)\n"
             "  return out\n");
  cs.push_back({"linear_epi_l2_37_like", l2_37Gn, {{300, 512}}});
  cs.push_back({"linear_epi_l2_37_like_high",
                l2_37Gn,
                {{300, 512}},
                0,
                0,
                tf32Tol,
                high});
  // N = 1000 in groups of 8: the last tile is part full, whole groups.
  const std::string tailGn =
      linear("M, 264", 1000, 264,
             "  g = group_norm(y, groups=125)\n  out = leaky_relu(g, "
             "negative_slope=0.2)\n  return out\n");
  cs.push_back({"linear_epi_gn_tail", tailGn, {{77, 264}}});
  cs.push_back(
      {"linear_epi_gn_tail_high", tailGn, {{77, 264}}, 0, 0, tf32Tol, high});
  // Odd N (one column at a time), the linear's result and an epilogue value
  // both returned, a node reading both.
  cs.push_back({"linear_epi_outputs_odd",
                linear("M, 260", 517, 260,
                       "  r = relu(y)\n  t = mul(r, y)\n  return y, t, r\n"),
                {{33, 260}}});
  // A large offset before the GroupNorm (its statistics must not cancel)
  // and NaN inputs (their rows' groups are NaN).
  const std::string offsetGn =
      linear("M, 512", 512, 512,
             "  z = add(y, 1000.0)\n  out = group_norm(z, groups=32)\n"
             "  return out\n");
  // y + 1000 in f32 alone is off by up to ulp(1000) / 2 = 3e-5, about 2e-6
  // of the groups' spread (13): the tolerance allows that, and catches
  // E[x^2] - E[x]^2 (3e-4 here).
  cs.push_back({"linear_epi_gn_offset", offsetGn, {{130, 512}}, 0, 0, 1e-5});
  cs.push_back({"linear_epi_gn_nan", offsetGn, {{130, 512}}, 0, 0.001, 1e-5});
  // A node after the GroupNorm that reads the value before it: y is stored
  // for the next kernel.
  cs.push_back({"linear_epi_gn_residual",
                linear("M, 256", 256, 256,
                       "  g = group_norm(y, groups=8)\n  out = add(g, y)\n"
                       "  return out\n"),
                {{65, 256}}});
  // A residual read where the tiles do not divide y (the epilogue runs
  // for the elements past its edges too, storing nothing there): rows and
  // odd columns (one value a call), then rows and even ones (pairs), each
  // at both precisions, with NaN, and y stored beside.
  for (const MatmulPrecision p : {MatmulPrecision::Highest, high})
    for (const int n : {517, 264}) {
      const bool h = p == high;
      cs.push_back(
          {fmt::format("linear_residual_ragged_{}{}", n, h ? "_high" : ""),
           fmt::format("graph lin(x: f32[M, 520], r: f32[M, {0}]) {{\n"
                       "  param w: f32[{0}, 520] = uniform(-1, 1, seed=1)\n"
                       "  param b: f32[{0}] = uniform(-1, 1, seed=2)\n"
                       "  y = linear(x, w, b)\n  z = add(y, r)\n"
                       "  out = relu(z)\n  return out, y\n}}\n",
                       n),
           {{333, 520}, {333, n}},
           0,
           0.001,
           h ? tf32Tol : 2e-6,
           p});
    }
  // 3xTF32 with w split once per run (33 row tiles): odd N and K, then w
  // as an input with NaN in x and w, then L2_37's epilogue.
  cs.push_back(
      {"linear_split_w_odd", linear("M, 516", 301, 516), {{4099, 516}}});
  cs.push_back({"linear_split_w_nan",
                "graph lin(x: f32[M, 512], w: f32[200, 512]) {\n"
                "  y = linear(x, w)\n  return y\n}\n",
                {{4100, 512}, {200, 512}},
                0,
                0.0005});
  cs.push_back({"linear_split_w_epi_l2_37_like",
                linear("M, 512", 256, 512,
                       "  param bias: f32[256] = uniform(-1, 1, seed=3)\n"
                       "  s = mul(sigmoid(y), y)\n  z = add(s, bias)\n"
                       "  out = group_norm(z, groups=4)\n  return out\n"),
                {{4097, 512}}});
  // matmul with a 2-D right operand on the tensor cores: that operand
  // transposed (and split, 3xTF32) into a workspace before the tiles.
  // Odd M, N and K (K % 4 == 0), batched left operands, NaN, a parameter,
  // TF32 at a K of 36 (a part-full slice), and an elementwise node after
  // it in its epilogue, its input returned too.
  cs.push_back({"matmul_tc_odd",
                "graph m(x: f32[M, 516], y: f32[516, 301]) {\n"
                "  out = matmul(x, y)\n  return out\n}\n",
                {{333, 516}, {516, 301}}});
  // The linear's epilogue on a matmul: swish, + bias, GroupNorm in
  // registers, both precisions; the second with x batched.
  const std::string mmGn = "graph m(x: f32[M, 512]) {\n"
                           "  param w: f32[512, 256] = uniform(-1, 1, seed=1)\n"
                           "  param bias: f32[256] = uniform(-1, 1, seed=2)\n"
                           "  y = matmul(x, w)\n  s = swish(y)\n"
                           "  z = add(s, bias)\n"
                           "  out = group_norm(z, groups=4)\n  return out\n}\n";
  cs.push_back({"matmul_tc_epi_gn", mmGn, {{130, 512}}});
  cs.push_back(
      {"matmul_tc_epi_gn_high", mmGn, {{130, 512}}, 0, 0, tf32Tol, high});
  cs.push_back({"matmul_tc_batched_param",
                "graph m(x: f32[B, T, 512]) {\n"
                "  param w: f32[512, 200] = uniform(-1, 1, seed=1)\n"
                "  y = matmul(x, w)\n  out = gelu(y)\n  return out, y\n}\n",
                {{3, 50, 512}}});
  cs.push_back({"matmul_tc_nan",
                "graph m(x: f32[M, 512], y: f32[512, 130]) {\n"
                "  out = matmul(x, y)\n  return out\n}\n",
                {{70, 512}, {512, 130}},
                0,
                0.001});
  cs.push_back({"matmul_tc_k36_high",
                "graph m(x: f32[M, 36], y: f32[36, 257]) {\n"
                "  out = matmul(x, y)\n  return out\n}\n",
                {{129, 36}, {36, 257}},
                0,
                0,
                tf32Tol,
                high});
  cs.push_back({"matmul_tc_rows_high",
                "graph m(x: f32[M, 1024], y: f32[1024, 512]) {\n"
                "  out = matmul(x, y)\n  return out\n}\n",
                {{4097, 1024}, {1024, 512}},
                0,
                0,
                tf32Tol,
                high});
  // matmul with a batched right operand on the tensor cores: batch after
  // batch, each of b's matrices transposed first. Broadcast batch dims on
  // both sides, odd M, N and K (a part-full tile in every batch), both
  // precisions, NaN, bf16 with a 2-D (broadcast) left operand, and a tail
  // (each row's min) whose rows run across batches.
  const std::string bmm = "graph m(a: f32[B, 3, M, 516], b: f32[B, 1, 516, "
                          "301]) {\n  y = matmul(a, b)\n  out = gelu(y)\n"
                          "  return out\n}\n";
  cs.push_back(
      {"matmul_tc_bmm_broadcast", bmm, {{2, 3, 77, 516}, {2, 1, 516, 301}}});
  cs.push_back({"matmul_tc_bmm_broadcast_high",
                bmm,
                {{2, 3, 77, 516}, {2, 1, 516, 301}},
                0,
                0,
                tf32Tol,
                high});
  cs.push_back({"matmul_tc_bmm_nan",
                "graph m(a: f32[B, M, 512], b: f32[B, 512, 130]) {\n"
                "  out = matmul(a, b)\n  return out\n}\n",
                {{3, 130, 512}, {3, 512, 130}},
                0,
                0.0005});
  cs.push_back({"matmul_tc_bmm_bf16_left_2d",
                "graph m(a: bf16[M, 264], b: bf16[B, 264, 200]) {\n"
                "  out = matmul(a, b)\n  return out\n}\n",
                {{70, 264}, {3, 264, 200}},
                0,
                0,
                2e-3});
  cs.push_back({"matmul_tc_bmm_tail_high",
                "graph m(a: f32[B, M, 256], b: f32[B, 256, 136]) {\n"
                "  y = matmul(a, b)\n  r = min(y, dim=2, keepdim=true)\n"
                "  out = sub(r, 1.0)\n  return out\n}\n",
                {{4, 45, 256}, {4, 256, 136}},
                0,
                0,
                tf32Tol,
                high});
  // A tail in the tensor-core kernel: a min or max over the last dims of
  // the epilogue's last values, combined across tiles with atomics, then
  // the nodes after it over their own shape after a grid barrier. L2_75's
  // pattern at odd M and N (groups of 8, a part-full last tile) at both
  // precisions; without a group_norm, odd N (a column at a time), NaN, the
  // max and the node after it both returned; several rows a key (a [B, T,
  // N] result); and w split before the tiles (4097 rows) with a tail.
  const std::string minBias75 =
      linear("M, 512", 264, 512,
             "  param bias: f32[1, 264, 1, 1] = randn(seed=3)\n"
             "  param gamma: f32[264] = uniform(0.5, 1.5, seed=4)\n"
             "  g = group_norm(y, gamma, groups=33)\n"
             "  m = min(g, dim=1, keepdim=true)\n"
             "  out = add(m, bias)\n  return out\n");
  cs.push_back({"linear_tail_l2_75_like", minBias75, {{77, 512}}});
  cs.push_back({"linear_tail_l2_75_like_high",
                minBias75,
                {{77, 512}},
                0,
                0,
                tf32Tol,
                high});
  cs.push_back({"linear_tail_max_nan",
                linear("M, 516", 301, 516,
                       "  r = relu(y)\n  m = max(r, dim=1)\n"
                       "  out = mul(m, 2.0)\n  return out, m\n"),
                {{133, 516}},
                0,
                0.0005});
  cs.push_back({"linear_tail_samples_high",
                linear("B, T, 256", 200, 256,
                       "  m = min(y, dim=[1, 2], keepdim=true)\n"
                       "  out = sub(y, m)\n  return m, out\n"),
                {{3, 50, 256}},
                0,
                0,
                tf32Tol,
                high});
  // Sum, mean and logsumexp tails: each row's partial per column tile,
  // combined in order after the tiles. Odd N (a column at a time) with NaN,
  // after a GroupNorm at both precisions, several rows a key, and a batched
  // matmul's rows.
  cs.push_back({"linear_tail_lse_nan",
                linear("M, 516", 301, 516,
                       "  r = relu(y)\n"
                       "  s = logsumexp(r, dim=1, keepdim=true)\n"
                       "  out = mul(s, 2.0)\n  return out, s\n"),
                {{133, 516}},
                0,
                0.0005});
  // (With gamma = 1 and beta = 0 each group's normalised values sum to
  // zero: the reference is about 1e-15, and f32's 1e-6 fails any relative
  // test. gamma and beta make the sums about 10.)
  const std::string gnSum =
      linear("M, 512", 264, 512,
             "  param gamma: f32[264] = uniform(0.5, 1.5, seed=4)\n"
             "  param beta: f32[264] = uniform(-1, 1, seed=5)\n"
             "  g = group_norm(y, gamma, beta, groups=33)\n"
             "  s = sum(g, dim=1)\n  return s\n");
  cs.push_back({"linear_tail_gn_sum", gnSum, {{77, 512}}, 0, 0, 1e-5});
  cs.push_back(
      {"linear_tail_gn_sum_high", gnSum, {{77, 512}}, 0, 0, tf32Tol, high});
  cs.push_back({"linear_tail_mean_samples",
                linear("B, T, 512", 200, 512,
                       "  m = mean(y, dim=[1, 2], keepdim=true)\n"
                       "  out = add(m, 1.0)\n  return out\n"),
                {{3, 50, 512}}});
  cs.push_back({"matmul_tc_bmm_lse",
                "graph m(a: f32[B, M, 512], b: f32[B, 512, 136]) {\n"
                "  y = matmul(a, b)\n  s = logsumexp(y, dim=2)\n"
                "  return s\n}\n",
                {{4, 45, 512}, {4, 512, 136}}});
  cs.push_back({"linear_tail_split_w",
                linear("M, 512", 256, 512,
                       "  g = group_norm(y, groups=16)\n"
                       "  m = max(g, dim=1)\n  return m\n"),
                {{4097, 512}}});
  // f16 and bf16 linear (wgmma of the dtype, 64 of K a slice; the result
  // rounded to the dtype once, as cuBLAS's). Products are exact and the
  // sums f32, so results differ from the reference only where a rounding
  // boundary falls between the two sums: one ulp (bf16 0.4%, f16 0.05%) at
  // rare elements.
  auto halfLinear = [](const char *t, const std::string &x, int64_t n,
                       int64_t k, const std::string &tail) {
    return fmt::format("graph lin(x: {0}[{1}]) {{\n"
                       "  param w: {0}[{2}, {3}] = uniform(-1, 1, seed=1)\n"
                       "  param b: {0}[{2}] = uniform(-1, 1, seed=2)\n"
                       "  y = linear(x, w, b)\n{4}}}\n",
                       t, x, n, k, tail);
  };
  const std::string ret = "  return y\n";
  // Odd N (one column at a time), K = 264: a part-full last slice.
  cs.push_back({"linear_bf16_odd",
                halfLinear("bf16", "M, 264", 517, 264, ret),
                {{333, 264}},
                0,
                0,
                2e-3});
  cs.push_back({"linear_f16_wide_3d",
                halfLinear("f16", "B, T, 1024", 300, 1024, ret),
                {{4, 50, 1024}},
                0,
                0,
                5e-4});
  cs.push_back({"linear_bf16_nan",
                halfLinear("bf16", "M, 512", 128, 512, ret),
                {{70, 512}},
                0,
                0.002,
                2e-3});
  // f16 and bf16 matmul with a 2-D right operand: transposed into a
  // workspace of its dtype, then the half linear.
  cs.push_back({"matmul_bf16_odd",
                "graph m(x: bf16[M, 264], y: bf16[264, 301]) {\n"
                "  out = matmul(x, y)\n  return out\n}\n",
                {{333, 264}, {264, 301}},
                0,
                0,
                2e-3});
  cs.push_back({"matmul_f16_batched_param",
                "graph m(x: f16[B, T, 512]) {\n"
                "  param w: f16[512, 200] = uniform(-1, 1, seed=1)\n"
                "  out = matmul(x, w)\n  return out\n}\n",
                {{3, 50, 512}},
                0,
                0,
                5e-4});
  // The linear's bf16 result feeds a separate GroupNorm kernel.
  cs.push_back({"linear_bf16_then_gn",
                halfLinear("bf16", "M, 256", 256, 256,
                           "  s = swish(y)\n  out = group_norm(s, groups=8)\n"
                           "  return out\n"),
                {{65, 256}},
                0,
                0,
                2e-3});
  // A bias, an elementwise chain, a residual input, a column-broadcast
  // operand and a max tail, with rows and columns past the tiles (N = 264:
  // 8 columns into a second tile of 256; 260: 4 into a third of 128). bf16
  // stores the linear in runs of 8 columns (the quad transposes its
  // accumulators first; its epilogue runs in other kernels), f32 fuses the
  // chain on pairs.
  auto runs = [](const char *t, int64_t n) {
    return fmt::format(
        "graph lin(x: {0}[M, 264], r: {0}[M, {1}], c: {0}[M, 1]) {{\n"
        "  param w: {0}[{1}, 264] = uniform(-1, 1, seed=1)\n"
        "  param b: {0}[{1}] = uniform(-1, 1, seed=2)\n"
        "  y = linear(x, w, b)\n  g = gelu(y)\n  z = add(g, r)\n"
        "  s = mul(z, c)\n  m = max(s, dim=1)\n  return s, m\n}}\n",
        t, n);
  };
  cs.push_back({"linear_bf16_runs",
                runs("bf16", 264),
                {{133, 264}, {133, 264}, {133, 1}},
                0,
                0,
                2e-3});
  cs.push_back({"linear_runs_high",
                runs("f32", 260),
                {{133, 264}, {133, 260}, {133, 1}},
                0,
                0,
                tf32Tol,
                high});
  cs.push_back({"linear_runs_nan",
                runs("f32", 260),
                {{133, 264}, {133, 260}, {133, 1}},
                0,
                0.001});
  // Split-K (few tiles, long K): each tile's K slices shared out over
  // blocks (unevenly: K = 4100 is 129 slices of 32, the last part-full),
  // the last to finish adding the partial sums in order, then the
  // epilogue: plain, with a GroupNorm and a min tail, with NaN, in bf16.
  cs.push_back({"linear_split_k",
                linear("M, 4100", 300, 4100),
                {{70, 4100}},
                0,
                0,
                4e-6});
  cs.push_back({"linear_split_k_high",
                linear("M, 4100", 300, 4100),
                {{70, 4100}},
                0,
                0,
                tf32Tol,
                high});
  cs.push_back({"linear_split_k_nan",
                linear("M, 4100", 300, 4100),
                {{70, 4100}},
                0,
                0.0005,
                4e-6});
  const std::string splitGnMin =
      linear("M, 2048", 264, 2048,
             "  param gamma: f32[264] = uniform(0.5, 1.5, seed=4)\n"
             "  param beta: f32[264] = uniform(-1, 1, seed=5)\n"
             "  g = group_norm(y, gamma, beta, groups=33)\n"
             "  m = min(g, dim=1, keepdim=true)\n"
             "  out = add(g, m)\n  return out, m\n");
  cs.push_back({"linear_split_k_gn_min", splitGnMin, {{77, 2048}}, 0, 0, 1e-5});
  cs.push_back({"linear_split_k_gn_min_high",
                splitGnMin,
                {{77, 2048}},
                0,
                0,
                tf32Tol,
                high});
  cs.push_back({"linear_split_k_bf16",
                halfLinear("bf16", "M, 4096", 136, 4096, ret),
                {{50, 4096}},
                0,
                0,
                2e-3});
  // Stride-1 convolutions on the tensor cores (TF32 at high, wgmma_conv.cuh):
  // 64 output channels, Cin a multiple of 16, W % 4 == 0; odd heights and
  // widths that cross the 16 x 16 tiles, paddings, dilation, a 1 x 1
  // kernel, a partial weight slice (Cin 48), NaN, and L2_19's chain.
  auto conv = [](const std::string &op, const std::string &x,
                 const std::string &w, const std::string &attrs) {
    return fmt::format("graph c(x: f32[{}]) {{\n"
                       "  param w: f32[{}] = uniform(-0.1, 0.1, seed=1)\n"
                       "  param b: f32[64] = uniform(-1, 1, seed=2)\n"
                       "  y = {}(x, w, b{})\n  return y\n}}\n",
                       x, w, op, attrs);
  };
  cs.push_back({"conv_tc_transposed_high",
                conv("conv_transpose2d", "N, 64, 37, 44", "64, 64, 3, 3", ""),
                {{2, 64, 37, 44}},
                0,
                0,
                tf32Tol,
                high});
  cs.push_back(
      {"conv_tc_transposed_pad_high",
       conv("conv_transpose2d", "N, 32, 21, 20", "32, 64, 3, 3", ", padding=1"),
       {{3, 32, 21, 20}},
       0,
       0,
       tf32Tol,
       high});
  cs.push_back({"conv_tc_dilated_high",
                conv("conv2d", "N, 32, 29, 44", "64, 32, 3, 3",
                     ", padding=2, dilation=2"),
                {{3, 32, 29, 44}},
                0,
                0,
                tf32Tol,
                high});
  cs.push_back({"conv_tc_1x1_cin48_high",
                conv("conv2d", "N, 48, 17, 20", "64, 48, 1, 1", ""),
                {{2, 48, 17, 20}},
                0,
                0,
                tf32Tol,
                high});
  cs.push_back({"conv_tc_nan_high",
                conv("conv2d", "N, 64, 19, 24", "64, 64, 3, 3", ", padding=1"),
                {{2, 64, 19, 24}},
                0,
                0.0005,
                tf32Tol,
                high});
  // The same at highest: 3xTF32, to fp32's accuracy.
  cs.push_back({"conv_tc_transposed",
                conv("conv_transpose2d", "N, 64, 37, 44", "64, 64, 3, 3", ""),
                {{2, 64, 37, 44}}});
  cs.push_back({"conv_tc_dilated",
                conv("conv2d", "N, 32, 29, 44", "64, 32, 3, 3",
                     ", padding=2, dilation=2"),
                {{3, 32, 29, 44}}});
  cs.push_back({"conv_tc_1x1_cin48",
                conv("conv2d", "N, 48, 17, 20", "64, 48, 1, 1", ""),
                {{2, 48, 17, 20}}});
  cs.push_back({"conv_tc_nan",
                conv("conv2d", "N, 64, 19, 24", "64, 64, 3, 3", ", padding=1"),
                {{2, 64, 19, 24}},
                0,
                0.0005});
  // An epilogue of more than 60 nodes: one function (convEpilogue) called
  // per value, with an output from mid-chain.
  {
    std::string kg = "graph c(x: f32[N, 32, 19, 22]) {\n"
                     "  param w: f32[64, 32, 3, 3] = uniform(-0.1, 0.1, "
                     "seed=1)\n"
                     "  param b: f32[64] = uniform(-1, 1, seed=2)\n"
                     "  p0 = conv2d(x, w, b, padding=1)\n";
    const char *const steps[] = {"sigmoid(p{})", "tanh(p{})", "gelu(p{})",
                                 "add(p{}, 0.25)"};
    for (int i = 1; i <= 64; ++i)
      kg += fmt::format("  p{} = ", i) +
            fmt::format(fmt::runtime(steps[i % 4]), i - 1) + "\n";
    kg += "  return p64, p31\n}\n";
    cs.push_back({"conv_tc_long_epilogue", kg, {{2, 32, 19, 22}}});
  }
  // Rows of 23 floats (not whole 32-byte sectors): the epilogue's paired
  // stores (PairStores), with a residual read and two outputs, at the
  // ping-pong `high` and the 3xTF32 `highest`.
  {
    const std::string kg =
        "graph c(x: f32[N, 64, 17, 21], r: f32[N, 64, 19, 23]) {\n"
        "  param w: f32[64, 64, 3, 3] = uniform(-0.04, 0.04, seed=1)\n"
        "  param b: f32[64] = uniform(-0.5, 0.5, seed=2)\n"
        "  y = conv_transpose2d(x, w, b, stride=1)\n"
        "  a = gelu(y)\n  o = add(a, r)\n  return a, o\n}\n";
    cs.push_back({"conv_tc_paired_stores_residual",
                  kg,
                  {{3, 64, 17, 21}, {3, 64, 19, 23}}});
    cs.push_back({"conv_tc_paired_stores_residual_high",
                  kg,
                  {{3, 64, 17, 21}, {3, 64, 19, 23}},
                  0,
                  0,
                  tf32Tol,
                  high});
  }
  // Infinite inputs (see linear_inf): the weights split when bound.
  Case convInf{"conv_tc_inf",
               conv("conv2d", "N, 64, 19, 24", "64, 64, 3, 3", ", padding=1"),
               {{2, 64, 19, 24}}};
  convInf.infRate = 0.0005;
  cs.push_back(convInf);
  convInf.name = "conv_tc_inf_exact_weights";
  convInf.kg = "graph c(x: f32[N, 64, 19, 24]) {\n"
               "  param w: f32[64, 64, 3, 3] = full(0.375)\n"
               "  param b: f32[64] = uniform(-1, 1, seed=2)\n"
               "  y = conv2d(x, w, b, padding=1)\n  return y\n}\n";
  cs.push_back(convInf);
  convInf.name = "conv_tc_inf_exact_weights_high";
  convInf.precision = high;
  convInf.tol = tf32Tol;
  cs.push_back(convInf);
  cs.push_back({"conv_tc_offset",
                conv("conv2d", "N, 64, 19, 24", "64, 64, 3, 3", ", padding=1"),
                {{2, 64, 19, 24}},
                100});
  // L2_19's chain (conv_transpose2d 3 x 3 into 64 channels, gelu,
  // GroupNorm(8)) on x [N, cin, h, w], the weight in +-wBound.
  auto l2_19Like = [](int cin, const std::string &hw, double wBound) {
    return fmt::format(
        "graph c(x: f32[N, {0}, {1}]) {{\n"
        "  param w: f32[{0}, 64, 3, 3] = uniform(-{2}, {2}, seed=1)\n"
        "  param b: f32[64] = uniform(-0.04, 0.04, seed=2)\n"
        "  param gamma: f32[64] = uniform(0.5, 1.5, seed=3)\n"
        "  param beta: f32[64] = uniform(-1, 1, seed=4)\n"
        "  y = conv_transpose2d(x, w, b)\n  g = gelu(y)\n"
        "  out = group_norm(g, gamma, beta, groups=8)\n"
        "  return out\n}}\n",
        cin, hw, wBound);
  };
  cs.push_back({"conv_tc_l2_19_like_high",
                l2_19Like(64, "30, 32", 0.04),
                {{2, 64, 30, 32}},
                0,
                0,
                tf32Tol,
                high});
  // One NaN in sample 1: every group of that sample NaN (PyTorch), and no
  // other sample's; 128 slices on 52 teams of gnTeam, so teams that
  // normalised sample 1 go on to later samples.
  Case l2_19OneNan{"conv_tc_l2_19_like_one_nan_high",
                   l2_19Like(8, "126, 126", 0.1),
                   {{16, 8, 126, 126}},
                   0,
                   0,
                   tf32Tol,
                   high};
  l2_19OneNan.nanAt = 8 * 126 * 126 + 5000;
  cs.push_back(l2_19OneNan);
  // Any output channels that are a multiple of 8 (parts of 128, 64, 32,
  // 16, 8 to a block), input channels padded with zeros to 16, strided
  // conv_transpose2d by output phases, and fused epilogues.
  auto convChain = [](const std::string &x, const std::string &conv,
                      const std::string &w, int64_t cout,
                      const std::string &chain) {
    return fmt::format("graph c({}) {{\n"
                       "  param w: f32[{}] = uniform(-0.1, 0.1, seed=1)\n"
                       "  param b: f32[{}] = uniform(-1, 1, seed=2)\n"
                       "  y = {}\n{}}}\n",
                       x, w, cout, conv, chain);
  };
  const std::string cin8 =
      convChain("x: f32[N, 8, 19, 20]", "conv2d(x, w, b, padding=1)",
                "128, 8, 3, 3", 128, "  r = relu(y)\n  return r\n");
  const std::string cin3 =
      convChain("x: f32[N, 3, 21, 24]", "conv2d(x, w, b, padding=1)",
                "32, 3, 3, 3", 32, "  return y\n");
  const std::string cout40 =
      convChain("x: f32[N, 16, 17, 20]", "conv2d(x, w, b)", "40, 16, 1, 1", 40,
                "  s = silu(y)\n  return s\n");
  // 33 x 40 outputs: phases of 17 and 16 rows; y is an output too.
  const std::string s2k3 = convChain(
      "x: f32[N, 64, 17, 20]",
      "conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=[0, 1])",
      "64, 32, 3, 3", 32, "  a = gelu(y)\n  return a, y\n");
  // 30 x 32 outputs and a residual input.
  const std::string s2k4 = convChain(
      "x: f32[N, 32, 15, 16], r: f32[N, 64, 30, 32]",
      "conv_transpose2d(x, w, b, stride=2, padding=1)", "32, 64, 4, 4", 64,
      "  z = add(y, r)\n  out = leaky_relu(z, negative_slope=0.1)\n"
      "  return out\n");
  // One stage a tile (16 input channels) with the row phase chosen at run
  // time and both column phases a tile (TF32): 21 x 26 outputs.
  const std::string s2k3Cin16 = convChain(
      "x: f32[N, 16, 11, 13]", "conv_transpose2d(x, w, b, stride=2, padding=1)",
      "16, 32, 3, 3", 32, "  r = relu(y)\n  return r\n");
  // Stride 3 and dilation 2: phases of one, two and no taps a dim.
  const std::string s3d2 =
      convChain("x: f32[N, 16, 13, 12]",
                "conv_transpose2d(x, w, b, stride=3, padding=2, dilation=2, "
                "output_padding=1)",
                "16, 16, 3, 3", 16, "  return y\n");
  cs.push_back({"conv_tc_cin8_cout128_relu_high",
                cin8,
                {{2, 8, 19, 20}},
                0,
                0,
                tf32Tol,
                high});
  cs.push_back(
      {"conv_tc_cin3_high", cin3, {{3, 3, 21, 24}}, 0, 0, tf32Tol, high});
  // Stride 3 x 2: a patch of 48 x 40 pixels, whose layout once took the
  // whole 227 KiB and left none for the kernel's own __shared__ variables
  // (the launch failed; found by ConvFuzzCases.cpp).
  cs.push_back({"conv_tc_s3x2_cin3_medium",
                convChain("x: f32[N, 3, 35, 11]",
                          "conv2d(x, w, b, stride=[3, 2], padding=[1, 2])",
                          "40, 3, 3, 3", 40, "  return y\n"),
                {{2, 3, 35, 11}},
                0,
                0,
                tf32Tol,
                MatmulPrecision::Medium});
  // 128 output channels a block (K = 9 x 32): a partial tile row (23), a
  // residual add in the epilogue, NaN.
  const std::string cout128 =
      convChain("x: f32[N, 32, 23, 28], r: f32[N, 128, 23, 28]",
                "conv2d(x, w, b, padding=1)", "128, 32, 3, 3", 128,
                "  z = add(y, r)\n  return z\n");
  // conv2d of stride 2: 19 x 22 outputs (partial tiles), a 1 x 1
  // downsampling into 128 channels, dilation 2 with NaN; at high and
  // highest.
  const std::string c2dS2 =
      convChain("x: f32[N, 32, 37, 44]", "conv2d(x, w, b, stride=2, padding=1)",
                "64, 32, 3, 3", 64, "  r = relu(y)\n  return r\n");
  const std::string c2dS2k1 =
      convChain("x: f32[N, 64, 30, 32]", "conv2d(x, w, b, stride=2)",
                "128, 64, 1, 1", 128, "  return y\n");
  const std::string c2dS2d2 =
      convChain("x: f32[N, 16, 29, 32]",
                "conv2d(x, w, b, stride=2, padding=2, dilation=2)",
                "32, 16, 3, 3", 32, "  return y\n");
  for (MatmulPrecision p : {high, MatmulPrecision::Highest}) {
    const std::string at = p == high ? "_high" : "";
    const double tol = p == high ? tf32Tol : 2e-6;
    cs.push_back(
        {"conv_tc_c2d_s2" + at, c2dS2, {{2, 32, 37, 44}}, 0, 0, tol, p});
    cs.push_back(
        {"conv_tc_c2d_s2_1x1" + at, c2dS2k1, {{2, 64, 30, 32}}, 0, 0, tol, p});
    cs.push_back({"conv_tc_c2d_s2_d2_nan" + at,
                  c2dS2d2,
                  {{2, 16, 29, 32}},
                  0,
                  0.01,
                  tol,
                  p});
    // 4 x 4 of stride 2 whose patch fits only with 8-byte copies (rows
    // of 36 columns, not 40): 128 input channels at high, 64 at highest;
    // 32-wide rows (16-byte copies otherwise), odd rows, NaN, silu.
    const int cin = p == high ? 128 : 64;
    cs.push_back({"conv_tc_c2d_k4_s2_narrow_copies" + at,
                  convChain(fmt::format("x: f32[N, {}, 31, 32]", cin),
                            "conv2d(x, w, b, stride=2, padding=1)",
                            fmt::format("24, {}, 4, 4", cin), 24,
                            "  s = silu(y)\n  return s\n"),
                  {{2, cin, 31, 32}},
                  0,
                  0.002,
                  tol,
                  p});
  }
  // The weight streamed through the ring (its parts would be narrower than
  // 64 channels kept whole, 32 at highest): 150 input channels (the last
  // stage's 6 past them zeros) into 64 (ping-pong at high), odd 19 x 21,
  // NaN; 136 into 128 at even 17 x 18 (from the blocks' images: every
  // conv_tc case's parameters are constant, below).
  const std::string stream64 =
      convChain("x: f32[N, 150, 19, 21]", "conv2d(x, w, b, padding=1)",
                "64, 150, 3, 3", 64, "  s = silu(y)\n  return s\n");
  const std::string stream128 =
      convChain("x: f32[N, 136, 17, 18]", "conv2d(x, w, b, padding=1)",
                "128, 136, 3, 3", 128, "  r = relu(y)\n  return r\n");
  for (MatmulPrecision p : {high, MatmulPrecision::Highest}) {
    const std::string at = p == high ? "_high" : "";
    const double tol = p == high ? tf32Tol : 2e-6;
    cs.push_back({"conv_tc_c2d_stream_64_nan" + at,
                  stream64,
                  {{2, 150, 19, 21}},
                  0,
                  0.002,
                  tol,
                  p});
    cs.push_back({"conv_tc_c2d_stream_128" + at,
                  stream128,
                  {{3, 136, 17, 18}},
                  0,
                  0,
                  tol,
                  p});
  }
  // Streamed ping-pong at stride 2 (72 channels into 64): stages of 8
  // channels, three (16 would leave two), the last stage's 8 the last of
  // Cin; odd 27 x 33, NaN, at high and medium.
  for (MatmulPrecision p : {high, MatmulPrecision::Medium})
    cs.push_back({std::string("conv_tc_c2d_s2_stream_8_ping_pong_nan") +
                      (p == high ? "_high" : "_medium"),
                  convChain("x: f32[N, 72, 27, 33]",
                            "conv2d(x, w, b, stride=2, padding=1)",
                            "64, 72, 3, 3", 64, "  s = silu(y)\n  return s\n"),
                  {{2, 72, 27, 33}},
                  0,
                  0.002,
                  tf32Tol,
                  p});
  // 4 x 4 of stride 2 from 136 channels in stages of 8 (rows of 32 bytes;
  // parts of 128 at high, 32 at highest), 15 x 17 outputs, NaN.
  const std::string streamK4 = convChain(
      "x: f32[N, 136, 31, 34]", "conv2d(x, w, b, stride=2, padding=1)",
      "128, 136, 4, 4", 128, "  r = relu(y)\n  return r\n");
  for (MatmulPrecision p : {high, MatmulPrecision::Highest})
    cs.push_back({std::string("conv_tc_c2d_k4_s2_stream_8_nan") +
                      (p == high ? "_high" : ""),
                  streamK4,
                  {{2, 136, 31, 34}},
                  0,
                  0.001,
                  p == high ? tf32Tol : 2e-6,
                  p});
  // conv_transpose2d streamed: 136 channels into 128 at stride 1 (odd 19
  // columns), and 264 (the last stage's 8 past them zeros) into 64 at
  // stride 2, by phase (its images a phase's 4 taps each), NaN; 200 by
  // phase into 128 (one part at high) at kernel 3 (phases of 1, 2, 2 and 4
  // taps), odd 7 x 9.
  const std::string streamT1 = convChain(
      "x: f32[N, 136, 17, 19]", "conv_transpose2d(x, w, b, padding=1)",
      "136, 128, 3, 3", 128, "  s = silu(y)\n  return s\n");
  const std::string streamT2 = convChain(
      "x: f32[N, 264, 9, 11]", "conv_transpose2d(x, w, b, stride=2, padding=1)",
      "264, 64, 4, 4", 64, "  r = relu(y)\n  return r\n");
  const std::string streamT3 =
      convChain("x: f32[N, 200, 7, 9]",
                "conv_transpose2d(x, w, b, stride=2, padding=1, "
                "output_padding=1)",
                "200, 128, 3, 3", 128, "  g = gelu(y)\n  return g\n");
  for (MatmulPrecision p : {high, MatmulPrecision::Highest}) {
    const std::string at = p == high ? "_high" : "";
    const double tol = p == high ? tf32Tol : 2e-6;
    cs.push_back({"conv_tc_transposed_stream" + at,
                  streamT1,
                  {{2, 136, 17, 19}},
                  0,
                  0,
                  tol,
                  p});
    cs.push_back({"conv_tc_transposed_s2_stream_by_phase_nan" + at,
                  streamT2,
                  {{2, 264, 9, 11}},
                  0,
                  0.001,
                  tol,
                  p});
    cs.push_back({"conv_tc_transposed_s2_stream_by_phase_128" + at,
                  streamT3,
                  {{3, 200, 7, 9}},
                  0,
                  0,
                  tol,
                  p});
  }
  // (At high, by phase above means 3xTF32's: TF32 streams those by row
  // phase since bench/NOTES.md v46.)
  // Streamed by row phase (TF32: a tile's column phases together, each
  // stage its row phase's taps alone): kernel 4 from 72 channels (the last
  // stage's 8 past them zeros) into 64, odd 9 x 11, NaN; kernel 3 with
  // output_padding (row phases of 2 and 1 taps) from 136 into two parts
  // of 64, odd 7 x 9, with y an output too; kernel 4 from 48, padding 2,
  // then silu and group_norm.
  const std::string rowsK4 = convChain(
      "x: f32[N, 72, 9, 11]", "conv_transpose2d(x, w, b, stride=2, padding=1)",
      "72, 64, 4, 4", 64, "  r = relu(y)\n  return r\n");
  const std::string rowsK3 =
      convChain("x: f32[N, 136, 7, 9]",
                "conv_transpose2d(x, w, b, stride=2, padding=1, "
                "output_padding=1)",
                "136, 128, 3, 3", 128, "  g = gelu(y)\n  return g, y\n");
  const std::string rowsGn = convChain(
      "x: f32[N, 48, 10, 7]", "conv_transpose2d(x, w, b, stride=2, padding=2)",
      "48, 64, 4, 4", 64,
      "  s = silu(y)\n  g = group_norm(s, groups=8)\n  return g\n");
  // TF32 still streams by phase into channels not a multiple of 64: 520
  // into 96 (parts of 32, a phase's 4 taps), odd 5 x 7.
  const std::string byPhase96 = convChain(
      "x: f32[N, 520, 5, 7]", "conv_transpose2d(x, w, b, stride=2, padding=1)",
      "520, 96, 4, 4", 96, "  r = relu(y)\n  return r\n");
  cs.push_back({"conv_tc_transposed_s2_stream_by_phase_96_high",
                byPhase96,
                {{2, 520, 5, 7}},
                0,
                0,
                tf32Tol,
                high});
  // By row phase in two groups (each part within one), and dilated 2
  // (kernel 3, padding 1: one row phase has all 3 row taps, the other
  // none, so its rows are the bias alone).
  const std::string rowsGrouped =
      convChain("x: f32[N, 144, 9, 7]",
                "conv_transpose2d(x, w, b, stride=2, padding=1, groups=2)",
                "144, 64, 4, 4", 128, "  r = relu(y)\n  return r\n");
  const std::string rowsDilated =
      convChain("x: f32[N, 200, 9, 7]",
                "conv_transpose2d(x, w, b, stride=2, padding=1, dilation=2, "
                "output_padding=1)",
                "200, 64, 3, 3", 64, "  return y\n");
  cs.push_back({"conv_tc_transposed_s2_stream_rows_grouped_high",
                rowsGrouped,
                {{2, 144, 9, 7}},
                0,
                0,
                tf32Tol,
                high});
  cs.push_back({"conv_tc_transposed_s2_stream_rows_dilated_high",
                rowsDilated,
                {{2, 200, 9, 7}},
                0,
                0,
                tf32Tol,
                high});
  for (MatmulPrecision p : {high, MatmulPrecision::Medium}) {
    const std::string at = p == high ? "_high" : "_medium";
    cs.push_back({"conv_tc_transposed_s2_stream_rows_nan" + at,
                  rowsK4,
                  {{2, 72, 9, 11}},
                  0,
                  0.001,
                  tf32Tol,
                  p});
    cs.push_back({"conv_tc_transposed_s2_stream_rows_k3" + at,
                  rowsK3,
                  {{3, 136, 7, 9}},
                  0,
                  0,
                  tf32Tol,
                  p});
    cs.push_back({"conv_tc_transposed_s2_stream_rows_gn" + at,
                  rowsGn,
                  {{2, 48, 10, 7}},
                  0,
                  0,
                  tf32Tol,
                  p});
  }
  // Grouped, streamed: 2 groups of 136 input channels into 64 each (each
  // part within one group), 11 x 13.
  const std::string streamG = convChain(
      "x: f32[N, 272, 11, 13]", "conv2d(x, w, b, padding=1, groups=2)",
      "128, 136, 3, 3", 128, "  r = relu(y)\n  return r\n");
  for (MatmulPrecision p : {high, MatmulPrecision::Highest})
    cs.push_back(
        {std::string("conv_tc_grouped_stream") + (p == high ? "_high" : ""),
         streamG,
         {{2, 272, 11, 13}},
         0,
         0,
         p == high ? tf32Tol : 2e-6,
         p});
  // A channel tail after a streamed weight (one part of all 64 channels at
  // high; the partitioner asks as the scheduler schedules, with the
  // parameters constant).
  cs.push_back({"conv_tc_c2d_stream_min_channels_high",
                convChain("x: f32[N, 150, 19, 21]",
                          "conv2d(x, w, b, padding=1)", "64, 150, 3, 3", 64,
                          "  m = min(y, dim=1, keepdim=true)\n  return m\n"),
                {{2, 150, 19, 21}},
                0,
                0.001,
                tf32Tol,
                high});
  // Grouped: 2 groups of 16 input channels into 32 each (a partial tile
  // row, 23), 4 groups of 8 into 16 with NaN, and a strided
  // conv_transpose2d of 2 groups (w [Cin][Cout / groups][kh][kw]); at high
  // and highest.
  const std::string grouped =
      convChain("x: f32[N, 32, 23, 28]", "conv2d(x, w, b, padding=1, groups=2)",
                "64, 16, 3, 3", 64, "  r = relu(y)\n  return r\n");
  const std::string grouped4 =
      convChain("x: f32[N, 32, 17, 20]",
                "conv2d(x, w, b, padding=2, dilation=2, groups=4)",
                "64, 8, 3, 3", 64, "  return y\n");
  const std::string groupedT =
      convChain("x: f32[N, 32, 13, 16]",
                "conv_transpose2d(x, w, b, stride=2, padding=1, "
                "output_padding=1, groups=2)",
                "32, 16, 3, 3", 32, "  return y\n");
  for (MatmulPrecision p : {high, MatmulPrecision::Highest}) {
    const std::string at = p == high ? "_high" : "";
    const double tol = p == high ? tf32Tol : 2e-6;
    cs.push_back(
        {"conv_tc_grouped" + at, grouped, {{2, 32, 23, 28}}, 0, 0, tol, p});
    cs.push_back({"conv_tc_grouped4_nan" + at,
                  grouped4,
                  {{2, 32, 17, 20}},
                  0,
                  0.01,
                  tol,
                  p});
    cs.push_back({"conv_tc_grouped_transposed" + at,
                  groupedT,
                  {{2, 32, 13, 16}},
                  0,
                  0,
                  tol,
                  p});
  }
  // Input rows of any width: W = 30 (8-byte copies) with padding and a
  // residual, ResNet's 14 x 14 and 7 x 7 stages (8- and 4-byte copies), and
  // a strided conv_transpose2d of odd W (21) with NaN; at high and highest.
  const std::string w30 =
      convChain("x: f32[N, 32, 19, 30], r: f32[N, 64, 19, 30]",
                "conv2d(x, w, b, padding=1)", "64, 32, 3, 3", 64,
                "  z = add(y, r)\n  return z\n");
  const std::string w14 =
      convChain("x: f32[N, 64, 14, 14]", "conv2d(x, w, b, padding=1)",
                "64, 64, 3, 3", 64, "  r = relu(y)\n  return r\n");
  const std::string w7 =
      convChain("x: f32[N, 128, 7, 7]", "conv2d(x, w, b, padding=1)",
                "128, 128, 3, 3", 128, "  return y\n");
  const std::string w21 = convChain(
      "x: f32[N, 32, 13, 21]",
      "conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1)",
      "32, 32, 3, 3", 32, "  return y\n");
  for (MatmulPrecision p : {high, MatmulPrecision::Highest}) {
    const std::string at = p == high ? "_high" : "";
    const double tol = p == high ? tf32Tol : 2e-6;
    cs.push_back({"conv_tc_w30_residual" + at,
                  w30,
                  {{2, 32, 19, 30}, {2, 64, 19, 30}},
                  0,
                  0,
                  tol,
                  p});
    cs.push_back({"conv_tc_w14" + at, w14, {{3, 64, 14, 14}}, 0, 0, tol, p});
    cs.push_back({"conv_tc_w7" + at, w7, {{3, 128, 7, 7}}, 0, 0, tol, p});
    cs.push_back({"conv_tc_w21_transposed_nan" + at,
                  w21,
                  {{2, 32, 13, 21}},
                  0,
                  0.01,
                  tol,
                  p});
  }
  // Reductions over the channels in the convolution's epilogue (its tail:
  // one part of the output channels, each pixel's values combined over a
  // quad of lanes): min with NaN (propagated), logsumexp of a relu with y
  // returned too, a strided conv_transpose2d (both column phases a tile)
  // into a mean and the nodes after it, and ping-pong into a max at a large
  // offset; odd sizes throughout.
  const std::string minC = convChain(
      "x: f32[N, 64, 19, 24]", "conv2d(x, w, b, padding=1)", "64, 64, 3, 3", 64,
      "  m = min(y, dim=1, keepdim=true)\n  return m\n");
  const std::string lseC = convChain(
      "x: f32[N, 32, 21, 30]", "conv2d(x, w, b, padding=1)", "32, 32, 3, 3", 32,
      "  a = relu(y)\n  m = logsumexp(a, dim=1)\n"
      "  return y, m\n");
  const std::string meanC = convChain(
      "x: f32[N, 16, 15, 17]", "conv_transpose2d(x, w, b, stride=2, padding=1)",
      "16, 32, 4, 4", 32,
      "  r = relu(y)\n  m = mean(r, dim=1)\n"
      "  o = add(mul(m, 2.0), 1.0)\n  return o\n");
  const std::string maxC =
      convChain("x: f32[N, 16, 37, 44]", "conv2d(x, w, b, padding=1)",
                "32, 16, 3, 3", 32, "  m = max(y, dim=1)\n  return m\n");
  // The tail's node after it reading an input of the tail's shape.
  const std::string maxPlus = convChain(
      "x: f32[N, 32, 17, 19], z: f32[N, 17, 19]", "conv2d(x, w, b, padding=1)",
      "32, 32, 3, 3", 32, "  m = max(y, dim=1)\n  o = add(m, z)\n  return o\n");
  for (MatmulPrecision p : {high, MatmulPrecision::Highest}) {
    const std::string at = p == high ? "_high" : "";
    const double tol = p == high ? tf32Tol : 2e-6;
    cs.push_back({"conv_tc_max_channels_plus_input" + at,
                  maxPlus,
                  {{2, 32, 17, 19}, {2, 17, 19}},
                  0,
                  0,
                  tol,
                  p});
    if (p == high) // (at highest its 64 channels take two parts: no tail)
      cs.push_back({"conv_tc_min_channels_nan" + at,
                    minC,
                    {{2, 64, 19, 24}},
                    0,
                    0.0005,
                    tol,
                    p});
    cs.push_back({"conv_tc_logsumexp_channels" + at,
                  lseC,
                  {{3, 32, 21, 30}},
                  0,
                  0,
                  tol,
                  p});
    cs.push_back({"conv_tc_mean_channels_transposed" + at,
                  meanC,
                  {{2, 16, 15, 17}},
                  0,
                  0,
                  tol,
                  p});
    cs.push_back({"conv_tc_max_channels_offset" + at,
                  maxC,
                  {{2, 16, 37, 44}},
                  100,
                  0,
                  tol,
                  p});
  }
  // f16 and bf16 convolutions: the patch kept in halves, products in their
  // type (exact) at every precision, y rounded to its dtype before the
  // epilogue's ops (as PyTorch's). Rows of 30 (4-byte copies), 32 (16-byte;
  // two groups, a residual), 21 (one value at a time, through registers;
  // stride 2, NaN) and 14 (at highest), ping-pong (L2_19's
  // conv_transpose2d, more tiles than blocks), parts of 128, and an
  // offset, 16 input channels into a strided conv_transpose2d; conv2d of
  // stride 2, whose patch leaves room for two stages only, in TF32
  // products (exact too), with rows of 34 and 33 (through registers). The
  // sums differ from the reference's only in order, so results differ by
  // an ulp where a rounding boundary falls between them.
  const struct {
    const char *name, *dtype;
    std::string kg;
    std::vector<std::vector<int64_t>> shapes;
    double offset, nanRate;
    MatmulPrecision precision;
  } halves[] = {
      {"conv_tc_bf16_w30_gelu",
       "bf16",
       convChain("x: f32[N, 32, 19, 30]", "conv2d(x, w, b, padding=1)",
                 "64, 32, 3, 3", 64, "  a = gelu(y)\n  return a\n"),
       {{2, 32, 19, 30}},
       0,
       0,
       high},
      {"conv_tc_f16_grouped_residual",
       "f16",
       convChain("x: f32[N, 32, 17, 32], r: f32[N, 64, 17, 32]",
                 "conv2d(x, w, b, padding=1, groups=2)", "64, 16, 3, 3", 64,
                 "  z = add(y, r)\n  return z\n"),
       {{2, 32, 17, 32}, {2, 64, 17, 32}},
       0,
       0,
       high},
      {"conv_tc_f16_w21_transposed_nan",
       "f16",
       w21,
       {{2, 32, 13, 21}},
       0,
       0.01,
       high},
      {"conv_tc_f16_transposed_ping_pong_nan",
       "f16",
       convChain("x: f32[N, 64, 44, 61]", "conv_transpose2d(x, w, b)",
                 "64, 64, 3, 3", 64, "  a = gelu(y)\n  return a\n"),
       {{12, 64, 44, 61}},
       0,
       0.01,
       high},
      {"conv_tc_bf16_w14",
       "bf16",
       w14,
       {{3, 64, 14, 14}},
       0,
       0,
       MatmulPrecision::Highest},
      {"conv_tc_bf16_cin8_cout128_relu",
       "bf16",
       cin8,
       {{2, 8, 19, 20}},
       0,
       0,
       MatmulPrecision::Highest},
      {"conv_tc_f16_s2_w34",
       "f16",
       convChain("x: f32[N, 32, 20, 34]",
                 "conv2d(x, w, b, stride=2, padding=1)", "64, 32, 3, 3", 64,
                 "  return y\n"),
       {{2, 32, 20, 34}},
       0,
       0,
       high},
      {"conv_tc_bf16_s2_w33_relu_nan",
       "bf16",
       convChain("x: f32[N, 32, 31, 33]",
                 "conv2d(x, w, b, stride=2, padding=1)", "64, 32, 3, 3", 64,
                 "  a = relu(y)\n  return a\n"),
       {{2, 32, 31, 33}},
       0,
       0.01,
       high},
      {"conv_tc_f16_s2k4_offset",
       "f16",
       s2k4,
       {{2, 32, 15, 16}, {2, 64, 30, 32}},
       100,
       0,
       high},
      // One stage a tile (16 input channels), both column phases a tile.
      {"conv_tc_bf16_s2k3_cin16",
       "bf16",
       s2k3Cin16,
       {{3, 16, 11, 13}},
       0,
       0,
       high},
      // The weight streamed through the ring (wide channels; the last
      // stage's channels past Cin zeros): parts of 128, of 64 (NaN), a
      // conv_transpose2d, and one of stride 2 by phase, in k16 products.
      {"conv_tc_bf16_stream_136_w30",
       "bf16",
       convChain("x: f32[N, 136, 17, 30]", "conv2d(x, w, b, padding=1)",
                 "128, 136, 3, 3", 128, "  a = relu(y)\n  return a\n"),
       {{2, 136, 17, 30}},
       0,
       0,
       high},
      {"conv_tc_f16_stream_64_nan",
       "f16",
       convChain("x: f32[N, 264, 13, 32]", "conv2d(x, w, b, padding=1)",
                 "64, 264, 3, 3", 64, "  a = silu(y)\n  return a\n"),
       {{2, 264, 13, 32}},
       0,
       0.01,
       high},
      {"conv_tc_bf16_transposed_stream",
       "bf16",
       convChain("x: f32[N, 136, 11, 21]",
                 "conv_transpose2d(x, w, b, padding=1)", "136, 128, 3, 3", 128,
                 "  return y\n"),
       {{2, 136, 11, 21}},
       0,
       0,
       high},
      // Strided conv_transpose2d streamed by row phase (parts of 64, a
      // tile's column phases together): 200 channels into 128, kernel 4;
      // 72 into 64 (NaN, odd 9 x 11) and kernel 3 with output_padding
      // (row phases of 2 and 1 taps), 136 into 128 (odd 7 x 9).
      {"conv_tc_f16_transposed_s2_stream_rows",
       "f16",
       convChain("x: f32[N, 200, 9, 11]",
                 "conv_transpose2d(x, w, b, stride=2, padding=1)",
                 "200, 128, 4, 4", 128, "  a = gelu(y)\n  return a\n"),
       {{2, 200, 9, 11}},
       0,
       0,
       high},
      {"conv_tc_bf16_transposed_s2_stream_rows_nan",
       "bf16",
       convChain("x: f32[N, 72, 9, 11]",
                 "conv_transpose2d(x, w, b, stride=2, padding=1)",
                 "72, 64, 4, 4", 64, "  a = relu(y)\n  return a\n"),
       {{2, 72, 9, 11}},
       0,
       0.01,
       high},
      {"conv_tc_bf16_transposed_s2_stream_rows_k3",
       "bf16",
       convChain("x: f32[N, 136, 7, 9]",
                 "conv_transpose2d(x, w, b, stride=2, padding=1, "
                 "output_padding=1)",
                 "136, 128, 3, 3", 128, "  a = silu(y)\n  return a\n"),
       {{3, 136, 7, 9}},
       0,
       0,
       high},
      // Streamed at stride 2, in TF32 products (k16's stages do not fit):
      // stages of 8 channels into parts of 128 (odd 31 x 34), and of 16 in
      // ping-pong, 72 channels (NaN).
      {"conv_tc_bf16_s2k4_stream_8",
       "bf16",
       convChain("x: f32[N, 136, 31, 34]",
                 "conv2d(x, w, b, stride=2, padding=1)", "128, 136, 4, 4", 128,
                 "  a = relu(y)\n  return a\n"),
       {{2, 136, 31, 34}},
       0,
       0,
       high},
      {"conv_tc_f16_s2_stream_ping_pong_nan",
       "f16",
       convChain("x: f32[N, 72, 27, 33]",
                 "conv2d(x, w, b, stride=2, padding=1)", "64, 72, 3, 3", 64,
                 "  return y\n"),
       {{2, 72, 27, 33}},
       0,
       0.01,
       high},
      // The depthwise kernel (relu fused, NaN), and the FFMA tiles (groups
      // of 4 channels, strided conv_transpose2d), converting as they load.
      {"conv_depthwise_bf16_nan",
       "bf16",
       convChain("x: f32[N, 16, 13, 14]",
                 "conv2d(x, w, b, padding=1, groups=16)", "16, 1, 3, 3", 16,
                 "  a = relu(y)\n  return a\n"),
       {{2, 16, 13, 14}},
       0,
       0.01,
       high},
      {"conv_ffma_f16_groups4_transposed",
       "f16",
       convChain("x: f32[N, 16, 9, 10]",
                 "conv_transpose2d(x, w, b, stride=2, padding=1, groups=4)",
                 "16, 4, 3, 3", 16, "  return y\n"),
       {{2, 16, 9, 10}},
       0,
       0,
       MatmulPrecision::Highest},
      // Weights streamed in stages of 8 input channels, where k16 products
      // (16 channels a step) cannot run: TF32 products instead (found by
      // the random cases, ConvFuzzCases.cpp: NVRTC refused these kernels).
      // conv2d of stride 2 from 16 channels into parts of 128 (medium).
      {"conv_tc_f16_stream_8_s2",
       "f16",
       convChain("x: f32[N, 16, 17, 6]",
                 "conv2d(x, w, b, stride=2, padding=[0, 1])", "128, 16, 3, 3",
                 128, "  a = gelu(y)\n  return a\n"),
       {{2, 16, 17, 6}},
       0,
       0.002,
       MatmulPrecision::Medium},
      // A dilated 4 x 5 kernel from 8 channels, then group_norm.
      {"conv_tc_bf16_stream_8_k4x5",
       "bf16",
       convChain("x: f32[N, 8, 27, 39]",
                 "conv2d(x, w, b, padding=1, dilation=[1, 2])", "128, 8, 4, 5",
                 128,
                 "  param gamma: f32[128] = uniform(0.5, 1.5, seed=3)\n"
                 "  param beta: f32[128] = uniform(-0.5, 0.5, seed=4)\n"
                 "  a = gelu(y)\n"
                 "  o = group_norm(a, gamma, beta, groups=4)\n  return o\n"),
       {{2, 8, 27, 39}},
       0,
       0,
       high},
  };
  for (const auto &h : halves)
    cs.push_back({h.name, replaceAll(h.kg, "f32", h.dtype), h.shapes, h.offset,
                  h.nanRate, std::string(h.dtype) == "bf16" ? 2e-3 : 5e-4,
                  h.precision});
  cs.push_back({"conv_tc_cout128_residual_high",
                cout128,
                {{2, 32, 23, 28}, {2, 128, 23, 28}},
                0,
                0,
                tf32Tol,
                high});
  cs.push_back({"conv_tc_cout128_nan_high",
                cout128,
                {{2, 32, 23, 28}, {2, 128, 23, 28}},
                0,
                0.01,
                tf32Tol,
                high});
  cs.push_back({"conv_tc_cout40_silu_high",
                cout40,
                {{2, 16, 17, 20}},
                0,
                0,
                tf32Tol,
                high});
  cs.push_back(
      {"conv_tc_s2k3_high", s2k3, {{2, 64, 17, 20}}, 0, 0, tf32Tol, high});
  cs.push_back({"conv_tc_s2k4_residual_high",
                s2k4,
                {{2, 32, 15, 16}, {2, 64, 30, 32}},
                0,
                0,
                tf32Tol,
                high});
  cs.push_back({"conv_tc_s2k3_cin16_high",
                s2k3Cin16,
                {{3, 16, 11, 13}},
                0,
                0,
                tf32Tol,
                high});
  cs.push_back(
      {"conv_tc_s3d2_high", s3d2, {{2, 16, 13, 12}}, 0, 0, tf32Tol, high});
  cs.push_back({"conv_tc_s2k3_nan_high",
                s2k3,
                {{2, 64, 17, 20}},
                0,
                0.0005,
                tf32Tol,
                high});
  // 128 input channels into 64, kernel 4, stride 2: by phase (a block keeps
  // its phase's 4 taps).
  const std::string byPhase = convChain(
      "x: f32[N, 128, 9, 12]", "conv_transpose2d(x, w, b, stride=2, padding=1)",
      "128, 64, 4, 4", 64, "  return y\n");
  // Stride 2 and dilation 2: the odd phases have no taps (the bias alone).
  const std::string s2d2 = convChain(
      "x: f32[N, 16, 11, 12]",
      "conv_transpose2d(x, w, b, stride=2, dilation=2, output_padding=1)",
      "16, 16, 3, 3", 16, "  return y\n");
  // Both column phases of a tile with odd rows (39 columns: no pairs), and
  // pairs through an epilogue that broadcasts a per-channel scale.
  const std::string oddW = convChain(
      "x: f32[N, 32, 11, 20]", "conv_transpose2d(x, w, b, stride=2, padding=1)",
      "32, 24, 3, 3", 24, "  return y\n");
  const std::string scaled = convChain(
      "x: f32[N, 32, 15, 16], s: f32[64, 1, 1], r: f32[N, 64, 30, 32]",
      "conv_transpose2d(x, w, b, stride=2, padding=1)", "32, 64, 4, 4", 64,
      "  z = mul(y, s)\n  out = sub(z, r)\n  return out\n");
  cs.push_back({"conv_tc_s2_odd_width_high",
                oddW,
                {{2, 32, 11, 20}},
                0,
                0,
                tf32Tol,
                high});
  cs.push_back({"conv_tc_s2_scaled_pairs_high",
                scaled,
                {{2, 32, 15, 16}, {64, 1, 1}, {2, 64, 30, 32}},
                0,
                0,
                tf32Tol,
                high});
  cs.push_back({"conv_tc_by_phase_high",
                byPhase,
                {{2, 128, 9, 12}},
                0,
                0,
                tf32Tol,
                high});
  cs.push_back(
      {"conv_tc_s2d2_high", s2d2, {{2, 16, 11, 12}}, 0, 0, tf32Tol, high});
  // At highest (3xTF32, fp32's accuracy).
  cs.push_back({"conv_tc_by_phase", byPhase, {{2, 128, 9, 12}}});
  cs.push_back({"conv_tc_s2d2", s2d2, {{2, 16, 11, 12}}});
  cs.push_back({"conv_tc_cin8_cout128_relu", cin8, {{2, 8, 19, 20}}});
  cs.push_back({"conv_tc_cout40_silu", cout40, {{2, 16, 17, 20}}});
  cs.push_back({"conv_tc_s2k3", s2k3, {{2, 64, 17, 20}}});
  cs.push_back(
      {"conv_tc_s2k4_residual", s2k4, {{2, 32, 15, 16}, {2, 64, 30, 32}}});
  cs.push_back({"conv_tc_s3d2", s3d2, {{2, 16, 13, 12}}});
  cs.push_back(
      {"conv_tc_s2k4_offset", s2k4, {{2, 32, 15, 16}, {2, 64, 30, 32}}, 100});
  // The tensor-core convolutions run as the CLI compiles them, with
  // constant parameters: each block copies its image of the weight, made
  // once (GpuConstantParams checks that it is made again when the
  // parameters change); six also as without them, each block gathering its
  // part from w, and three streamed ones, their images made at every launch.
  std::vector<Case> gathered;
  for (Case &c : cs) {
    if (c.name.rfind("conv_tc", 0) != 0)
      continue;
    if (c.name == "conv_tc_transposed_high" ||
        c.name == "conv_tc_s2k4_residual_high" ||
        c.name == "conv_tc_by_phase" || c.name == "conv_tc_s2k3" ||
        c.name == "conv_tc_grouped_high" || c.name == "conv_tc_bf16_w14" ||
        c.name == "conv_tc_c2d_stream_128_high" ||
        c.name == "conv_tc_transposed_s2_stream_by_phase_nan" ||
        c.name == "conv_tc_transposed_s2_stream_by_phase_128_high" ||
        c.name == "conv_tc_transposed_s2_stream_rows_k3_high") {
      gathered.push_back(c);
      gathered.back().name += "_gathered";
    }
    c.constantParams = true;
  }
  cs.insert(cs.end(), gathered.begin(), gathered.end());
  return cs;
}

void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

} // namespace kiln
