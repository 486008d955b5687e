//===- InferHelpers.h - Single-op graphs for shape-rule tests --*- C++ -*-===//
#ifndef KILN_TESTS_IR_INFERHELPERS_H
#define KILN_TESTS_IR_INFERHELPERS_H

#include "IR/Graph.h"

#include <string>
#include <variant>
#include <vector>

namespace kiln::test {

/// An operand for a one-node graph: a tensor type, a number literal, or
/// absent.
struct Arg {
  enum Kind { Tensor, Int, Float, None } kind = None;
  TensorType type;
  double number = 0;
  static Arg t(DType d, Shape s) { return {Tensor, {d, std::move(s)}, 0}; }
  static Arg f32(Shape s) { return t(DType::F32, std::move(s)); }
  static Arg i(int64_t v) { return {Int, {}, static_cast<double>(v)}; }
  static Arg f(double v) { return {Float, {}, v}; }
  static Arg none() { return {}; }
};

/// Builds a graph with one node of `op` over `args` and returns its type as
/// "f32[2, 3]", or the error text.
inline std::string infer(OpKind op, const std::vector<Arg> &args,
                         const std::vector<NamedAttr> &attrs = {}) {
  Graph g("t", "t.kg");
  std::vector<Value *> operands;
  for (size_t i = 0; i < args.size(); ++i) {
    const Arg &a = args[i];
    switch (a.kind) {
    case Arg::Tensor: {
      static const char *names[] = {"a", "b", "c", "d"};
      operands.push_back(*g.addInput(names[i], a.type));
      break;
    }
    case Arg::Int:
    case Arg::Float:
      operands.push_back(g.addLiteral(a.number, a.kind == Arg::Int));
      break;
    case Arg::None:
      operands.push_back(nullptr);
      break;
    }
  }
  llvm::Expected<Value *> r =
      g.addNode(op, operands, attrs, "r", SourceLoc{"", 3, 7});
  if (!r)
    return errorToString(r.takeError());
  return (*r)->type().str();
}

inline NamedAttr attr(const char *name, Attr a) { return {name, a, {}}; }

} // namespace kiln::test

#endif
