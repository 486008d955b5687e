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
#include "Draws.h"
#include "GpuCases.h"

#include <fmt/format.h>

#include <cmath>

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

ConvDraw draw(Draws &r) {
  ConvDraw d;
  d.transposed = r.chance(0.4);
  d.n = r.in(1, 3);
  // Groups: mostly one; some depthwise (one channel a group, any multiplier).
  const int64_t g = r.pick({1, 1, 1, 1, 2, 4, 0});
  const int64_t perIn = r.pick({1, 3, 4, 8, 13, 16, 24, 32, 48, 64});
  const int64_t perOut = r.pick({1, 8, 8, 16, 24, 32, 40, 64, 64, 72, 128});
  if (g == 0) { // depthwise
    d.cin = r.pick({8, 16, 24, 32});
    d.groups = d.cin;
    d.cout = d.cin * r.pick({1, 1, 2});
  } else {
    d.groups = g;
    d.cin = perIn * g;
    d.cout = perOut * g;
  }
  d.kh = r.pick({1, 2, 3, 3, 3, 4, 5});
  d.kw = r.chance(0.8) ? d.kh : r.pick({1, 2, 3, 4, 5});
  d.sh = r.pick({1, 1, 1, 2, 2, 3});
  d.sw = r.chance(0.8) ? d.sh : r.pick({1, 2, 3});
  d.dh = r.pick({1, 1, 1, 1, 2, 3});
  d.dw = r.chance(0.8) ? d.dh : r.pick({1, 2});
  d.ph = r.in(0, d.dh * (d.kh - 1));
  d.pw = r.in(0, d.dw * (d.kw - 1));
  if (d.transposed) {
    // output_padding below the stride or the dilation, as PyTorch requires.
    d.oph = r.in(0, std::max(d.sh, d.dh) - 1);
    d.opw = r.in(0, std::max(d.sw, d.dw) - 1);
  }
  d.h = r.in(3, 37);
  d.w = r.in(3, 41);
  d.bias = r.chance(0.7);
  d.dtype = r.dtype();
  d.precision = r.precision();
  d.after = static_cast<int>(r.in(0, 4));
  d.activation = r.activation();
  d.gnGroups = r.groups(d.cout, {8, 4, 2, 1});
  d.reduction = r.in(0, 3) == 0 ? "min"
                : r.chance(0.5) ? "logsumexp"
                : r.chance(0.5) ? "mean_hw"
                                : "max";
  r.noise(d.after != 3, d.nanRate, d.offset);
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
  // (Drawn as 0 to 4.)
  const Tail tails[] = {Tail::None, Tail::Activation, Tail::Residual,
                        Tail::GroupNorm, Tail::Reduction};
  const std::string reduction =
      d.reduction == "mean_hw"
          ? "mean(y, dim=[2, 3])"
          : fmt::format("{}(y, dim=1, keepdim=true)", d.reduction);
  const auto [tail, what] = drawnTail(tails[d.after], t, d.cout, d.activation,
                                      d.gnGroups, reduction, d.reduction);
  kg += tail;
  kg += "}\n";
  std::vector<std::vector<int64_t>> shapes = {{d.n, d.cin, d.h, d.w}};
  if (d.after == 2)
    shapes.push_back({d.n, d.cout, ho, wo});
  const std::string name = fmt::format(
      "conv_fuzz_{:02}_{}_{}x{}_c{}to{}_k{}x{}_s{}x{}_p{}x{}_d{}x{}{}_g{}{}",
      index, d.transposed ? "ct" : "c2d", d.h, d.w, d.cin, d.cout, d.kh, d.kw,
      d.sh, d.sw, d.ph, d.pw, d.dh, d.dw,
      d.transposed ? fmt::format("_op{}x{}", d.oph, d.opw) : "", d.groups,
      d.bias ? "_bias" : "");
  return drawnCase(name, what, kg, shapes, t, d.precision, d.offset, d.nanRate);
}

} // namespace

std::vector<Case> convFuzzCases(int count) {
  // Drawn again where the output would be empty or the work too large for
  // a test (the reference evaluator runs on one CPU thread).
  auto fits = [](const ConvDraw &d) {
    const int64_t ho = outDim(d, d.h, d.kh, d.sh, d.ph, d.dh, d.oph);
    const int64_t wo = outDim(d, d.w, d.kw, d.sw, d.pw, d.dw, d.opw);
    return ho >= 1 && wo >= 1 &&
           d.n * d.cout * ho * wo * (d.cin / d.groups) * d.kh * d.kw <=
               60'000'000;
  };
  return drawCases("KILN_CONV_FUZZ_SEED", "KILN_CONV_FUZZ_COUNT", count, draw,
                   fits, caseOf);
}

} // namespace kiln
