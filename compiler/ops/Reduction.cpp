//===- Reduction.cpp - min, max, sum, mean, logsumexp ----------------------===//
#include "ops/Families.h"

#include "llvm/ADT/STLExtras.h"

namespace kiln {

/// The dims a reduction node reduces over, normalised, sorted, unique. No
/// `dim` (or an empty list) means every dim.
llvm::Expected<llvm::SmallVector<int64_t, 4>> reducedDims(const Node &n) {
  const Shape &s = n.operand(0)->shape();
  llvm::SmallVector<int64_t, 4> dims;
  std::optional<Attr> given = n.attr("dim");
  if (!given || given->getInts().empty()) {
    for (size_t i = 0; i < s.rank(); ++i)
      dims.push_back(static_cast<int64_t>(i));
    return dims;
  }
  for (int64_t d : given->getInts()) {
    int64_t nd = normalizeDim(d, s.rank());
    if (nd < 0)
      return opError(n,
                     "dim {} is out of range for '{}' {} (valid: {} to {})",
                     d, n.operand(0)->name(), s.str(),
                     -std::max<int64_t>(s.rank(), 1),
                     std::max<int64_t>(s.rank(), 1) - 1);
    if (llvm::is_contained(dims, nd))
      return opError(n, "dim {} appears more than once in {}", nd,
                     given->str());
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
  }
  entry(t, OpKind::Min).aliases = {"amin"};
  entry(t, OpKind::Max).aliases = {"amax"};
}

} // namespace kiln
