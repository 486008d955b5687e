//===- Reduction.cpp - min, max, sum, mean, logsumexp ---------------------===//
#include "ops/Families.h"
#include "ref/Kernels.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>

namespace kiln {

/// The dims a reduction node reduces over, normalised, sorted, unique. No
/// `dim` (or an empty list) means every dim. A scalar has none: PyTorch
/// accepts dim 0 or -1 for it and returns it as it is.
llvm::Expected<llvm::SmallVector<int64_t, 4>> reducedDims(const Node &n) {
  const Shape &s = n.operand(0)->shape();
  llvm::SmallVector<int64_t, 4> dims;
  std::optional<Attr> given = n.attr("dim");
  if (!given || given->getInts().empty()) {
    for (size_t i = 0; i < s.rank(); ++i)
      dims.push_back(static_cast<int64_t>(i));
    return dims;
  }
  llvm::SmallVector<int64_t, 4> seen;
  for (int64_t d : given->getInts()) {
    int64_t nd = normalizeDim(d, s.rank());
    if (nd < 0)
      return attrError(
          n, "dim", "dim {} is out of range for '{}' {} (valid: {} to {})", d,
          n.operand(0)->name(), s.str(), -std::max<int64_t>(s.rank(), 1),
          std::max<int64_t>(s.rank(), 1) - 1);
    if (llvm::is_contained(seen, nd))
      return attrError(n, "dim", "dim {} appears more than once in {}", nd,
                       given->str());
    seen.push_back(nd);
    if (s.rank() > 0)
      dims.push_back(nd);
  }
  llvm::sort(dims);
  return dims;
}

static llvm::Expected<TensorType> inferReduction(const Node &n) {
  const Value &x = *n.operand(0);
  llvm::Expected<llvm::SmallVector<int64_t, 4>> dims = reducedDims(n);
  if (!dims)
    return dims.takeError();
  bool keep = n.getBool("keepdim");
  Shape out;
  for (size_t i = 0; i < x.shape().rank(); ++i) {
    bool reduced = llvm::is_contained(*dims, static_cast<int64_t>(i));
    const Dim &d = x.shape()[i];
    if (reduced && d.isStatic() && d.size == 0 &&
        (n.op() == OpKind::Min || n.op() == OpKind::Max))
      return opError(n,
                     "cannot reduce over dim {} of '{}' {}: it is empty "
                     "and {} has no identity",
                     i, x.name(), x.shape().str(), n.info().name.str());
    if (!reduced)
      out.push_back(d);
    else if (keep)
      out.push_back(Dim(1));
  }
  DType dt = x.dtype();
  switch (n.op()) {
  case OpKind::Min:
  case OpKind::Max:
    break;
  case OpKind::Sum:
    if (isIntegral(dt))
      dt = DType::I64; // as torch.sum: bool and integers sum to int64
    break;
  case OpKind::Mean:
    if (!isFloat(dt))
      return opError(n,
                     "input '{}' is {}; mean needs a floating-point tensor "
                     "(PyTorch refuses integer means too)",
                     x.name(), dtypeName(dt).str());
    break;
  case OpKind::LogSumExp:
    if (!isFloat(dt))
      dt = DType::F32; // integers promote to the default float type
    break;
  default:
    llvm_unreachable("not a reduction");
  }
  return TensorType{dt, out};
}

// Slice reductions. min/max propagate NaN as torch.amin/amax do; an empty
// slice never reaches them (the shape rule refuses it).
static double sliceMax(llvm::ArrayRef<double> v) {
  double m = -INFINITY;
  for (double x : v) {
    if (std::isnan(x))
      return x;
    m = std::max(m, x);
  }
  return m;
}

static double sliceMin(llvm::ArrayRef<double> v) {
  double m = INFINITY;
  for (double x : v) {
    if (std::isnan(x))
      return x;
    m = std::min(m, x);
  }
  return m;
}

static double sliceMean(llvm::ArrayRef<double> v) {
  return ref::sum(v) / static_cast<double>(v.size()); // empty: NaN
}

/// PyTorch's logsumexp: shift by the max unless it is infinite, so an
/// all -inf slice gives -inf, any +inf gives +inf and NaN propagates.
static double sliceLogSumExp(llvm::ArrayRef<double> v) {
  double m = sliceMax(v);
  if (std::isnan(m))
    return m;
  double shift = std::isinf(m) ? 0.0 : m;
  std::vector<double> e(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    e[i] = std::exp(v[i] - shift);
  return std::log(ref::sum(e)) + shift;
}

static llvm::Expected<RefTensor>
evalReduction(const Node &n, llvm::ArrayRef<const RefTensor *> ops) {
  llvm::Expected<llvm::SmallVector<int64_t, 4>> dims = reducedDims(n);
  if (!dims)
    return dims.takeError();
  double (*f)(llvm::ArrayRef<double>) = nullptr;
  switch (n.op()) {
  case OpKind::Min:
    f = sliceMin;
    break;
  case OpKind::Max:
    f = sliceMax;
    break;
  case OpKind::Sum:
    f = ref::sum;
    break;
  case OpKind::Mean:
    f = sliceMean;
    break;
  case OpKind::LogSumExp:
    f = sliceLogSumExp;
    break;
  default:
    llvm_unreachable("not a reduction");
  }
  return ref::reduceSlices(*ops[0], *dims, n.result()->dtype(),
                           n.result()->shape().sizes(), f);
}

void registerReductionOps(OpTable &t) {
  for (OpKind k : {OpKind::Min, OpKind::Max, OpKind::Sum, OpKind::Mean,
                   OpKind::LogSumExp}) {
    OpInfo &info = entry(t, k);
    info.operands = {{"input"}};
    info.attrs = {
        {"dim", AttrKind::IntList, std::nullopt},
        {"keepdim", AttrKind::Bool, Attr::ofBool(false)},
    };
    info.infer = inferReduction;
    info.eval = evalReduction;
  }
  entry(t, OpKind::Min).aliases = {"amin"};
  entry(t, OpKind::Max).aliases = {"amax"};
}

} // namespace kiln
