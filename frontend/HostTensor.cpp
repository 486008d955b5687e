#include "HostTensor.h"

#include "IR/FloatBits.h"

#include "llvm/Support/ErrorHandling.h"

#include <bit>
#include <cassert>
#include <cmath>
#include <cstring>
#include <fmt/format.h>

namespace kiln {

static_assert(std::endian::native == std::endian::little,
              "HostTensor stores little-endian bytes in host order");

namespace {

template <typename T> T load(const uint8_t *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T> void store(uint8_t *p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

int64_t toInt64(double v) {
  if (std::isnan(v))
    return 0;
  // 2^63 is exactly representable; anything at or beyond it saturates.
  if (v >= 9223372036854775808.0)
    return INT64_MAX;
  if (v <= -9223372036854775808.0)
    return INT64_MIN;
  return static_cast<int64_t>(v);
}

} // namespace

HostTensor::HostTensor(DType dt, llvm::ArrayRef<int64_t> sizes)
    : dtype(dt), shape(sizes.begin(), sizes.end()) {
  bytes.resize(byteSize());
}

int64_t HostTensor::numel() const { return RefTensor::numElements(shape); }

size_t HostTensor::byteSize() const {
  return static_cast<size_t>(numel()) * itemSize();
}

double HostTensor::get(int64_t i) const {
  assert(i >= 0 && i < numel() && bytes.size() == byteSize());
  const uint8_t *p = bytes.data() + static_cast<size_t>(i) * itemSize();
  switch (dtype) {
  case DType::F32:
    return load<float>(p);
  case DType::F16:
    return halfToDouble(load<uint16_t>(p));
  case DType::BF16:
    return bfloat16ToDouble(load<uint16_t>(p));
  case DType::F64:
    return load<double>(p);
  case DType::I64:
    return static_cast<double>(load<int64_t>(p));
  case DType::Bool:
    return *p != 0 ? 1.0 : 0.0;
  }
  llvm_unreachable("bad dtype");
}

void HostTensor::set(int64_t i, double v) {
  assert(i >= 0 && i < numel() && bytes.size() == byteSize());
  uint8_t *p = bytes.data() + static_cast<size_t>(i) * itemSize();
  switch (dtype) {
  case DType::F32:
    return store(p, doubleToFloat(v));
  case DType::F16:
    return store(p, doubleToHalf(v));
  case DType::BF16:
    return store(p, doubleToBFloat16(v));
  case DType::F64:
    return store(p, v);
  case DType::I64:
    return store(p, toInt64(v));
  case DType::Bool:
    *p = v != 0 ? 1 : 0; // NaN != 0, as in NumPy and PyTorch
    return;
  }
  llvm_unreachable("bad dtype");
}

std::string HostTensor::typeStr() const {
  return fmt::format("{}[{}]", dtypeName(dtype).str(),
                     fmt::join(shape.begin(), shape.end(), ", "));
}

std::optional<uint64_t> checkedByteSize(DType dtype,
                                        llvm::ArrayRef<int64_t> shape) {
  uint64_t n = dtypeSize(dtype);
  for (int64_t s : shape) {
    if (s < 0 || __builtin_mul_overflow(n, static_cast<uint64_t>(s), &n))
      return std::nullopt;
  }
  // Element counts must also fit int64_t.
  if (n > static_cast<uint64_t>(INT64_MAX))
    return std::nullopt;
  return n;
}

RefTensor toRef(const HostTensor &t) {
  RefTensor r(t.dtype, t.shape);
  for (int64_t i = 0, n = t.numel(); i < n; ++i)
    r.data[i] = t.get(i);
  return r;
}

HostTensor fromRef(const RefTensor &t, DType target) {
  assert(static_cast<int64_t>(t.data.size()) ==
         RefTensor::numElements(t.shape));
  HostTensor h(target, t.shape);
  for (int64_t i = 0, n = h.numel(); i < n; ++i)
    h.set(i, t.data[i]);
  return h;
}

} // namespace kiln
