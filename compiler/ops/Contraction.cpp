//===- Contraction.cpp - linear and matmul --------------------------------===//
#include "ops/Families.h"
#include "ref/Kernels.h"

namespace kiln {

// linear(input, weight, bias?) = input · weightᵀ + bias, weight [out, in].
static llvm::Expected<TensorType> inferLinear(const Node &n) {
  const Value &x = *n.operand(0), &w = *n.operand(1);
  const Value *b = n.operand(2);
  KILN_TRY(requireFloat(n, x, "input"));
  KILN_TRY(requireSameDType(n));
  if (x.shape().rank() < 1)
    return opError(n, "input '{}' must have at least one dim, got {}", x.name(),
                   x.type().str());
  KILN_TRY(requireRank(n, w, "weight", 2));
  const Dim &in = x.shape()[x.shape().rank() - 1];
  if (!dimsMayBeEqual(in, w.shape()[1]))
    return opError(n,
                   "input '{}' {} has {} features in its last dim, but weight "
                   "'{}' {} expects {}; weight is [out_features, "
                   "in_features] as in torch.nn.Linear",
                   x.name(), x.shape().str(), in.str(), w.name(),
                   w.shape().str(), w.shape()[1].str());
  if (b) {
    KILN_TRY(requireRank(n, *b, "bias", 1));
    if (!dimsMayBeEqual(b->shape()[0], w.shape()[0]))
      return opError(n, "bias '{}' {} must have {} entries (out_features)",
                     b->name(), b->shape().str(), w.shape()[0].str());
  }
  Shape out;
  for (size_t i = 0; i + 1 < x.shape().rank(); ++i)
    out.push_back(x.shape()[i]);
  out.push_back(w.shape()[0]);
  return TensorType{x.dtype(), out};
}

// matmul(input, other) with torch.matmul's rules for 1-D operands and
// broadcast batch dims.
static llvm::Expected<TensorType> inferMatmul(const Node &n) {
  const Value &a = *n.operand(0), &b = *n.operand(1);
  KILN_TRY(requireFloat(n, a, "input"));
  KILN_TRY(requireSameDType(n));
  size_t ra = a.shape().rank(), rb = b.shape().rank();
  if (ra == 0 || rb == 0)
    return opError(n, "both operands need at least one dim, got {} and {}",
                   a.type().str(), b.type().str());
  Shape sa = a.shape(), sb = b.shape();
  bool dropRow = ra == 1, dropCol = rb == 1;
  if (dropRow)
    sa = Shape{Dim(1), a.shape()[0]};
  if (dropCol)
    sb = Shape{b.shape()[0], Dim(1)};
  const Dim &k1 = sa[sa.rank() - 1], &k2 = sb[sb.rank() - 2];
  if (!dimsMayBeEqual(k1, k2))
    return opError(n,
                   "inner dims differ: '{}' {} contracts {} against {} of "
                   "'{}' {}",
                   a.name(), a.shape().str(), k1.str(), k2.str(), b.name(),
                   b.shape().str());
  Shape batchA(sa.dims().drop_back(2)), batchB(sb.dims().drop_back(2));
  llvm::Expected<Shape> batch = broadcastShapes(n, batchA, batchB);
  if (!batch)
    return batch.takeError();
  Shape out = *batch;
  if (!dropRow)
    out.push_back(sa[sa.rank() - 2]);
  if (!dropCol)
    out.push_back(sb[sb.rank() - 1]);
  return TensorType{a.dtype(), out};
}

static llvm::Expected<RefTensor>
evalLinear(const Node &n, llvm::ArrayRef<const RefTensor *> ops) {
  return ref::linear(*ops[0], *ops[1], ops[2], n.result()->dtype(),
                     n.result()->shape().sizes());
}

static llvm::Expected<RefTensor>
evalMatmul(const Node &n, llvm::ArrayRef<const RefTensor *> ops) {
  return ref::matmul(*ops[0], *ops[1], n.result()->dtype(),
                     n.result()->shape().sizes());
}

void registerContractionOps(OpTable &t) {
  OpInfo &linear = entry(t, OpKind::Linear);
  linear.operands = {{"input"}, {"weight"}, {"bias", true}};
  linear.infer = inferLinear;
  linear.eval = evalLinear;

  OpInfo &matmul = entry(t, OpKind::Matmul);
  matmul.operands = {{"input"}, {"other"}};
  matmul.infer = inferMatmul;
  matmul.eval = evalMatmul;
}

} // namespace kiln
