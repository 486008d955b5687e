//===- KernelsNorm.cpp - group_norm ---------------------------------------===//
#include "ref/Kernels.h"

#include <cassert>
#include <cmath>

namespace kiln::ref {

namespace {
struct Moments {
  double mean, var;
};

/// Mean and biased variance by the corrected two-pass algorithm, which
/// stays exact for data far from zero (1e6 + noise) where E[x²] - E[x]²
/// would cancel catastrophically. A NaN anywhere makes both NaN.
Moments moments(llvm::ArrayRef<double> v) {
  double n = static_cast<double>(v.size());
  double mean = sum(v) / n;
  std::vector<double> dev(v.size()), sq(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    dev[i] = v[i] - mean;
    sq[i] = dev[i] * dev[i];
  }
  double corr = sum(dev);
  return {mean, (sum(sq) - corr * corr / n) / n};
}
} // namespace

RefTensor groupNorm(const RefTensor &x, const RefTensor *weight,
                    const RefTensor *bias, int64_t groups, double eps,
                    DType dt) {
  assert(x.rank() >= 2 && x.shape[1] % groups == 0 && "bad group_norm input");
  int64_t n = x.shape[0], c = x.shape[1];
  int64_t spatial = c == 0 || n == 0 ? 0 : x.numel() / (n * c);
  int64_t cg = c / groups, groupLen = cg * spatial;
  RefTensor out(dt, x.shape);
  if (out.numel() == 0)
    return out; // (the groups may be many: 2^31 - 1 divides 0 channels)
  for (int64_t s = 0; s < n; ++s)
    for (int64_t g = 0; g < groups; ++g) {
      // A (sample, group) slice is contiguous: cg channels of `spatial`.
      int64_t base = (s * c + g * cg) * spatial;
      Moments m = moments(llvm::ArrayRef<double>(x.data).slice(base, groupLen));
      double rstd = 1.0 / std::sqrt(m.var + eps);
      for (int64_t ch = g * cg; ch < (g + 1) * cg; ++ch) {
        double scale = weight ? weight->data[ch] : 1.0;
        double shift = bias ? bias->data[ch] : 0.0;
        for (int64_t i = 0; i < spatial; ++i) {
          int64_t at = (s * c + ch) * spatial + i;
          out.data[at] = (x.data[at] - m.mean) * rstd * scale + shift;
        }
      }
    }
  return out;
}

} // namespace kiln::ref
