//===- OpInfo.h - Per-op schema, shape rule and evaluation -----*- C++ -*-===//
//
// One OpInfo per op of Ops.def. The families' files in compiler/ops/ fill
// them in; everything that depends on the op (parser, printer, shape
// inference, verifier, reference evaluator) reads the table, so adding an
// op is one line in Ops.def plus one entry beside its family.
//
// Layering: ops/ builds on IR/, never the reverse. This header declares the
// table; ops/OpTable.cpp defines it (getOpInfo, allOps) from the families.
// No file under compiler/IR/ includes a header from another compiler/
// folder (tests/ir/LayeringTest.cpp checks it).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_IR_OPINFO_H
#define KILN_IR_OPINFO_H

#include "IR/Attr.h"
#include "IR/Shape.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln {

class Node;
struct RefTensor;

enum class OpKind : uint8_t {
#define KILN_OP(E, S, F) E,
#include "IR/Ops.def"
};
constexpr unsigned kNumOps = [] {
  unsigned n = 0;
#define KILN_OP(E, S, F) ++n;
#include "IR/Ops.def"
  return n;
}();

enum class OpFamily : uint8_t {
  Contraction,
  Convolution,
  Normalization,
  Reduction,
  Binary,
  Unary
};

struct OperandSpec {
  const char *name;          // PyTorch's keyword: input, weight, bias, other
  bool optional = false;     // may be absent (linear without bias)
  bool allowsScalar = false; // may be a number literal (add(x, 1.0))
};

struct AttrSpec {
  const char *name;
  AttrKind kind;
  /// Default when absent; nullopt means "absent" is itself meaningful
  /// (clamp's min) or, with `required`, that the attribute must be given.
  std::optional<Attr> defaultValue;
  bool required = false;
  /// For IntList: exact length (2 for stride/padding), 0 for any. An int
  /// given for an IntList attribute is repeated to this length (1 if 0).
  unsigned listLength = 0;
  /// For String: the accepted values.
  std::vector<const char *> choices = {};
  /// Another accepted spelling (PyTorch's num_groups for groups).
  const char *alias = nullptr;
};

/// Shape and dtype rule. Reads the node's operand types and attributes;
/// errors are user errors located at the node.
using InferFn = llvm::Expected<TensorType> (*)(const Node &node);

/// Float64 reference evaluation. `operands` follows the operand specs;
/// absent optional operands are nullptr. Literal operands arrive as rank-0
/// tensors. The node's result type is already inferred and static.
using EvalFn = llvm::Expected<RefTensor> (*)(
    const Node &node, llvm::ArrayRef<const RefTensor *> operands);

/// The CUDA C++ expression of an elementwise op on f32 operands, given the
/// operands' expressions (see templates/kiln/ops.cuh for the helpers it may
/// call). Only elementwise ops have one.
using CudaExprFn = std::string (*)(const Node &node,
                                   llvm::ArrayRef<std::string> operands);

struct OpInfo {
  OpKind kind;
  llvm::StringRef name;
  OpFamily family;
  std::vector<OperandSpec> operands;
  std::vector<AttrSpec> attrs;
  InferFn infer = nullptr;
  EvalFn eval = nullptr;
  CudaExprFn cuda = nullptr;
  /// Elementwise ops: what one node of this op adds to NVRTC's time for a
  /// fused kernel, in units of an add (the partitioner bounds a group's sum;
  /// fusion/Partition.h). Measured on chains of 150 and 300 nodes of the op
  /// (CPU time of kiln compile, sm_90): add, mul, neg, abs, relu 0.4 ms a
  /// node; sigmoid 1.9; log 3.3; the costliest (pow, mish, softplus) cost
  /// about 1 s in any chain of 60 to 150 nodes, then grow (see each op).
  unsigned compileWeight = 1;
  /// Extra accepted names for the op ("silu" for swish).
  std::vector<const char *> aliases = {};

  const AttrSpec *findAttr(llvm::StringRef attrName) const;
  /// Index of the operand spec named `operandName`, or -1.
  int findOperand(llvm::StringRef operandName) const;
  unsigned numRequiredOperands() const;
};

/// Defined in ops/OpTable.cpp, beside the families that fill the table.
const OpInfo &getOpInfo(OpKind kind);
/// Looks an op up by its .kg name or an alias.
const OpInfo *lookupOp(llvm::StringRef name);
llvm::StringRef opName(OpKind kind);
/// All ops in Ops.def order. Defined in ops/OpTable.cpp.
llvm::ArrayRef<OpInfo> allOps();

} // namespace kiln

#endif
