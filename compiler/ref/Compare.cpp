#include "ref/Compare.h"

#include <cmath>
#include <fmt/format.h>

namespace kiln {

static std::string indexStr(llvm::ArrayRef<int64_t> shape, int64_t flat) {
  llvm::SmallVector<int64_t, 6> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return fmt::format("[{}]", fmt::join(idx, ", "));
}

Comparison compareTensors(const RefTensor &got, const RefTensor &want,
                          double rtol, double atol) {
  Comparison c;
  if (got.shape != want.shape) {
    c.shapeMatches = false;
    c.firstMismatch =
        fmt::format("shape [{}], want [{}]", fmt::join(got.shape, ", "),
                    fmt::join(want.shape, ", "));
    return c;
  }
  double diff2 = 0, ref2 = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    double g = got.data[i], w = want.data[i];
    bool bad;
    if (std::isnan(w) || std::isnan(g)) {
      bad = std::isnan(w) != std::isnan(g);
    } else if (std::isinf(w) || std::isinf(g)) {
      bad = g != w;
    } else {
      double d = std::fabs(g - w);
      c.maxAbsError = std::max(c.maxAbsError, d);
      diff2 += d * d;
      ref2 += w * w;
      bad = d > atol + rtol * std::fabs(w);
    }
    if (bad && c.mismatches++ == 0)
      c.firstMismatch =
          fmt::format("at {}: got {}, want {}", indexStr(want.shape, i), g, w);
  }
  c.relError = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  return c;
}

} // namespace kiln
