//===- Draws.h - Random choices for the GPU suite's drawn cases -*- C++ -*-===//
//
// ConvFuzzCases.cpp and LinearFuzzCases.cpp draw graphs at random from a
// seed: the same seed gives the same cases.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TESTS_GPU_DRAWS_H
#define KILN_TESTS_GPU_DRAWS_H

#include "GpuCases.h"
#include "schedule/Precision.h"

#include <fmt/format.h>

#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace kiln {

class Draws {
public:
  /// The seed from the environment variable `seedVar` (else `seed`).
  Draws(const char *seedVar, uint64_t seed) : rng_(seedOf(seedVar, seed)) {}

  /// One of `v`, each as likely.
  int64_t pick(std::initializer_list<int64_t> v) {
    return *(v.begin() + rng_() % v.size());
  }
  /// True with probability p.
  bool chance(double p) {
    return std::uniform_real_distribution<double>(0, 1)(rng_) < p;
  }
  /// An integer in [lo, hi].
  int64_t in(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng_() % (hi - lo + 1));
  }
  /// f32 (4 in 5), f16 or bf16.
  std::string dtype() {
    return chance(0.8) ? "f32" : chance(0.5) ? "f16" : "bf16";
  }
  /// medium (1 in 4), high or highest.
  MatmulPrecision precision() {
    return in(0, 3) == 0 ? MatmulPrecision::Medium
           : chance(0.5) ? MatmulPrecision::High
                         : MatmulPrecision::Highest;
  }
  /// relu (1 in 4), gelu, swish or leaky_relu.
  std::string activation() {
    return in(0, 3) == 0 ? "relu"
           : chance(0.5) ? "gelu"
           : chance(0.5) ? "swish"
                         : "leaky_relu";
  }

  /// group_norm's groups over `channels`: the first of `options` that
  /// divides them and wins a 60% draw, else 1.
  int64_t groups(int64_t channels, std::initializer_list<int64_t> options) {
    for (int64_t g : options)
      if (channels % g == 0 && chance(0.6))
        return g;
    return 1;
  }
  /// NaN in 0.2% of the inputs (15% of cases), else, where `offsetAllowed`,
  /// an offset of 10 or 100 (15%). (Not before a group_norm: the products'
  /// error grows with the offset, the normalised output keeps the spread's
  /// size.)
  void noise(bool offsetAllowed, double &nanRate, double &offset) {
    if (chance(0.15))
      nanRate = 0.002;
    else if (offsetAllowed && chance(0.15))
      offset = static_cast<double>(pick({10, 100}));
  }

  /// `count`, or the environment variable `countVar` where set.
  static int countOf(const char *countVar, int count) {
    const char *text = std::getenv(countVar);
    return text ? std::atoi(text) : count;
  }

private:
  static uint64_t seedOf(const char *var, uint64_t seed) {
    const char *text = std::getenv(var);
    return text ? std::strtoull(text, nullptr, 10) : seed;
  }
  std::mt19937_64 rng_;
};

/// The tolerance on ||gpu - ref|| / ||ref|| of a drawn case, as the
/// hand-written ones: fp32's accuracy at highest (3xTF32), TF32's at high
/// and medium on f32 data, a half's rounding of each result in f16 and bf16.
inline double drawnTolerance(const std::string &dtype,
                             MatmulPrecision precision) {
  const bool tf32 = dtype == "f32" && precision != MatmulPrecision::Highest;
  return dtype == "bf16" ? 4e-3 : dtype == "f16" ? 1e-3 : tf32 ? 3e-3 : 2e-6;
}

/// The share of a drawn half case's values that may lie one ulp of their
/// dtype from the reference: sums that nearly cancel put more of them
/// there than the hand-written cases' 1% (a random f16 conv2d's 378
/// values after 600 products each, then leaky_relu and group_norm: 7,
/// 1.9%), a wrong rounding about half.
inline constexpr double drawnFlipShare = 0.05;

/// What follows a drawn contraction y (of `channels` features or channels
/// in dim 1, dtype t).
enum class Tail {
  None,
  Activation,
  Residual,
  Row,
  GroupNorm,
  Reduction,
  L2_37
};

