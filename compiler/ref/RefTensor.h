//===- RefTensor.h - Host tensors of the reference evaluator ---*- C++ -*-===//
//
// The float64 reference evaluator computes every op in double precision on
// the CPU, whatever the graph's storage dtypes; `dtype` records the type the
// graph gives the value (outputs are cast to it only when written to a file).
// Data is dense, C (row-major) order.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_REF_REFTENSOR_H
#define KILN_REF_REFTENSOR_H

#include "IR/DType.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <vector>

namespace kiln {

struct RefTensor {
  DType dtype = DType::F32;
  llvm::SmallVector<int64_t, 6> shape;
  std::vector<double> data;

  RefTensor() = default;
  RefTensor(DType dt, llvm::ArrayRef<int64_t> sizes)
      : dtype(dt), shape(sizes.begin(), sizes.end()),
        data(static_cast<size_t>(numElements(sizes))) {}

  int64_t numel() const { return static_cast<int64_t>(data.size()); }
  size_t rank() const { return shape.size(); }

  static int64_t numElements(llvm::ArrayRef<int64_t> sizes) {
    int64_t n = 1;
    for (int64_t s : sizes)
      n *= s;
    return n;
  }

  /// A rank-0 tensor holding `v`.
  static RefTensor scalar(DType dt, double v) {
    RefTensor t(dt, {});
    t.data[0] = v;
    return t;
  }

  /// Row-major (C order) element strides of `sizes`.
  static llvm::SmallVector<int64_t, 6>
  stridesOf(llvm::ArrayRef<int64_t> sizes) {
    llvm::SmallVector<int64_t, 6> strides(sizes.size());
    int64_t s = 1;
    for (size_t i = sizes.size(); i-- > 0;) {
      strides[i] = s;
      s *= sizes[i];
    }
    return strides;
  }
};

} // namespace kiln

#endif
