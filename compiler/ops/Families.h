//===- Families.h - Registration of the op families ------------*- C++ -*-===//
//
// Each family file fills in its ops' OpInfo entries (operands, attributes,
// shape rule, reference evaluation) and shares the helpers below;
// OpTable.cpp calls the register functions to build the table. ops/ builds
// on IR/; nothing in IR/ includes this header.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_OPS_FAMILIES_H
#define KILN_OPS_FAMILIES_H

#include "IR/Graph.h"
#include "IR/OpInfo.h"

#include <array>

namespace kiln {

/// Returns early from a function returning Error or Expected<T>.
#define KILN_TRY(expr)                                                         \
  if (llvm::Error kilnErr_ = (expr))                                           \
    return kilnErr_;

using OpTable = std::array<OpInfo, kNumOps>;
inline OpInfo &entry(OpTable &t, OpKind k) {
  return t[static_cast<unsigned>(k)];
}

void registerContractionOps(OpTable &t);
void registerConvolutionOps(OpTable &t);
void registerNormalizationOps(OpTable &t);
void registerReductionOps(OpTable &t);
void registerBinaryOps(OpTable &t);
void registerUnaryOps(OpTable &t);

/// A user error located at `node`, prefixed with the op's name.
template <typename... Args>
llvm::Error opError(const Node &node, fmt::format_string<Args...> f,
                    Args &&...args) {
  return diag(node.loc(), "{}: {}", node.info().name.str(),
              fmt::format(f, std::forward<Args>(args)...));
}

/// An error about the value of attribute `attr`, at the attribute where it
/// was written (else at the op).
template <typename... Args>
llvm::Error attrError(const Node &node, llvm::StringRef attr,
                      fmt::format_string<Args...> f, Args &&...args) {
  return diag(node.attrLoc(attr), "{}: {}", node.info().name.str(),
              fmt::format(f, std::forward<Args>(args)...));
}

/// PyTorch broadcasting of two shapes; the error names both operands.
llvm::Expected<Shape> broadcastShapes(const Node &node, const Shape &a,
                                      const Shape &b);

/// PyTorch's result_type over a node's operands: dimensioned tensors first,
/// then rank-0 tensors, then number literals, each tier only winning when
/// its category (bool < integer < float) is higher.
DType resultType(llvm::ArrayRef<const Value *> operands);

/// Fails unless `v` has a floating-point dtype.
llvm::Error requireFloat(const Node &node, const Value &v,
                         llvm::StringRef role);
/// Fails unless all present tensor operands share one dtype.
llvm::Error requireSameDType(const Node &node);
/// Fails unless `v` has rank `rank`.
llvm::Error requireRank(const Node &node, const Value &v, llvm::StringRef role,
                        size_t rank);
/// Fails unless dim `i` of `v` is static; `what` names it in the message.
llvm::Error requireStaticDim(const Node &node, const Value &v, size_t i,
                             llvm::StringRef what);

/// The dims a reduction node reduces over, normalised, sorted, unique. No
/// `dim` (or an empty list) means every dim.
llvm::Expected<llvm::SmallVector<int64_t, 4>> reducedDims(const Node &n);

/// An f32 constant in CUDA C++ that reads back exactly: "0.01f", "1.0f",
/// "__int_as_float(0x7f800000)" for inf and NaN.
std::string cudaFloat(double v);

/// Whether unary op k has a short CUDA form (sigmoid, swish: within 5.6e-6
/// of the value in half the instructions, templates/kiln/ops.cuh), which
/// tensor-core epilogues multiplying in one pass take (the scheduler's
/// "shortMath").
bool hasShortForm(OpKind k);
/// The short CUDA form of node n (hasShortForm) on its operand `x`.
std::string cudaShortForm(const Node &n, const std::string &x);

} // namespace kiln

#endif