/// The graph's lines after y for `tail` (returning its result; Residual
/// reads the input r), and what the case's name says of them. Activation:
/// `activation`(y); GroupNorm: group_norm(`activation`(y)) in `groups`;
/// Reduction: m = `reduction` (a call on y, named `what`); L2_37: swish, a
/// shift and group_norm.
inline std::pair<std::string, std::string>
drawnTail(Tail tail, const std::string &t, int64_t channels,
          const std::string &activation, int64_t groups,
          const std::string &reduction, const std::string &what) {
  const std::string affine =
      fmt::format("  param gamma: {}[{}] = uniform(0.5, 1.5, seed=7)\n"
                  "  param beta: {}[{}] = uniform(-0.5, 0.5, seed=8)\n",
                  t, channels, t, channels);
  switch (tail) {
  case Tail::None:
    return {"  return y\n", ""};
  case Tail::Activation:
    return {fmt::format("  a = {}(y)\n  return a\n", activation),
            "_" + activation};
  case Tail::Residual:
    return {"  z = add(y, r)\n  return z\n", "_residual"};
  case Tail::Row:
    return {fmt::format("  param row: {}[{}] = randn(seed=9)\n"
                        "  z = mul(y, row)\n  return z\n",
                        t, channels),
            "_row"};
  case Tail::GroupNorm:
    return {affine + fmt::format("  a = {}(y)\n"
                                 "  o = group_norm(a, gamma, beta, groups={})\n"
                                 "  return o\n",
                                 activation, groups),
            fmt::format("_{}_gn{}", activation, groups)};
  case Tail::Reduction:
    return {fmt::format("  m = {}\n  return m\n", reduction), "_" + what};
  case Tail::L2_37:
    break;
  }
  return {affine + fmt::format("  param shift: {}[{}] = randn(seed=9)\n"
                               "  s = mul(sigmoid(y), y)\n"
                               "  z = add(s, shift)\n"
                               "  o = group_norm(z, gamma, beta, groups={})\n"
                               "  return o\n",
                               t, channels, groups),
          fmt::format("_l2_37_gn{}", groups)};
}

/// A drawn case: its graph and input shapes, in `dtype` at `precision`,
/// with the tolerances above, compiled with constant parameters (as the
/// CLI compiles). Its name: `name`, `what` (drawnTail's), the dtype, the
/// precision, and the NaN or offset.
inline Case drawnCase(const std::string &name, const std::string &what,
                      std::string kg, std::vector<std::vector<int64_t>> shapes,
                      const std::string &dtype, MatmulPrecision precision,
                      double offset, double nanRate) {
  Case c;
  c.name = fmt::format("{}{}_{}_{}{}{}", name, what, dtype,
                       precisionName(precision), nanRate > 0 ? "_nan" : "",
                       offset > 0 ? fmt::format("_offset{}", offset) : "");
  c.kg = std::move(kg);
  c.shapes = std::move(shapes);
  c.offset = offset;
  c.nanRate = nanRate;
  c.precision = precision;
  c.tol = drawnTolerance(dtype, precision);
  c.flipShare = drawnFlipShare;
  c.constantParams = true;
  return c;
}

/// `count` cases (the environment variable `countVar`'s where set) from
/// draw(rng) with the seed `seedVar` names (else 2026): each draw that
/// fits(d) accepts (a test's size) becomes make(d, index). Every fourth
/// (index 3, 7, ...) is compiled without constant parameters, as a library
/// user's graph is (a contraction's blocks then round or split the weight
/// at every launch, not once): `_gathered` ends its name. That choice draws
/// nothing, so a seed's graphs are the same either way.
template <class Draw, class Fits, class Make>
std::vector<Case> drawCases(const char *seedVar, const char *countVar,
                            int count, Draw draw, Fits fits, Make make) {
  Draws rng(seedVar, 2026);
  count = Draws::countOf(countVar, count);
  std::vector<Case> cs;
  for (int i = 0; static_cast<int>(cs.size()) < count && i < 100 * count; ++i) {
    const auto d = draw(rng);
    if (!fits(d))
      continue;
    const int index = static_cast<int>(cs.size());
    cs.push_back(make(d, index));
    if (index % 4 == 3) {
      cs.back().constantParams = false;
      cs.back().name += "_gathered";
    }
  }
  return cs;
}

} // namespace kiln

#endif
