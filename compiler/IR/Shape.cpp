#include "IR/Shape.h"

#include "llvm/ADT/STLExtras.h"

#include <cassert>
#include <fmt/format.h>

namespace kiln {

std::string Dim::str() const {
  return isStatic() ? std::to_string(size) : symbol;
}

Shape Shape::fromSizes(llvm::ArrayRef<int64_t> sizes) {
  Shape s;
  for (int64_t v : sizes)
    s.push_back(Dim(v));
  return s;
}

bool Shape::isStatic() const {
  return llvm::all_of(dims_, [](const Dim &d) { return d.isStatic(); });
}

llvm::SmallVector<int64_t, 6> Shape::sizes() const {
  assert(isStatic() && "sizes() of a symbolic shape");
  llvm::SmallVector<int64_t, 6> out;
  for (const Dim &d : dims_)
    out.push_back(d.size);
  return out;
}

int64_t Shape::numElements() const {
  int64_t n = 1;
  for (int64_t s : sizes())
    n *= s;
  return n;
}

std::string Shape::str() const {
  std::string out = "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i)
      out += ", ";
    out += dims_[i].str();
  }
  return out + "]";
}

std::string TensorType::str() const {
  return fmt::format("{}{}", dtypeName(dtype).str(), shape.str());
}

int64_t innermostSize(const Shape &s) {
  for (size_t k = s.rank(); k-- > 0;)
    if (s[k].size > 1)
      return s[k].size;
  return 1;
}

int64_t normalizeDim(int64_t dim, size_t rank) {
  int64_t r = std::max<int64_t>(static_cast<int64_t>(rank), 1);
  if (dim < -r || dim >= r)
    return -1;
  return dim < 0 ? dim + r : dim;
}

DimBroadcast broadcastDim(const Dim &a, const Dim &b) {
  if (a == b)
    return {true, a};
  if (a.isOne())
    return {true, b};
  if (b.isOne())
    return {true, a};
  if (a.isStatic() && b.isStatic())
    return {false, Dim()};
  if (!a.isStatic() && !b.isStatic())
    return {false, Dim()};
  return {true, a.isStatic() ? a : b};
}

bool dimsMayBeEqual(const Dim &a, const Dim &b) {
  return a == b || !a.isStatic() || !b.isStatic();
}

} // namespace kiln
