//===- LinearFuzzCases.cpp - Random linears for the GPU suite -------------===//
//
// As ConvFuzzCases.cpp for the contractions: linear (with or without a
// bias) and matmul by a parameter, on x of rank 2 or 3 with odd sizes
// that do not divide the tiles (1 to 700 rows, 1 to 1000 features in, 1
// to 520 out; K a multiple of 8 in f16 and bf16, the only ones they run),
// at every precision and in f16 and bf16, followed by an
// activation, a residual input (whole or a broadcast row), a group_norm
// over the features (L2_37's and L2_62's kind, the epilogue's), a
// reduction over them (L2_75's min), or L2_37's whole chain, sometimes
// with NaN or a large offset. KILN_LINEAR_FUZZ_SEED and
// KILN_LINEAR_FUZZ_COUNT draw another set.
//
//===----------------------------------------------------------------------===//
#include "Draws.h"
#include "GpuCases.h"

#include <fmt/format.h>

#include <cmath>

namespace kiln {
namespace {

/// One random contraction and what follows it.
struct LinearDraw {
  bool matmul, bias, batched;
  int64_t b, m, k, n;
  std::string dtype;
  MatmulPrecision precision;
  // 0 none, 1 activation, 2 residual, 3 broadcast row, 4 group_norm,
  // 5 reduction, 6 L2_37's chain.
  int after;
  std::string activation, reduction;
  int64_t gnGroups = 1;
  double offset = 0, nanRate = 0;
};

LinearDraw draw(Draws &r) {
  LinearDraw d;
  d.matmul = r.chance(0.3);
  d.bias = !d.matmul && r.chance(0.7);
  d.batched = r.chance(0.2);
  d.b = d.batched ? r.in(1, 3) : 1;
  d.m = r.chance(0.7) ? r.in(1, 300) : r.in(301, 700);
  d.k = r.pick({1, 3, 8, 16, 17, 31, 64, 100, 128, 257, 512, 1000});
  d.n = r.pick({1, 5, 8, 16, 24, 40, 64, 100, 128, 136, 200, 256, 264, 520});
  d.dtype = r.dtype();
  // f16 and bf16 contractions run with K a multiple of 8 only (a located
  // error otherwise, as on sm_80: FuzzSourcesTest.cpp).
  if (d.dtype != "f32")
    d.k = (d.k + 7) / 8 * 8;
  d.precision = r.precision();
  d.after = static_cast<int>(r.in(0, 6));
  // group_norm takes dim 1 as its channels: the features only at rank 2.
  if (d.batched && (d.after == 4 || d.after == 6))
    d.after = 1;
  d.activation = r.activation();
  d.gnGroups = r.groups(d.n, {64, 16, 8, 4, 2, 1});
  d.reduction = r.in(0, 3) == 0 ? "min"
                : r.chance(0.5) ? "logsumexp"
                : r.chance(0.5) ? "sum"
                                : "max";
  r.noise(d.after != 4 && d.after != 6, d.nanRate, d.offset);
  return d;
}

Case caseOf(const LinearDraw &d, int index) {
  const std::string t = d.dtype;
  const std::string rows =
      d.batched ? fmt::format("B, M, ") : std::string("M, ");
  std::string inputs = fmt::format("x: {}[{}{}]", t, rows, d.k);
  if (d.after == 2)
    inputs += fmt::format(", r: {}[{}{}]", t, rows, d.n);
  std::string kg = fmt::format("graph fuzz({}) {{\n", inputs);
  const double bound = 1.0 / std::sqrt(static_cast<double>(d.k));
  kg += fmt::format("  param w: {}[{}, {}] = uniform({}, {}, seed={})\n", t,
                    d.matmul ? d.k : d.n, d.matmul ? d.n : d.k, -bound, bound,
                    index + 1);
  if (d.bias)
    kg += fmt::format("  param b: {}[{}] = uniform(-0.5, 0.5, seed={})\n", t,
                      d.n, index + 1001);
  if (d.matmul)
    kg += "  y = matmul(x, w)\n";
  else
    kg += fmt::format("  y = linear(x, w{})\n", d.bias ? ", b" : "");
  const auto [tail, what] = drawnTail(
      static_cast<Tail>(d.after), t, d.n, d.activation, d.gnGroups,
      fmt::format("{}(y, dim=-1, keepdim=true)", d.reduction), d.reduction);
  kg += tail;
  kg += "}\n";
  std::vector<int64_t> x = {d.m, d.k}, y = {d.m, d.n};
  if (d.batched)
    x.insert(x.begin(), d.b), y.insert(y.begin(), d.b);
  std::vector<std::vector<int64_t>> shapes = {x};
  if (d.after == 2)
    shapes.push_back(y);
  const std::string name = fmt::format("linear_fuzz_{:02}_{}_{}{}x{}to{}{}",
                                       index, d.matmul ? "matmul" : "linear",
                                       d.batched ? fmt::format("{}x", d.b) : "",
                                       d.m, d.k, d.n, d.bias ? "_bias" : "");
  return drawnCase(name, what, kg, shapes, t, d.precision, d.offset, d.nanRate);
}

} // namespace

std::vector<Case> linearFuzzCases(int count) {
  // Drawn again where the work is too large for a test (the reference
  // evaluator runs on one CPU thread).
  auto fits = [](const LinearDraw &d) {
    return d.b * d.m * d.k * d.n <= 60'000'000;
  };
  return drawCases("KILN_LINEAR_FUZZ_SEED", "KILN_LINEAR_FUZZ_COUNT", count,
                   draw, fits, caseOf);
}

} // namespace kiln
