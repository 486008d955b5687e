//===- Shape.h - Tensor shapes with static and named dims ------*- C++ -*-===//
//
// A dimension is either a static size or a named symbol ("N") bound when the
// graph is specialised for concrete inputs. Broadcasting follows PyTorch:
// shapes align on the right; each pair of dims must be equal or one of them 1.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_IR_SHAPE_H
#define KILN_IR_SHAPE_H

#include "IR/DType.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace kiln {

struct Dim {
  int64_t size = 0;   // valid when symbol is empty
  std::string symbol; // non-empty for a named dim

  Dim() = default;
  Dim(int64_t s) : size(s) {} // NOLINT: dims read naturally as integers
  Dim(int s) : size(s) {}     // NOLINT: (a literal 0 is not a name)
  Dim(const char *sym) : symbol(sym) {}
  static Dim named(llvm::StringRef sym) {
    Dim d;
    d.symbol = sym.str();
    return d;
  }
  bool isStatic() const { return symbol.empty(); }
  bool isOne() const { return isStatic() && size == 1; }
  std::string str() const;
  bool operator==(const Dim &o) const {
    return size == o.size && symbol == o.symbol;
  }
  bool operator!=(const Dim &o) const { return !(*this == o); }
};

class Shape {
public:
  Shape() = default;
  Shape(std::initializer_list<Dim> dims) : dims_(dims) {}
  explicit Shape(llvm::ArrayRef<Dim> dims) : dims_(dims.begin(), dims.end()) {}
  static Shape fromSizes(llvm::ArrayRef<int64_t> sizes);

  size_t rank() const { return dims_.size(); }
  const Dim &operator[](size_t i) const { return dims_[i]; }
  Dim &operator[](size_t i) { return dims_[i]; }
  llvm::ArrayRef<Dim> dims() const { return dims_; }
  void push_back(Dim d) { dims_.push_back(std::move(d)); }
  auto begin() const { return dims_.begin(); }
  auto end() const { return dims_.end(); }

  bool isStatic() const;
  /// Static sizes; asserts isStatic().
  llvm::SmallVector<int64_t, 6> sizes() const;
  /// Product of static sizes; asserts isStatic().
  int64_t numElements() const;
  /// "[N, 8192]"
  std::string str() const;

  bool operator==(const Shape &o) const { return dims_ == o.dims_; }
  bool operator!=(const Shape &o) const { return !(*this == o); }

private:
  llvm::SmallVector<Dim, 6> dims_;
};

/// The type of a value: element type and shape.
struct TensorType {
  DType dtype = DType::F32;
  Shape shape;
  std::string str() const; // "f32[N, 8192]"
  bool operator==(const TensorType &o) const {
    return dtype == o.dtype && shape == o.shape;
  }
  bool operator!=(const TensorType &o) const { return !(*this == o); }
};

/// The largest size of a dim and of an integer attribute (docs/format.md):
/// 32 bits, so that shape rules can multiply two of them without overflow.
inline constexpr int64_t kMaxDimSize = (int64_t(1) << 31) - 1;

/// Normalises a possibly negative dim index against `rank`; returns -1 when
/// out of range. Rank 0 accepts -1 and 0, as PyTorch does.
int64_t normalizeDim(int64_t dim, size_t rank);

/// The size of the last dim of static `s` larger than 1 (1 if none): the
/// dim that consecutive elements run along when the trailing dims are 1.
int64_t innermostSize(const Shape &s);

/// Result of broadcasting two dims, or an explanation why they don't.
/// Rules: equal dims -> that dim; a 1 -> the other; a named dim against a
/// static k != 1 -> k (the binding is checked on specialisation); two
/// different names -> error (they may differ at run time).
struct DimBroadcast {
  bool ok;
  Dim dim;
};
DimBroadcast broadcastDim(const Dim &a, const Dim &b);

/// True when two dims can be equal at run time (equal, or one is named).
bool dimsMayBeEqual(const Dim &a, const Dim &b);

} // namespace kiln

#endif
