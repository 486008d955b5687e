//===- KernelsElementwise.cpp - Broadcasting maps and reductions ----------===//
#include "ref/Kernels.h"

#include <cassert>
#include <cmath>

namespace kiln::ref {

namespace {
/// Row-major odometer over `sizes`.
class Odometer {
public:
  explicit Odometer(llvm::ArrayRef<int64_t> sizes)
      : sizes_(sizes), idx_(sizes.size(), 0) {}
  llvm::ArrayRef<int64_t> index() const { return idx_; }
  void next() {
    for (size_t i = sizes_.size(); i-- > 0;) {
      if (++idx_[i] < sizes_[i])
        return;
      idx_[i] = 0;
    }
  }

private:
  llvm::ArrayRef<int64_t> sizes_;
  llvm::SmallVector<int64_t, 6> idx_;
};

int64_t dot(llvm::ArrayRef<int64_t> idx, llvm::ArrayRef<int64_t> strides) {
  int64_t off = 0;
  for (size_t i = 0; i < idx.size(); ++i)
    off += idx[i] * strides[i];
  return off;
}
} // namespace

llvm::SmallVector<int64_t, 6>
broadcastStrides(llvm::ArrayRef<int64_t> sizes,
                 llvm::ArrayRef<int64_t> outSizes) {
  assert(sizes.size() <= outSizes.size() && "cannot broadcast to lower rank");
  llvm::SmallVector<int64_t, 6> own = RefTensor::stridesOf(sizes);
  llvm::SmallVector<int64_t, 6> out(outSizes.size(), 0);
  size_t lead = outSizes.size() - sizes.size();
  for (size_t i = 0; i < sizes.size(); ++i) {
    assert((sizes[i] == 1 || sizes[i] == outSizes[lead + i]) &&
           "sizes do not broadcast");
    out[lead + i] = sizes[i] == 1 ? 0 : own[i];
  }
  return out;
}

RefTensor mapUnary(const RefTensor &x, DType dt,
                   llvm::function_ref<double(double)> f) {
  RefTensor out(dt, x.shape);
  for (size_t i = 0; i < x.data.size(); ++i)
    out.data[i] = f(x.data[i]);
  return out;
}

RefTensor mapBinary(const RefTensor &a, const RefTensor &b, DType dt,
                    llvm::ArrayRef<int64_t> outSizes,
                    llvm::function_ref<double(double, double)> f) {
  RefTensor out(dt, outSizes);
  auto sa = broadcastStrides(a.shape, outSizes);
  auto sb = broadcastStrides(b.shape, outSizes);
  Odometer it(outSizes);
  for (int64_t i = 0; i < out.numel(); ++i, it.next())
    out.data[i] = f(a.data[dot(it.index(), sa)], b.data[dot(it.index(), sb)]);
  return out;
}

RefTensor reduceSlices(const RefTensor &x, llvm::ArrayRef<int64_t> dims,
                       DType dt, llvm::ArrayRef<int64_t> outSizes,
                       llvm::function_ref<double(llvm::ArrayRef<double>)> f) {
  llvm::SmallVector<int64_t, 6> strides = RefTensor::stridesOf(x.shape);
  llvm::SmallVector<int64_t, 6> keptSizes, keptStrides, redSizes, redStrides;
  for (size_t i = 0; i < x.rank(); ++i) {
    bool reduced = llvm::is_contained(dims, static_cast<int64_t>(i));
    (reduced ? redSizes : keptSizes).push_back(x.shape[i]);
    (reduced ? redStrides : keptStrides).push_back(strides[i]);
  }
  // Offsets of one slice's elements relative to its first one.
  int64_t sliceLen = RefTensor::numElements(redSizes);
  std::vector<int64_t> sliceOffsets(sliceLen);
  Odometer inner(redSizes);
  for (int64_t j = 0; j < sliceLen; ++j, inner.next())
    sliceOffsets[j] = dot(inner.index(), redStrides);

  RefTensor out(dt, outSizes);
  assert(out.numel() == RefTensor::numElements(keptSizes) &&
         "reduction result size mismatch");
  std::vector<double> slice(sliceLen);
  Odometer outer(keptSizes);
  for (int64_t i = 0; i < out.numel(); ++i, outer.next()) {
    int64_t base = dot(outer.index(), keptStrides);
    for (int64_t j = 0; j < sliceLen; ++j)
      slice[j] = x.data[base + sliceOffsets[j]];
    out.data[i] = f(slice);
  }
  return out;
}

double sum(llvm::ArrayRef<double> v) {
  double s = 0, c = 0, plain = 0;
  for (double x : v) {
    plain += x;
    double t = s + x;
    c += std::abs(s) >= std::abs(x) ? (s - t) + x : (x - t) + s;
    s = t;
  }
  return std::isfinite(plain) ? s + c : plain;
}

} // namespace kiln::ref
