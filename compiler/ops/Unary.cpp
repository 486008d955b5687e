//===- Unary.cpp - elementwise activations and math -----------------------===//
#include "ops/Families.h"
#include "ref/Kernels.h"

#include <cassert>
#include <cmath>
#include <limits>
#include <optional>

namespace kiln {

/// How an op treats non-float inputs, following PyTorch.
enum class IntPolicy {
  Keep,      // i64 stays i64 (neg, abs, relu)
  ToFloat,   // i64 and bool promote to f32 (exp, log, sigmoid, ...)
  FloatOnly, // non-float inputs are refused (gelu, silu, clamp, ...)
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
    return attrError(n, "max", "min {} is greater than max {}",
                     n.attr("min")->str(), n.attr("max")->str());
  if (n.op() == OpKind::Hardtanh &&
      n.getFloat("min_val") > n.getFloat("max_val"))
    return attrError(n, n.hasAttr("max_val") ? "max_val" : "min_val",
                     "min_val {} is greater than max_val {}",
                     n.attr("min_val")->str(), n.attr("max_val")->str());
  return t;
}

namespace {
/// The attributes of a unary node, read once per evaluation.
struct UnaryAttrs {
  double slope = 0, lo = -INFINITY, hi = INFINITY, beta = 1, threshold = 20;
  bool tanhGelu = false;
  /// The op computes in f32 (f32, f16 and bf16 results): where PyTorch's
  /// formula overflows f32 midway, so does the result.
  bool f32Math = true;
};

UnaryAttrs readUnaryAttrs(const Node &n) {
  UnaryAttrs a;
  a.f32Math = n.result()->dtype() != DType::F64;
  switch (n.op()) {
  case OpKind::LeakyRelu:
    a.slope = n.getFloat("negative_slope");
    break;
  case OpKind::Gelu:
    a.tanhGelu = n.getString("approximate") == "tanh";
    break;
  case OpKind::Hardtanh:
    a.lo = n.getFloat("min_val");
    a.hi = n.getFloat("max_val");
    if (std::isnan(a.lo) || std::isnan(a.hi))
      a.lo = a.hi = NAN; // every result NaN, as PyTorch
    break;
  case OpKind::Clamp: {
    // PyTorch ignores a lone NaN bound (x stays x); with two bounds, a NaN
    // one makes every result NaN.
    std::optional<double> lo, hi;
    if (n.attr("min"))
      lo = n.getFloat("min");
    if (n.attr("max"))
      hi = n.getFloat("max");
    if (lo && hi && (std::isnan(*lo) || std::isnan(*hi))) {
      a.lo = a.hi = NAN;
      break;
    }
    if (lo && !std::isnan(*lo))
      a.lo = *lo;
    if (hi && !std::isnan(*hi))
      a.hi = *hi;
    break;
  }
  case OpKind::Softplus:
    a.beta = n.getFloat("beta");
    a.threshold = n.getFloat("threshold");
    break;
  default:
    break;
  }
  return a;
}

/// clamp as PyTorch computes it: NaN stays NaN; an absent bound is ±inf;
/// two bounds of which one is NaN make every result NaN (lo = hi = NaN).
double clampValue(double x, double lo, double hi) {
  if (std::isnan(lo))
    return lo;
  if (std::isnan(x))
    return x;
  return std::min(std::max(x, lo), hi);
}

double gelu(double x, bool tanhForm) {
  if (!tanhForm)
    return x * 0.5 * (1.0 + std::erf(x * M_SQRT1_2));
  const double beta = M_SQRT2 * M_2_SQRTPI * 0.5, kappa = 0.044715;
  double inner = beta * (x + kappa * x * x * x);
  return 0.5 * x * (1.0 + std::tanh(inner));
}

/// One element, with PyTorch's CPU formulas (so -inf and NaN come out as
/// they do there: e.g. gelu(-inf) and mish(-inf) are NaN).
double applyUnary(OpKind k, const UnaryAttrs &a, double x) {
  switch (k) {
  case OpKind::Neg:
    return -x;
  case OpKind::Abs:
    return std::abs(x);
  case OpKind::Exp:
    return std::exp(x);
  case OpKind::Log:
    return std::log(x);
  case OpKind::Sqrt:
    return std::sqrt(x);
  case OpKind::Rsqrt:
    return 1.0 / std::sqrt(x);
  case OpKind::Relu:
    return std::isnan(x) ? x : (x > 0 ? x : 0.0);
  case OpKind::LeakyRelu:
    return x > 0 ? x : x * a.slope;
  case OpKind::Sigmoid:
    return 1.0 / (1.0 + std::exp(-x));
  case OpKind::Tanh:
    return std::tanh(x);
  case OpKind::Swish:
    return x / (1.0 + std::exp(-x));
  case OpKind::Gelu:
    return gelu(x, a.tanhGelu);
  case OpKind::Hardtanh:
  case OpKind::Clamp:
    return clampValue(x, a.lo, a.hi);
  case OpKind::Hardswish: {
    // x * 6 overflows f32 for |x| above FLT_MAX / 6, and stays inf / 6.
    double scaled = x * std::min(std::max(x + 3.0, 0.0), 6.0);
    if (a.f32Math && std::fabs(scaled) > std::numeric_limits<float>::max())
      scaled = std::copysign(INFINITY, scaled);
    return scaled / 6.0;
  }
  case OpKind::Mish:
    return x * std::tanh(std::log1p(std::exp(x)));
  case OpKind::Softplus:
    return x * a.beta > a.threshold ? x
                                    : std::log1p(std::exp(x * a.beta)) / a.beta;
  default:
    llvm_unreachable("not a unary op");
  }
}

llvm::Expected<RefTensor> evalUnary(const Node &n,
                                    llvm::ArrayRef<const RefTensor *> ops) {
  UnaryAttrs a = readUnaryAttrs(n);
  OpKind k = n.op();
  return ref::mapUnary(*ops[0], n.result()->dtype(),
                       [&](double x) { return applyUnary(k, a, x); });
}
/// The f32 CUDA form of applyUnary, calling templates/kiln/ops.cuh. The
/// float attributes round to f32 as PyTorch's CUDA kernels do (their math
/// type for f32 tensors is float).
std::string cudaUnary(const Node &n, llvm::ArrayRef<std::string> ops) {
  const std::string &x = ops[0];
  UnaryAttrs a = readUnaryAttrs(n);
  switch (n.op()) {
  case OpKind::Neg:
    return fmt::format("(-{})", x);
  case OpKind::Abs:
    return fmt::format("fabsf({})", x);
  case OpKind::Exp:
    return fmt::format("expf({})", x);
  case OpKind::Log:
    return fmt::format("logf({})", x);
  case OpKind::Sqrt:
    return fmt::format("sqrtf({})", x);
  case OpKind::Rsqrt:
    return fmt::format("(1.0f / sqrtf({}))", x);
  case OpKind::Relu:
    return fmt::format("kiln::relu({})", x);
  case OpKind::LeakyRelu:
    return fmt::format("kiln::leakyRelu({}, {})", x, cudaFloat(a.slope));
  case OpKind::Sigmoid:
    return fmt::format("kiln::sigmoid({})", x);
  case OpKind::Tanh:
    return fmt::format("tanhf({})", x);
  case OpKind::Swish:
    return fmt::format("kiln::swish({})", x);
  case OpKind::Gelu:
    return fmt::format("kiln::{}({})", a.tanhGelu ? "geluTanh" : "geluErf", x);
  case OpKind::Hardtanh:
  case OpKind::Clamp:
    return fmt::format("kiln::clamp({}, {}, {})", x, cudaFloat(a.lo),
                       cudaFloat(a.hi));
  case OpKind::Hardswish:
    return fmt::format("kiln::hardswish({})", x);
  case OpKind::Mish:
    return fmt::format("kiln::mish({})", x);
  case OpKind::Softplus:
    return fmt::format("kiln::softplus({}, {}, {})", x, cudaFloat(a.beta),
                       cudaFloat(a.threshold));
  default:
    llvm_unreachable("not a unary op");
  }
}
} // namespace

bool hasShortForm(OpKind k) {
  return k == OpKind::Sigmoid || k == OpKind::Swish;
}

std::string cudaShortForm(const Node &n, const std::string &x) {
  assert(hasShortForm(n.op()) && "an op with a short form");
  return fmt::format("kiln::{}Short({})",
                     n.op() == OpKind::Swish ? "swish" : "sigmoid", x);
}

void registerUnaryOps(OpTable &t) {
#define KILN_OP(E, S, F)                                                       \
  if (OpFamily::F == OpFamily::Unary) {                                        \
    entry(t, OpKind::E).operands = {{"input"}};                                \
    entry(t, OpKind::E).infer = inferUnary;                                    \
    entry(t, OpKind::E).eval = evalUnary;                                      \
    entry(t, OpKind::E).cuda = cudaUnary;                                      \
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

  // NVRTC time per node relative to an add in long chains, where it grows
  // (OpInfo::compileWeight); mish and softplus cost about 0.9 s in chains
  // of 60 to 150 nodes, 2.8 and 3.8 s at 300.
  for (OpKind k : {OpKind::Exp, OpKind::Sqrt, OpKind::Hardtanh, OpKind::Clamp})
    entry(t, k).compileWeight = 2;
  entry(t, OpKind::Hardswish).compileWeight = 3;
  for (OpKind k : {OpKind::Sigmoid, OpKind::Tanh, OpKind::Swish, OpKind::Gelu})
    entry(t, k).compileWeight = 4;
  for (OpKind k : {OpKind::Rsqrt, OpKind::Log})
    entry(t, k).compileWeight = 4;
  for (OpKind k : {OpKind::Mish, OpKind::Softplus})
    entry(t, k).compileWeight = 6;
}

} // namespace kiln
