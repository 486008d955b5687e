//===- Builder.h - Building graphs in C++ ----------------------*- C++ -*-===//
//
// The C++ way to write a graph; it builds exactly what the .kg parser builds.
//
//   GraphBuilder b("gemm_gn_min_bias");
//   Value *x = b.input("x", DType::F32, {"N", 8192});
//   Value *w = b.param("w", DType::F32, {8192, 8192});
//   Value *y = b.linear(x, w);
//   Value *g = b.groupNorm(y, 512);
//   b.output(b.add(b.min(g, {1}, true), 1.0));
//   llvm::Expected<std::unique_ptr<Graph>> graph = b.finish();
//
// The builder keeps the first error (with its reason) and turns later calls
// that depend on a failed value into no-ops; finish() reports it. After
// finish() the builder is spent: further calls are no-ops, and a second
// finish() is an error.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FRONTEND_BUILDER_H
#define KILN_FRONTEND_BUILDER_H

#include "IR/Graph.h"

#include <memory>
#include <optional>
#include <string>

namespace kiln {

/// A node operand: a value, a number or bool literal, or absent (an
/// optional operand left out).
class Operand {
public:
  Operand() = default;
  Operand(Value *v) : value_(v), present_(v != nullptr) {}           // NOLINT
  Operand(double v) : number_(v), isNumber_(true), present_(true) {} // NOLINT
  Operand(int v)                                                     // NOLINT
      : number_(v), isNumber_(true), isInt_(true), present_(true) {}
  Operand(bool v) // NOLINT
      : number_(v ? 1 : 0), isNumber_(true), isBool_(true), present_(true) {}
  Operand(std::nullopt_t) {} // NOLINT

  bool present() const { return present_; }
  bool isNumber() const { return isNumber_; }
  bool isInt() const { return isInt_; }
  bool isBool() const { return isBool_; }
  double number() const { return number_; }
  Value *value() const { return value_; }

private:
  Value *value_ = nullptr;
  double number_ = 0;
  bool isNumber_ = false, isInt_ = false, isBool_ = false, present_ = false;
};

struct Conv2dOptions {
  int64_t strideH = 1, strideW = 1;
  int64_t padH = 0, padW = 0;
  int64_t outputPadH = 0, outputPadW = 0; // conv_transpose2d only
  int64_t dilationH = 1, dilationW = 1;
  int64_t groups = 1;
};

class GraphBuilder {
public:
  explicit GraphBuilder(std::string name);

  Value *input(llvm::StringRef name, DType dtype, Shape shape);
  Value *param(llvm::StringRef name, DType dtype, Shape shape,
               std::optional<Initializer> init = std::nullopt);

  /// Any op; attributes are checked against its schema. `name` may be empty.
  Value *call(OpKind op, llvm::ArrayRef<Operand> operands,
              llvm::ArrayRef<NamedAttr> attrs = {}, llvm::StringRef name = "");

  Value *linear(Operand x, Operand w, Operand bias = std::nullopt);
  Value *matmul(Operand a, Operand b);
  Value *conv2d(Operand x, Operand w, Operand bias = std::nullopt,
                const Conv2dOptions &o = {});
  Value *convTranspose2d(Operand x, Operand w, Operand bias = std::nullopt,
                         const Conv2dOptions &o = {});
  Value *groupNorm(Operand x, int64_t groups, Operand weight = std::nullopt,
                   Operand bias = std::nullopt, double eps = 1e-5);
  /// min/max/sum/mean/logsumexp; empty dims reduce everything.
  Value *reduce(OpKind op, Operand x, llvm::ArrayRef<int64_t> dims = {},
                bool keepdim = false);
  Value *min(Operand x, llvm::ArrayRef<int64_t> dims, bool keepdim = false) {
    return reduce(OpKind::Min, x, dims, keepdim);
  }
  Value *add(Operand a, Operand b) { return call(OpKind::Add, {a, b}); }
  Value *sub(Operand a, Operand b) { return call(OpKind::Sub, {a, b}); }
  Value *mul(Operand a, Operand b) { return call(OpKind::Mul, {a, b}); }
  Value *div(Operand a, Operand b) { return call(OpKind::Div, {a, b}); }
  Value *unary(OpKind op, Operand x) { return call(op, {x}); }
  Value *leakyRelu(Operand x, double slope = 0.01);
  Value *gelu(Operand x, bool tanhApproximation = false);
  /// Not a mode name: gelu(x, "none") would convert to `true` (tanh).
  Value *gelu(Operand x, const char *) = delete;

  void output(Value *v);

  /// The graph, or the first error met while building it.
  llvm::Expected<std::unique_ptr<Graph>> finish();

  /// The graph under construction (for lookups while building); a fatal
  /// error after finish(), which hands the graph over.
  Graph &graph();

private:
  bool failed() const { return failed_; }
  Value *record(llvm::Expected<Value *> v);

  std::unique_ptr<Graph> graph_;
  llvm::Error error_ = llvm::Error::success();
  bool failed_ = false;
};

} // namespace kiln

#endif
