//===- Binary.cpp - add, sub, mul, div, maximum, minimum, pow --------------===//
#include "ops/Families.h"

namespace kiln {

// Broadcast the operands (PyTorch rules) and promote their dtypes as
// torch.result_type does, with number literals as Python scalars.
static llvm::Expected<TensorType> inferBinary(const Node &n) {
  const Value &a = *n.operand(0), &b = *n.operand(1);
  llvm::Expected<Shape> shape = broadcastShapes(n, a.shape(), b.shape());
  if (!shape)
    return shape.takeError();
  DType dt = resultType({&a, &b});
  if (dt == DType::Bool)
    return opError(n,
                   "arithmetic on bool tensors is not supported; both "
                   "operands are bool");
  switch (n.op()) {
  case OpKind::Div:
    if (!isFloat(dt))
      dt = DType::F32; // true division, as torch.div without rounding_mode
    break;
  case OpKind::Pow:
    if (!isFloat(dt) && b.isLiteral() && b.literal() < 0)
      return opError(n,
                     "integers to negative integer powers are not allowed "
                     "(PyTorch refuses them too); write the exponent as "
                     "{}.0 or make the base floating-point",
                     b.literalStr());
    break;
  default:
    break;
  }
  return TensorType{dt, *shape};
}

void registerBinaryOps(OpTable &t) {
  for (OpKind k : {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div,
                   OpKind::Maximum, OpKind::Minimum, OpKind::Pow}) {
    OpInfo &info = entry(t, k);
    info.operands = {{"input", false, true}, {"other", false, true}};
    info.infer = inferBinary;
  }
}

} // namespace kiln
