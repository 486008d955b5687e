//===- Evaluator.h - The float64 reference evaluator -----------*- C++ -*-===//
//
// Runs a graph on the CPU in double precision, one node at a time, through
// each op's OpInfo::eval. It is the oracle the generated kernels (and
// `kiln run --check`) are compared against, so it favours exactness over
// speed.
//
// Before: every value's shape is static (graphs with named dims are
// specialised first); inputs and params match the graph's declared shapes.
// After: the outputs, in g.outputs() order, with the graph's dtypes (values
// held in double, integral where the dtype is).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_REF_EVALUATOR_H
#define KILN_REF_EVALUATOR_H

#include "IR/Graph.h"
#include "ref/RefTensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace kiln {

struct EvalOptions {
  /// Refuse to run when the peak of live tensors (8 bytes per element,
  /// inputs and params included) would exceed this.
  uint64_t maxBytes = 8ull << 30;
  /// Called after each node with its index, the node count and the seconds
  /// it took; `kiln run` reports slow nodes through it (progress on long
  /// evaluations). May be empty.
  std::function<void(const Node &, size_t index, size_t count, double seconds)>
      onNodeDone;
  /// Called before each node, with its index and the node count.
  std::function<void(const Node &, size_t index, size_t count)> onNodeStart;
  /// Round every f16 or bf16 result to its dtype, and an op's operands of
  /// another dtype to the op's (number literals excepted), as PyTorch's
  /// eager ops store them and as Kiln's kernels compute: the oracle for
  /// those kernels. Off, every value keeps double precision.
  bool roundToStorage = false;
  /// Round every f32 result to f32 too, as PyTorch's eager f32 ops store
  /// them and Kiln's kernels keep them between ops (the GPU tests' oracle):
  /// the error measured is then the kernels' own, not the rounding every
  /// f32 implementation makes before an ill-conditioned op (a group_norm
  /// of two values after `x + shift` at x near 1e4, whose rounding of 5e-4
  /// moves the result by up to 8%). Off, f32 results stay in double.
  bool roundF32 = false;
  /// executeReference: print the pipeline's stages (verify, specialise)
  /// as they run.
  bool printIR = false;
};

/// v as a tensor of dtype t stores it: rounded to nearest even for f16 and
/// bf16, v itself for the other dtypes.
double roundToDType(double v, DType t);

/// Refuses a static-shaped graph whose live tensors would exceed `maxBytes`
/// at their peak in evaluate() (8 bytes an element, inputs and params
/// included), naming the largest: callers check before they make the
/// inputs and params, so that nothing too big is allocated. `limitText`
/// says what the bound is, when it is not the limit the caller set
/// ("the 20 GiB this machine has available").
llvm::Error checkEvaluationMemory(const Graph &g, uint64_t maxBytes,
                                  const std::string &limitText = "");

/// Evaluates `g` on `inputs` and `params` (in g.inputs() / g.params()
/// order). Intermediates are freed after their last use. User errors: named
/// dims, a wrong number of tensors, a shape mismatch, a memory estimate
/// above opts.maxBytes, or an op's own evaluation error.
llvm::Expected<std::vector<RefTensor>>
evaluate(const Graph &g, llvm::ArrayRef<RefTensor> inputs,
         llvm::ArrayRef<RefTensor> params, const EvalOptions &opts = {});

} // namespace kiln

#endif
