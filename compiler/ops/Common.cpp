#include "ops/Families.h"

#include <cmath>
#include <cstring>

namespace kiln {

llvm::Expected<Shape> broadcastShapes(const Node &node, const Shape &a,
                                      const Shape &b) {
  size_t rank = std::max(a.rank(), b.rank());
  llvm::SmallVector<Dim, 6> dims(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align on the right.
    Dim da = i < rank - a.rank() ? Dim(1) : a[i - (rank - a.rank())];
    Dim db = i < rank - b.rank() ? Dim(1) : b[i - (rank - b.rank())];
    DimBroadcast r = broadcastDim(da, db);
    if (!r.ok)
      return opError(node,
                     "cannot broadcast {} with {}: dimension {} is {} in one "
                     "and {} in the other (each pair of dims, aligned on the "
                     "right, must be equal or 1{})",
                     a.str(), b.str(), i, da.str(), db.str(),
                     da.isStatic() && db.isStatic()
                         ? ""
                         : "; two different named dims may differ, so use "
                           "one name for both");
    dims[i] = r.dim;
  }
  return Shape(dims);
}

static int category(DType t) {
  if (t == DType::Bool)
    return 0;
  if (t == DType::I64)
    return 1;
  return 2;
}

DType resultType(llvm::ArrayRef<const Value *> operands) {
  std::optional<DType> dimmed, zeroDim, literal;
  auto merge = [](std::optional<DType> &acc, DType t) {
    acc = acc ? promoteTypes(*acc, t) : t;
  };
  for (const Value *v : operands) {
    if (!v)
      continue;
    if (v->isLiteral())
      merge(literal, v->dtype());
    else if (v->shape().rank() == 0)
      merge(zeroDim, v->dtype());
    else
      merge(dimmed, v->dtype());
  }
  std::optional<DType> result = dimmed;
  if (zeroDim && (!result || category(*zeroDim) > category(*result)))
    result = zeroDim;
  // A literal only changes the category; it takes the default dtype of it
  // (f32 for floats, i64 for integers), never widening f32 to f64.
  if (literal && (!result || category(*literal) > category(*result)))
    result = *literal;
  assert(result && "resultType of no operands");
  return *result;
}

llvm::Error requireFloat(const Node &node, const Value &v,
                         llvm::StringRef role) {
  if (isFloat(v.dtype()))
    return llvm::Error::success();
  return opError(node,
                 "{} '{}' is {}, but this op needs a floating-point tensor "
                 "(f32, f16, bf16 or f64)",
                 role.str(), v.name(), dtypeName(v.dtype()).str());
}

llvm::Error requireSameDType(const Node &node) {
  const Value *first = nullptr;
  for (const Value *v : node.operands()) {
    if (!v || v->isLiteral())
      continue;
    if (!first) {
      first = v;
      continue;
    }
    if (v->dtype() != first->dtype())
      return opError(node,
                     "operands must share one dtype, but '{}' is {} and '{}' "
                     "is {}",
                     first->name(), dtypeName(first->dtype()).str(), v->name(),
                     dtypeName(v->dtype()).str());
  }
  return llvm::Error::success();
}

llvm::Error requireRank(const Node &node, const Value &v, llvm::StringRef role,
                        size_t rank) {
  if (v.shape().rank() == rank)
    return llvm::Error::success();
  return opError(node, "{} '{}' must have rank {}, but it is {}", role.str(),
                 v.name(), rank, v.type().str());
}

llvm::Error requireStaticDim(const Node &node, const Value &v, size_t i,
                             llvm::StringRef what) {
  if (v.shape()[i].isStatic())
    return llvm::Error::success();
  return opError(node,
                 "{} of '{}' must be a fixed size, but it is the named dim "
                 "'{}'; only dims that do not change the kernel's structure "
                 "(such as the batch) may be named",
                 what.str(), v.name(), v.shape()[i].symbol);
}

std::string cudaFloat(double v) {
  float f = static_cast<float>(v);
  if (!std::isfinite(f)) {
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    return fmt::format("__int_as_float(0x{:08x})", bits);
  }
  std::string s = fmt::format("{}", f); // shortest form that reads back
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  return s + "f";
}

} // namespace kiln
