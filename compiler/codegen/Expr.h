//===- Expr.h - CUDA C++ for elementwise nodes at one index ----*- C++ -*-===//
//
// ExprEmitter writes the statements that compute fused elementwise values
// for Vec consecutive elements of a domain shape, starting at flat index
// `idx` (a variable of the generated code). Each value becomes a register
// array `float vN[Vec]`. Leaves are loaded from kernel parameters with
// PyTorch broadcasting into the domain; number literals become constants.
//
// Vec consecutive elements of the domain must differ only in the innermost
// coordinate larger than 1 (the caller checks that Vec divides that dim,
// innermostSize), so a broadcast operand is either one scalar for all lanes
// or a Vec-wide load. An operand of the domain's own shape is always a
// Vec-wide load.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_EXPR_H
#define KILN_CODEGEN_EXPR_H

#include "IR/Graph.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"

#include <functional>
#include <string>

namespace kiln {

/// Flat index of an element of `operand` (aligned right against `domain`,
/// PyTorch broadcasting) given the flat index `idx` into the domain.
std::string broadcastIndex(const Shape &operand, const Shape &domain,
                           const std::string &idx);

/// The element type of a kernel parameter of dtype t: "float", "kiln::f16",
/// "kiln::bf16".
std::string cudaStorageType(DType t);
/// `expr` (a float) rounded to dtype t, as an op of that dtype stores it;
/// `expr` itself for f32.
std::string roundTo(DType t, const std::string &expr);
/// Code setting `v[l] = a[l]` for each of `vec` lanes, through
/// kiln::rounded where `round`: a group_norm's computed input is rounded
/// once, so that its statistics and its normalisation read the same value
/// (ptxas may otherwise fuse the multiply that made it into each use).
std::string copyIntoV(int vec, const std::string &a, bool round);
/// A float expression for element `idx` of tensor v held in `param`.
std::string loadScalar(const Value *v, const std::string &param,
                       const std::string &idx);

/// Runs of more elementwise nodes than this are computed per element by a
/// non-inlined device function (ExprEmitter::emitNodes): NVRTC then compiles
/// the run once instead of once per lane and call site. Below about 60 nodes
/// the call costs more run time than it saves (H100, pointwise chains of
/// transcendentals: 56 nodes 2.7% slower; 64 nodes 2.5% faster and 195 -> 66
/// ms to compile; 100 nodes 11% faster; GroupNorm with 70-node prologue and
/// epilogue 6-19% faster; bench/NOTES.md v13).
constexpr size_t kOutlineNodes = 60;

class ExprEmitter {
public:
  /// `param(v)` names the kernel parameter holding tensor v.
  ExprEmitter(Shape domain, int vec, std::string idx,
              std::function<std::string(const Value *)> param);

  /// Makes `v` available as the existing register array `array`.
  void bind(const Value *v, std::string array);
  /// bind(), where `array` holds v's values as computed in f32 (a
  /// contraction's sums): for an f16 or bf16 v, first rounds them to its
  /// dtype in place (emitted into `out`), so that the ops after it read
  /// what PyTorch's would.
  void bindRounded(const Value *v, std::string array, std::string &out);
  /// The register array holding `v`, loading it first if it is a leaf not
  /// yet loaded (literals return "" : use lane()).
  std::string get(const Value *v, std::string &out);
  /// Lane `l` of v: "v3[l]" or a literal constant.
  std::string lane(const Value *v, std::string &out, const std::string &l);
  /// Emits node n (its operands must be bound, loadable or literals).
  void emit(const Node &n, std::string &out);
  /// Emits `nodes` in order, like emit() one by one; a run of more than
  /// kOutlineNodes instead becomes one non-inlined function `fn` computing
  /// an element, called per lane (its definition is appended to
  /// `functions`, which must precede the kernel). `live` are the values of
  /// the run used after it: the function returns them, and they are bound.
  void emitNodes(llvm::ArrayRef<const Node *> nodes,
                 llvm::ArrayRef<const Value *> live, const std::string &fn,
                 std::string &out, std::string &functions);
  /// Stores v's array to the parameter of `dst` at the domain index.
  void store(const Value *v, const std::string &dstParam, std::string &out);

  /// Loads of operands of the domain's shape, and stores, index with
  /// `flat` (a 64-bit variable holding the same index) instead of the
  /// index variable: idx may be 32-bit for cheaper broadcast divisions, but
  /// a 32-bit index can wrap, so the compiler cannot fold a constant
  /// offset from it into a 64-bit address. With a 64-bit one it can: a
  /// convolution thread's stores of one pixel's channels then share one
  /// base register (bench/NOTES.md v47).
  void flatIndex(std::string flat) { flat_ = std::move(flat); }
  /// sigmoid and swish in their short forms (kiln::sigmoidShort and
  /// swishShort: within 47 ulp, about 5.6e-6 of the value, instead of 3.91
  /// ulp, in half the instructions), for the epilogues of tensor-core
  /// products whose results carry a larger error anyway: TF32 products, or
  /// f16 and bf16 tensors (templates/kiln/ops.cuh).
  void shortMath(bool on) { shortMath_ = on; }

  int vec() const { return vec_; }

private:
  std::string fresh() { return "v" + std::to_string(next_++); }

  Shape domain_;
  int vec_;
  std::string idx_, flat_;
  bool shortMath_ = false;
  std::function<std::string(const Value *)> param_;
  llvm::DenseMap<const Value *, std::string> arrays_;
  unsigned next_ = 0;
};

} // namespace kiln

#endif
