//===- Unary.cpp - elementwise activations and math ------------------------===//
#include "ops/Families.h"

namespace kiln {

/// How an op treats non-float inputs, following PyTorch.
enum class IntPolicy {
  Keep,       // i64 stays i64 (neg, abs, relu)
  ToFloat,    // i64 and bool promote to f32 (exp, log, sigmoid, ...)
  FloatOnly,  // non-float inputs are refused (gelu, silu, clamp, ...)
};

static IntPolicy intPolicy(OpKind k) {
  switch (k) {
  case OpKind::Neg:
  case OpKind::Abs:
  case OpKind::Relu:
    return IntPolicy::Keep;
  case OpKind::Exp:
  case OpKind::Log:
  case OpKind::Sqrt:
  case OpKind::Rsqrt:
  case OpKind::Sigmoid:
  case OpKind::Tanh:
    return IntPolicy::ToFloat;
  default:
    return IntPolicy::FloatOnly;
  }
}

static llvm::Expected<TensorType> inferUnary(const Node &n) {
  const Value &x = *n.operand(0);
  TensorType t = x.type();
  if (!isFloat(t.dtype)) {
    switch (intPolicy(n.op())) {
    case IntPolicy::Keep:
      if (t.dtype == DType::Bool)
        return opError(n, "input '{}' is bool, which this op does not take",
                       x.name());
      break;
    case IntPolicy::ToFloat:
      t.dtype = DType::F32;
      break;
    case IntPolicy::FloatOnly:
      KILN_TRY(requireFloat(n, x, "input"));
      break;
    }
  }
  if (n.op() == OpKind::Clamp && !n.hasAttr("min") && !n.hasAttr("max"))
    return opError(n, "give at least one of 'min' and 'max'");
  if (n.op() == OpKind::Clamp && n.hasAttr("min") && n.hasAttr("max") &&
      n.getFloat("min") > n.getFloat("max"))
    // PyTorch then returns max everywhere; almost surely a mistake here.
    return opError(n, "min {} is greater than max {}",
                   n.attr("min")->str(), n.attr("max")->str());
  if (n.op() == OpKind::Hardtanh && n.getFloat("min_val") > n.getFloat("max_val"))
    return opError(n, "min_val {} is greater than max_val {}",
                   n.attr("min_val")->str(), n.attr("max_val")->str());
  return t;
}

void registerUnaryOps(OpTable &t) {
#define KILN_OP(E, S, F)                                                       \
  if (OpFamily::F == OpFamily::Unary) {                                        \
    entry(t, OpKind::E).operands = {{"input"}};                                \
    entry(t, OpKind::E).infer = inferUnary;                                    \
  }
#include "IR/Ops.def"

  entry(t, OpKind::LeakyRelu).attrs = {
      {"negative_slope", AttrKind::Float, Attr::ofFloat(0.01)}};
  entry(t, OpKind::Gelu).attrs = {{"approximate",
                                   AttrKind::String,
                                   Attr::ofString("none"),
                                   false,
                                   0,
                                   {"none", "tanh"}}};
  entry(t, OpKind::Hardtanh).attrs = {
      {"min_val", AttrKind::Float, Attr::ofFloat(-1.0)},
      {"max_val", AttrKind::Float, Attr::ofFloat(1.0)}};
  entry(t, OpKind::Clamp).attrs = {{"min", AttrKind::Float, std::nullopt},
                                   {"max", AttrKind::Float, std::nullopt}};
  entry(t, OpKind::Softplus).attrs = {
      {"beta", AttrKind::Float, Attr::ofFloat(1.0)},
      {"threshold", AttrKind::Float, Attr::ofFloat(20.0)}};
  entry(t, OpKind::Swish).aliases = {"silu"};
}

} // namespace kiln
