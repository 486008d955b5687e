//===- Binary.cpp - add, sub, mul, div, maximum, minimum, pow -------------===//
#include "ops/Families.h"
#include "ref/Kernels.h"

#include <cmath>

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
    return opError(n, "arithmetic on bool tensors is not supported; both "
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

/// maximum/minimum as PyTorch computes them: NaN in either operand wins.
static double nanMax(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
}
static double nanMin(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
}

/// A tensor to a number power, as PyTorch's kernels compute it: these
/// exponents take shortcuts that differ from pow() at signed zeros and
/// infinities ((-inf) ** 0.5 is NaN, not inf; (-0.0) ** -0.5 is -inf) and in
/// rounding (x ** 2 is x * x). A tensor exponent, rank 0 or not, is pow().
/// Each row: the exponent, the CUDA expression of the base {0}, and the
/// reference's.
struct PowShortcut {
  double exponent;
  const char *cuda;
  double (*ref)(double);
};
constexpr PowShortcut kPowShortcuts[] = {
    {0.5, "sqrtf({0})", [](double a) { return std::sqrt(a); }},
    {-0.5, "(1.0f / sqrtf({0}))", [](double a) { return 1.0 / std::sqrt(a); }},
    {2, "({0} * {0})", [](double a) { return a * a; }},
    {3, "({0} * {0} * {0})", [](double a) { return a * a * a; }},
    {-1, "(1.0f / {0})", [](double a) { return 1.0 / a; }},
    {-2, "(1.0f / ({0} * {0}))", [](double a) { return 1.0 / (a * a); }},
};

/// The shortcut node n (a pow) takes, or null.
static const PowShortcut *powShortcut(const Node &n) {
  const Value &e = *n.operand(1);
  if (n.op() != OpKind::Pow || !e.isLiteral())
    return nullptr;
  for (const PowShortcut &p : kPowShortcuts)
    if (e.literal() == p.exponent)
      return &p;
  return nullptr;
}

static double applyBinary(OpKind k, double a, double b) {
  switch (k) {
  case OpKind::Add:
    return a + b;
  case OpKind::Sub:
    return a - b;
  case OpKind::Mul:
    return a * b;
  case OpKind::Div:
    return a / b;
  case OpKind::Maximum:
    return nanMax(a, b);
  case OpKind::Minimum:
    return nanMin(a, b);
  case OpKind::Pow:
    return std::pow(a, b);
  default:
    llvm_unreachable("not a binary op");
  }
}

static llvm::Expected<RefTensor>
evalBinary(const Node &n, llvm::ArrayRef<const RefTensor *> ops) {
  OpKind k = n.op();
  if (const PowShortcut *p = powShortcut(n))
    return ref::mapBinary(*ops[0], *ops[1], n.result()->dtype(),
                          n.result()->shape().sizes(),
                          [p](double a, double) { return p->ref(a); });
  return ref::mapBinary(
      *ops[0], *ops[1], n.result()->dtype(), n.result()->shape().sizes(),
      [k](double a, double b) { return applyBinary(k, a, b); });
}

static std::string cudaBinary(const Node &n, llvm::ArrayRef<std::string> a) {
  switch (n.op()) {
  case OpKind::Add:
    return fmt::format("({} + {})", a[0], a[1]);
  case OpKind::Sub:
    return fmt::format("({} - {})", a[0], a[1]);
  case OpKind::Mul:
    return fmt::format("({} * {})", a[0], a[1]);
  case OpKind::Div:
    return fmt::format("({} / {})", a[0], a[1]);
  case OpKind::Maximum:
    return fmt::format("kiln::nanMax({}, {})", a[0], a[1]);
  case OpKind::Minimum:
    return fmt::format("kiln::nanMin({}, {})", a[0], a[1]);
  case OpKind::Pow:
    if (const PowShortcut *p = powShortcut(n))
      return fmt::format(fmt::runtime(p->cuda), a[0]);
    return fmt::format("powf({}, {})", a[0], a[1]);
  default:
    llvm_unreachable("not a binary op");
  }
}

void registerBinaryOps(OpTable &t) {
  for (OpKind k : {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div,
                   OpKind::Maximum, OpKind::Minimum, OpKind::Pow}) {
    OpInfo &info = entry(t, k);
    info.operands = {{"input", false, true}, {"other", false, true}};
    info.infer = inferBinary;
    info.eval = evalBinary;
    info.cuda = cudaBinary;
  }
  // NaN-propagating compares and the IEEE division cost a few instructions.
  // powf costs much more in short chains (60 nodes: 2.0 s) but, once NVRTC
  // stops inlining it, little more per node (300 nodes: 2.8 s), so cutting
  // a chain of pows short would only add kernels.
  for (OpKind k : {OpKind::Div, OpKind::Maximum, OpKind::Minimum})
    entry(t, k).compileWeight = 2;
  entry(t, OpKind::Pow).compileWeight = 4;
}

} // namespace kiln
