//===- ConvFuzzCases.cpp - Random convolutions for the GPU suite ----------===//
//
// The GPU suite's convolution cases are chosen by hand, one per path the
// scheduler knows of. These are drawn at random from the whole parameter
// space instead: conv2d and conv_transpose2d with kernels of 1 to 5 (not
// always square), strides 1 to 3, paddings, dilations 1 to 3,
// output_padding, groups (depthwise too), channel counts that are and are
// not multiples of 8 or 16, odd sizes, with or without a bias, at every
// precision and in f16 and bf16, followed by an activation, a residual
// input, a group_norm or a reduction over channels or pixels, sometimes
// with NaN or a large offset. A fixed seed keeps them the same from run to
// run (the first draws are the same whatever the count); KILN_CONV_FUZZ_SEED
// draws another set and KILN_CONV_FUZZ_COUNT sets how many (a case's name
// tells what it draws, to reproduce it).
//
//===----------------------------------------------------------------------===//
#include "GpuCases.h"

#include <fmt/format.h>

#include <cstdlib>
#include <random>

namespace kiln {
namespace {

/// One random convolution and what follows it.
struct ConvDraw {
  bool transposed;
  int64_t n, cin, cout, h, w, groups;
  int64_t kh, kw, sh, sw, ph, pw, dh, dw, oph = 0, opw = 0;
  bool bias;
  std::string dtype; // f32, f16 or bf16
  MatmulPrecision precision;
  int after; // 0 none, 1 activation, 2 residual, 3 group_norm, 4 reduction
  std::string activation;
  int64_t gnGroups = 1;
  std::string reduction;
  double offset = 0, nanRate = 0;
};

/// The output's spatial size along one dim (0 or less: none).
int64_t outDim(const ConvDraw &d, int64_t in, int64_t k, int64_t s, int64_t p,
               int64_t dil, int64_t op) {
  if (d.transposed)
    return (in - 1) * s - 2 * p + dil * (k - 1) + op + 1;
  const int64_t room = in + 2 * p - dil * (k - 1) - 1;
  return room < 0 ? 0 : room / s + 1;
}

ConvDraw draw(std::mt19937_64 &rng) {
  auto pick = [&](std::initializer_list<int64_t> v) {
    return *(v.begin() + rng() % v.size());
  };
  auto chance = [&](double p) {
    return std::uniform_real_distribution<double>(0, 1)(rng) < p;
  };
  auto in = [&](int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng() % (hi - lo + 1));
  };
  ConvDraw d;
  d.transposed = chance(0.4);
  d.n = in(1, 3);
  // Groups: mostly one; some depthwise (one channel a group, any multiplier).
  const int64_t g = pick({1, 1, 1, 1, 2, 4, 0});
  const int64_t perIn = pick({1, 3, 4, 8, 13, 16, 24, 32, 48, 64});
  const int64_t perOut = pick({1, 8, 8, 16, 24, 32, 40, 64, 64, 72, 128});
  if (g == 0) { // depthwise
    d.cin = pick({8, 16, 24, 32});
    d.groups = d.cin;
    d.cout = d.cin * pick({1, 1, 2});
  } else {
    d.groups = g;
    d.cin = perIn * g;
    d.cout = perOut * g;
  }
  d.kh = pick({1, 2, 3, 3, 3, 4, 5});
  d.kw = chance(0.8) ? d.kh : pick({1, 2, 3, 4, 5});
  d.sh = pick({1, 1, 1, 2, 2, 3});
  d.sw = chance(0.8) ? d.sh : pick({1, 2, 3});
  d.dh = pick({1, 1, 1, 1, 2, 3});
  d.dw = chance(0.8) ? d.dh : pick({1, 2});
  d.ph = in(0, d.dh * (d.kh - 1));
  d.pw = in(0, d.dw * (d.kw - 1));
  if (d.transposed) {
    // output_padding below the stride or the dilation, as PyTorch requires.
    d.oph = in(0, std::max(d.sh, d.dh) - 1);
    d.opw = in(0, std::max(d.sw, d.dw) - 1);
  }
  d.h = in(3, 37);
  d.w = in(3, 41);
  d.bias = chance(0.7);
  d.dtype = chance(0.8) ? "f32" : chance(0.5) ? "f16" : "bf16";
  d.precision = in(0, 3) == 0 ? MatmulPrecision::Medium
                : chance(0.5) ? MatmulPrecision::High
                              : MatmulPrecision::Highest;
  d.after = static_cast<int>(in(0, 4));
  d.activation = in(0, 3) == 0 ? "relu"
                 : chance(0.5) ? "gelu"
                 : chance(0.5) ? "swish"
                               : "leaky_relu";
  for (int64_t gg : {8, 4, 2, 1})
    if (d.cout % gg == 0 && chance(0.6)) {
      d.gnGroups = gg;
      break;
    }
  d.reduction = in(0, 3) == 0 ? "min"
                : chance(0.5) ? "logsumexp"
                : chance(0.5) ? "mean_hw"
                              : "max";
  // (An offset not before a group_norm: the products' error grows with it,
  // while the normalised output keeps the spread's size.)
  if (chance(0.15))
    d.nanRate = 0.002;
  else if (d.after != 3 && chance(0.15))
    d.offset = pick({10, 100});
  return d;
}

/// The graph of `d` (its input x at shape `x`), and the name that says what
/// it draws.
Case caseOf(const ConvDraw &d, int index) {
  const int64_t ho = outDim(d, d.h, d.kh, d.sh, d.ph, d.dh, d.oph);
  const int64_t wo = outDim(d, d.w, d.kw, d.sw, d.pw, d.dw, d.opw);
  const std::string t = d.dtype;
  const int64_t w0 = d.transposed ? d.cin : d.cout;
  const int64_t w1 = d.transposed ? d.cout / d.groups : d.cin / d.groups;
  const int64_t fanIn = (d.cin / d.groups) * d.kh * d.kw;
  const double bound = 1.0 / std::sqrt(static_cast<double>(fanIn));
  std::string inputs = fmt::format("x: {}[N, {}, {}, {}]", t, d.cin, d.h, d.w);
  if (d.after == 2)
    inputs += fmt::format(", r: {}[N, {}, {}, {}]", t, d.cout, ho, wo);
  std::string kg = fmt::format("graph fuzz({}) {{\n", inputs);
  kg += fmt::format("  param w: {}[{}, {}, {}, {}] = uniform({}, {}, "
                    "seed={})\n",
                    t, w0, w1, d.kh, d.kw, -bound, bound, index + 1);
  if (d.bias)
    kg += fmt::format("  param b: {}[{}] = uniform(-0.5, 0.5, seed={})\n", t,
                      d.cout, index + 1001);
  std::string attrs = fmt::format(
      "stride=[{}, {}], padding=[{}, {}], dilation=[{}, {}], groups={}", d.sh,
      d.sw, d.ph, d.pw, d.dh, d.dw, d.groups);
  if (d.transposed)
    attrs += fmt::format(", output_padding=[{}, {}]", d.oph, d.opw);
  kg += fmt::format("  y = {}(x, w{}, {})\n",
                    d.transposed ? "conv_transpose2d" : "conv2d",
                    d.bias ? ", b" : "", attrs);
  std::string what;
  switch (d.after) {
  case 0:
    kg += "  return y\n";
    break;
  case 1:
    kg += fmt::format("  a = {}(y)\n  return a\n", d.activation);
    what = "_" + d.activation;
    break;
  case 2:
    kg += "  z = add(y, r)\n  return z\n";
    what = "_residual";
    break;
  case 3:
    kg += fmt::format("  param gamma: {}[{}] = uniform(0.5, 1.5, seed=7)\n"
                      "  param beta: {}[{}] = uniform(-0.5, 0.5, seed=8)\n"
                      "  a = {}(y)\n"
                      "  o = group_norm(a, gamma, beta, groups={})\n"
                      "  return o\n",
                      t, d.cout, t, d.cout, d.activation, d.gnGroups);
    what = fmt::format("_{}_gn{}", d.activation, d.gnGroups);
    break;
  default:
    if (d.reduction == "mean_hw")
      kg += "  m = mean(y, dim=[2, 3])\n  return m\n";
    else
      kg += fmt::format("  m = {}(y, dim=1, keepdim=true)\n  return m\n",
                        d.reduction);
    what = "_" + d.reduction;
    break;
  }
  kg += "}\n";
  Case c;
  c.name = fmt::format(
      "conv_fuzz_{:02}_{}_{}x{}_c{}to{}_k{}x{}_s{}x{}_p{}x{}_d{}x{}{}_g{}{}{}_"
      "{}_{}{}{}",
      index, d.transposed ? "ct" : "c2d", d.h, d.w, d.cin, d.cout, d.kh, d.kw,
      d.sh, d.sw, d.ph, d.pw, d.dh, d.dw,
      d.transposed ? fmt::format("_op{}x{}", d.oph, d.opw) : "", d.groups,
      d.bias ? "_bias" : "", what, t, precisionName(d.precision),
      d.nanRate > 0 ? "_nan" : "",
      d.offset > 0 ? fmt::format("_offset{}", d.offset) : "");
  c.kg = kg;
  c.shapes = {{d.n, d.cin, d.h, d.w}};
  if (d.after == 2)
    c.shapes.push_back({d.n, d.cout, ho, wo});
  c.offset = d.offset;
  c.nanRate = d.nanRate;
  c.precision = d.precision;
  // As the hand-written cases: fp32's accuracy at highest (3xTF32), TF32's
  // at high and medium (on f32 data), a half's rounding of y in f16 and
  // bf16.
  const bool tf32 = t == "f32" && d.precision != MatmulPrecision::Highest;
  c.tol = t == "bf16" ? 4e-3 : t == "f16" ? 1e-3 : tf32 ? 3e-3 : 2e-6;
  c.constantParams = true;
  return c;
}

} // namespace

std::vector<Case> convFuzzCases(int count) {
  const char *seedText = std::getenv("KILN_CONV_FUZZ_SEED");
  const char *countText = std::getenv("KILN_CONV_FUZZ_COUNT");
  const uint64_t seed = seedText ? std::strtoull(seedText, nullptr, 10) : 2026;
  if (countText)
    count = std::atoi(countText);
  std::mt19937_64 rng(seed);
  std::vector<Case> cs;
  for (int i = 0; static_cast<int>(cs.size()) < count && i < 100 * count; ++i) {
    const ConvDraw d = draw(rng);
    // Drawn again where the output would be empty or the work too large
    // for a test (the reference evaluator runs on one CPU thread).
    const int64_t ho = outDim(d, d.h, d.kh, d.sh, d.ph, d.dh, d.oph);
    const int64_t wo = outDim(d, d.w, d.kw, d.sw, d.pw, d.dw, d.opw);
    if (ho < 1 || wo < 1)
      continue;
    const int64_t macs =
        d.n * d.cout * ho * wo * (d.cin / d.groups) * d.kh * d.kw;
    if (macs > 60'000'000)
      continue;
    cs.push_back(caseOf(d, static_cast<int>(cs.size())));
  }
  return cs;
}

} // namespace kiln
