//===- NormFuzzCases.cpp - Random GroupNorms and reductions ---------------===//
//
// As ConvFuzzCases.cpp for the memory-bound kernels: x of rank 2 to 5
// ([N, C, ...], odd sizes, 1 to 2.5 M values), an elementwise node or none
// before (an activation, a per-channel shift broadcast over the rest, a
// scale), then group_norm (groups dividing C, with or without its affine)
// or a reduction (min, max, sum, mean, logsumexp) over one dim, the last
// two, the spatial ones or every dim (keepdim or not), then an activation
// or a residual of the value before, or nothing; f32, f16 and bf16, NaN,
// and offsets up to 1e4 that break a naive variance.
// KILN_NORM_FUZZ_SEED and KILN_NORM_FUZZ_COUNT draw another set.
//
//===----------------------------------------------------------------------===//
#include "Draws.h"
#include "GpuCases.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>

namespace kiln {
namespace {

struct NormDraw {
  std::vector<int64_t> shape; // [N, C, ...]
  std::string dtype;
  int before; // 0 none, 1 activation, 2 per-channel shift, 3 scale
  bool groupNorm, affine;
  int64_t groups = 1;
  std::string reduction, dims;
  bool keepdim;
  int after; // 0 none, 1 activation, 2 residual of the value before
  std::string activation;
  double offset = 0, nanRate = 0;
};

int64_t numel(const std::vector<int64_t> &s) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  return n;
}

NormDraw draw(Draws &r) {
  NormDraw d;
  const int64_t rank = r.in(2, 5);
  d.shape = {r.in(1, 5), r.pick({1, 2, 3, 4, 6, 8, 12, 16, 32, 33, 64, 96})};
  for (int64_t i = 2; i < rank; ++i)
    d.shape.push_back(r.chance(0.3) ? r.in(1, 5) : r.in(6, 130));
  d.dtype = r.dtype();
  d.before = static_cast<int>(r.in(0, 3));
  d.groupNorm = r.chance(0.55);
  d.affine = r.chance(0.7);
  d.groups = r.groups(d.shape[1], {32, 16, 8, 4, 3, 2});
  d.reduction = r.in(0, 4) == 0  ? "min"
                : r.chance(0.25) ? "max"
                : r.chance(0.33) ? "sum"
                : r.chance(0.5)  ? "mean"
                                 : "logsumexp";
  // One dim (C), the last two, the spatial ones (rank 3 and up), or all.
  const int64_t which = r.in(0, 3);
  if (which == 0)
    d.dims = "dim=1";
  else if (which == 1)
    d.dims = fmt::format("dim=[{}, {}]", rank - 2, rank - 1);
  else if (which == 2 && rank > 2) {
    d.dims = "dim=[2";
    for (int64_t i = 3; i < rank; ++i)
      d.dims += ", " + std::to_string(i);
    d.dims += "]";
  }
  d.keepdim = r.chance(0.5);
  d.after = static_cast<int>(r.in(0, 2));
  d.activation = r.activation();
  // Offsets before a group_norm test its statistics; 1e4 in f16 is coarse
  // (ulp 8) but the reference reads the same rounded inputs.
  if (r.chance(0.15))
    d.nanRate = 0.002;
  else if (r.chance(0.25))
    d.offset = static_cast<double>(r.pick({10, 100, 10000}));
  // After a scale too: its product rounds to f32 in PyTorch (and the
  // reference), and the kernels round a computed input once
  // (kiln::rounded), where ptxas had fused the product into each of its
  // uses, unrounded, and the statistics and the normalisation read two
  // values: a group_norm magnified that half ulp by offset / spread (seed
  // 18's case 11 2.6e-4 on an H200; bench/NOTES.md v50).
  return d;
}

Case caseOf(const NormDraw &d, int index) {
  const std::string t = d.dtype;
  const int64_t rank = static_cast<int64_t>(d.shape.size());
  std::string dims = "N, " + std::to_string(d.shape[1]);
  for (int64_t i = 2; i < rank; ++i)
    dims += ", " + std::to_string(d.shape[i]);
  std::string kg = fmt::format("graph fuzz(x: {}[{}]) {{\n", t, dims);
  const int64_t c = d.shape[1];
  // The per-channel shift broadcasts over the dims after C.
  std::string channelShape = std::to_string(c);
  for (int64_t i = 2; i < rank; ++i)
    channelShape += ", 1";
  std::string what;
  // p: the value the group_norm or reduction reads (x itself, or a node).
  const std::string p = d.before == 0 ? "x" : "p";
  switch (d.before) {
  case 0:
    break;
  case 1:
    kg += fmt::format("  p = {}(x)\n", d.activation);
    what += "_" + d.activation;
    break;
  case 2:
    kg += fmt::format("  param shift: {}[{}] = randn(seed=3)\n"
                      "  p = add(x, shift)\n",
                      t, channelShape);
    what += "_shift";
    break;
  default:
    kg += "  p = mul(x, 0.75)\n";
    what += "_scale";
    break;
  }
  if (d.groupNorm) {
    if (d.affine)
      kg += fmt::format("  param gamma: {}[{}] = uniform(0.5, 1.5, seed=4)\n"
                        "  param beta: {}[{}] = uniform(-1, 1, seed=5)\n"
                        "  y = group_norm({}, gamma, beta, groups={})\n",
                        t, c, t, c, p, d.groups);
    else
      kg += fmt::format("  y = group_norm({}, groups={})\n", p, d.groups);
    what += fmt::format("_gn{}{}", d.groups, d.affine ? "_affine" : "");
  } else {
    std::string attrs = d.dims;
    if (d.keepdim)
      attrs += std::string(attrs.empty() ? "" : ", ") + "keepdim=true";
    kg += fmt::format("  y = {}({}{}{})\n", d.reduction, p,
                      attrs.empty() ? "" : ", ", attrs);
    std::string over; // "1", "2_3", ...
    for (char ch : d.dims.empty() ? std::string("all") : d.dims.substr(4))
      if (std::isalnum(static_cast<unsigned char>(ch)))
        over += ch;
      else if (ch == ',')
        over += '_';
    what +=
        fmt::format("_{}_{}{}", d.reduction, over, d.keepdim ? "_keep" : "");
  }
  // A residual of the value before: only where y keeps its shape.
  const int after = d.after == 2 && !d.groupNorm ? 1 : d.after;
  if (after == 0)
    kg += "  return y\n}\n";
  else if (after == 1 && d.activation == "gelu" && !d.groupNorm &&
           d.reduction == "sum") {
    // A sum of K values of [-1, 1) spreads as sqrt(K / 3), far into gelu's
    // negative tail, where its error, as PyTorch's erf form's, is bounded
    // by 1.5e-7 |x| (GpuGelu: point by point) and not relative to the
    // tiny result (1% at -5, which a sum to one value fails at 2e-6 of
    // its norm): scaled by 1 / sqrt(K) first.
    // K: the dims d.dims names (one digit each, after "dim="), or all.
    int64_t k = 1;
    for (int64_t i = 0; i < rank; ++i)
      if (d.dims.empty() ||
          d.dims.find(std::to_string(i), 4) != std::string::npos)
        k *= d.shape[i];
    kg += fmt::format("  o = gelu(mul(y, {}))\n  return o\n}}\n",
                      1.0 / std::sqrt(static_cast<double>(k)));
    what += "_then_scaled_gelu";
  } else if (after == 1 && d.activation == "gelu" && !d.groupNorm &&
             d.reduction == "min") {
    // So, too, a min: of values of [-1, 1) plus a shift of randn, down to
    // about -3.5 (seed 302's case 53, one output in the tail: 2.09e-6 of
    // it on an H200; PyTorch's erf form errs by about 5e-6 at -2.5).
    // Scaled by 0.4 first (above -1.4: within 1.6e-6 of the result).
    kg += "  o = gelu(mul(y, 0.4))\n  return o\n}\n";
    what += "_then_scaled_gelu";
  } else if (after == 1) {
    kg += fmt::format("  o = {}(y)\n  return o\n}}\n", d.activation);
    what += "_then_" + d.activation;
  } else {
    kg += fmt::format("  o = add(y, {})\n  return o\n}}\n", p);
    what += "_residual";
  }
  std::string name = fmt::format("norm_fuzz_{:02}", index);
  for (int64_t s : d.shape)
    name += "_" + std::to_string(s);
  // f32: 2e-6, or 1e-5 after an offset, as the hand-written GroupNorm
  // cases with one (the mean's rounding at 1e4 against a spread near
  // 0.58); halves as drawn.
  Case cs = drawnCase(name, what, kg, {d.shape}, t, MatmulPrecision::Highest,
                      d.offset, d.nanRate);
  if (t == "f32" && d.offset > 0)
    cs.tol = 1e-5;
  return cs;
}

} // namespace

std::vector<Case> normFuzzCases(int count) {
  auto fits = [](const NormDraw &d) { return numel(d.shape) <= 2'500'000; };
  return drawCases("KILN_NORM_FUZZ_SEED", "KILN_NORM_FUZZ_COUNT", count, draw,
                   fits, caseOf);
}

} // namespace kiln
