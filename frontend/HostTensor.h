//===- HostTensor.h - Tensors in their storage dtype -----------*- C++ -*-===//
//
// A HostTensor holds elements exactly as a file or a device buffer stores
// them: raw little-endian bytes in C (row-major) order. It is what the tensor
// file readers return and what parameters and inputs are bound as; the
// reference evaluator works on RefTensor (double) and converts through
// toRef/fromRef.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FRONTEND_HOSTTENSOR_H
#define KILN_FRONTEND_HOSTTENSOR_H

// ArrayRef first: ref/RefTensor.h uses it without including it.
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include "IR/DType.h"
#include "ref/RefTensor.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

struct HostTensor {
  DType dtype = DType::F32;
  llvm::SmallVector<int64_t, 6> shape;
  std::vector<uint8_t> bytes;

  HostTensor() = default;
  /// A zero-filled tensor.
  HostTensor(DType dt, llvm::ArrayRef<int64_t> sizes);

  int64_t numel() const;
  size_t rank() const { return shape.size(); }
  unsigned itemSize() const { return dtypeSize(dtype); }
  /// numel() * itemSize(): the size `bytes` must have.
  size_t byteSize() const;

  /// Element i (C order) converted exactly to double.
  double get(int64_t i) const;
  /// Stores v into element i, rounded as fromRef does.
  void set(int64_t i, double v);

  /// "f32[8, 4]"; a scalar is "f32[]".
  std::string typeStr() const;
};

/// numel * itemsize for a tensor read from a file, or nullopt when a size
/// is negative or the product overflows.
std::optional<uint64_t> checkedByteSize(DType dtype,
                                        llvm::ArrayRef<int64_t> shape);

/// The tensor in double; f16, bf16 and f32 convert exactly, i64 beyond 2^53
/// rounds, bool is 0 or 1. The RefTensor keeps the dtype.
RefTensor toRef(const HostTensor &t);

/// The tensor stored as `target`: floats round to nearest even (NaN, inf,
/// subnormals kept; overflow gives inf), i64 truncates toward zero
/// (saturating; NaN gives 0), bool is value != 0.
HostTensor fromRef(const RefTensor &t, DType target);

} // namespace kiln

#endif
