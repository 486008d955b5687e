//===- Graph.h - The Kiln graph IR -----------------------------*- C++ -*-===//
//
// A Graph is a DAG of single-result nodes over values. Values are graph
// inputs, parameters (weights, with an optional initialiser), node results,
// or number literals used as scalar operands (add(x, 1.0)). Nodes are kept in
// a topological order: every operand is defined before its user. A value may
// feed any number of nodes.
//
// Graph::addNode is the one way to create a node: it checks operands and
// attributes against the op's schema, runs the op's shape rule and returns
// the typed result, so a Graph is well typed by construction. The Verifier
// re-checks everything for graphs that passes have rewritten.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_IR_GRAPH_H
#define KILN_IR_GRAPH_H

#include "IR/Attr.h"
#include "IR/Diagnostics.h"
#include "IR/OpInfo.h"
#include "IR/Shape.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kiln {

class Node;

/// How a parameter without a file entry gets its contents. Random
/// initialisers are counter-based (value i depends only on seed and i), see
/// docs/format.md.
struct Initializer {
  enum class Kind : uint8_t { Zeros, Ones, Full, Randn, Uniform };
  Kind kind = Kind::Zeros;
  double a = 0;      // full: value; uniform: lo
  double b = 0;      // uniform: hi
  uint64_t seed = 0; // randn, uniform
  /// .kg spelling: zeros, ones, full(0.5), randn(seed=1),
  /// uniform(-0.1, 0.1, seed=3)
  std::string str() const;
  bool operator==(const Initializer &o) const {
    return kind == o.kind && a == o.a && b == o.b && seed == o.seed;
  }
};

class Value {
public:
  enum class Kind : uint8_t { Input, Param, Result, Literal };

  Kind kind() const { return kind_; }
  bool isInput() const { return kind_ == Kind::Input; }
  bool isParam() const { return kind_ == Kind::Param; }
  bool isResult() const { return kind_ == Kind::Result; }
  bool isLiteral() const { return kind_ == Kind::Literal; }

  /// Empty for literals.
  const std::string &name() const { return name_; }
  const TensorType &type() const { return type_; }
  DType dtype() const { return type_.dtype; }
  const Shape &shape() const { return type_.shape; }
  /// The defining node for results, else nullptr.
  Node *def() const { return def_; }
  const SourceLoc &loc() const { return loc_; }
  /// Dense id, unique within the graph (index into Graph::values()).
  unsigned id() const { return id_; }

  /// Literals: the number (1 or 0 for true and false), and whether it was
  /// written as an integer. dtype() is i64, f32 or bool.
  double literal() const { return literal_; }
  bool literalIsInt() const { return literalIsInt_; }
  /// .kg spelling of a literal: 2, 2.0, -inf, true.
  std::string literalStr() const;

  const std::optional<Initializer> &init() const { return init_; }

private:
  friend class Graph;
  Kind kind_ = Kind::Input;
  std::string name_;
  TensorType type_;
  Node *def_ = nullptr;
  SourceLoc loc_;
  unsigned id_ = 0;
  double literal_ = 0;
  bool literalIsInt_ = false;
  std::optional<Initializer> init_;
};

class Node {
public:
  OpKind op() const { return op_; }
  const OpInfo &info() const { return getOpInfo(op_); }
  /// One slot per operand spec; absent optional operands are nullptr.
  llvm::ArrayRef<Value *> operands() const { return operands_; }
  Value *operand(unsigned i) const {
    return i < operands_.size() ? operands_[i] : nullptr;
  }
  Value *result() const { return result_; }
  const SourceLoc &loc() const { return loc_; }

  /// Attributes as given (after schema coercion), in schema order.
  llvm::ArrayRef<std::pair<std::string, Attr>> attrs() const { return attrs_; }
  /// The given attribute, else the schema default, else nullopt.
  std::optional<Attr> attr(llvm::StringRef name) const;
  bool hasAttr(llvm::StringRef name) const;
  /// Where attribute `name` was written, else where the node was.
  const SourceLoc &attrLoc(llvm::StringRef name) const;
  // Typed accessors; assert that the attribute (or its default) exists.
  int64_t getInt(llvm::StringRef name) const;
  double getFloat(llvm::StringRef name) const;
  bool getBool(llvm::StringRef name) const;
  std::string getString(llvm::StringRef name) const;
  llvm::SmallVector<int64_t, 4> getInts(llvm::StringRef name) const;

private:
  friend class Graph;
  OpKind op_ = OpKind::Add;
  llvm::SmallVector<Value *, 3> operands_;
  llvm::SmallVector<std::pair<std::string, Attr>, 4> attrs_;
  llvm::SmallVector<std::pair<std::string, SourceLoc>, 2> attrLocs_;
  Value *result_ = nullptr;
  SourceLoc loc_;
};

/// An attribute as written by a user, before schema coercion.
struct NamedAttr {
  std::string name;
  Attr value;
  SourceLoc loc;
};

class Graph {
public:
  explicit Graph(std::string name, std::string file = "")
      : name_(std::move(name)), file_(std::move(file)) {}
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;

  const std::string &name() const { return name_; }
  /// The file the graph was parsed from ("" when built in code).
  const std::string &file() const { return file_; }

  // --- Construction; each checks names and types and returns user errors.
  llvm::Expected<Value *> addInput(llvm::StringRef name, TensorType type,
                                   SourceLoc loc = {});
  llvm::Expected<Value *> addParam(llvm::StringRef name, TensorType type,
                                   std::optional<Initializer> init,
                                   SourceLoc loc = {});
  /// A number literal operand; `isInt` selects i64 (else f32), and like a
  /// Python scalar it does not widen a tensor operand's dtype.
  Value *addLiteral(double value, bool isInt);
  /// A bool literal operand (a Python True or False): 1 or 0, of the
  /// lowest category, so it never changes a tensor operand's dtype.
  Value *addBoolLiteral(bool value);
  /// A literal equal to `lit` (of any graph): same value and dtype.
  Value *addLiteralLike(const Value &lit);
  /// Adds a node. `operands` has one slot per operand spec (trailing absent
  /// optional operands may be omitted; absent ones are nullptr). `name` may
  /// be empty: a fresh "%N" name is chosen. Checks the schema, coerces
  /// attributes, infers the result type.
  llvm::Expected<Value *> addNode(OpKind op, llvm::ArrayRef<Value *> operands,
                                  llvm::ArrayRef<NamedAttr> attrs,
                                  llvm::StringRef name = "",
                                  SourceLoc loc = {});
  llvm::Error addOutput(Value *v, SourceLoc loc = {});

  // --- Queries.
  llvm::ArrayRef<Value *> inputs() const { return inputs_; }
  llvm::ArrayRef<Value *> params() const { return params_; }
  llvm::ArrayRef<Value *> outputs() const { return outputs_; }
  /// Nodes in topological (creation) order.
  const std::vector<std::unique_ptr<Node>> &nodes() const { return nodes_; }
  const std::vector<std::unique_ptr<Value>> &values() const { return values_; }
  /// nullptr when no input, param or result has that name.
  Value *lookup(llvm::StringRef name) const;
  /// Whether `v` is one of this graph's values (not another graph's).
  bool owns(const Value *v) const;
  /// Users of each value, indexed by Value::id(), in node order.
  std::vector<llvm::SmallVector<Node *, 2>> users() const;
  /// Named dims used by the inputs, in first-use order.
  llvm::SmallVector<std::string, 4> symbols() const;

  /// A located error at `loc`, using this graph's file when loc has none.
  SourceLoc locate(SourceLoc loc) const;

  // --- Unchecked rewriting for passes. These bypass the schema and type
  // checks of addNode; run verifyGraph() (Verifier.h) after using them.
  void setOperand(Node &node, unsigned i, Value *v);
  void setAttr(Node &node, llvm::StringRef name, Attr value);
  void setType(Value &v, TensorType type);
  /// Moves node `from` to position `to` in the node order.
  void moveNode(size_t from, size_t to);

private:
  llvm::Error checkNewName(llvm::StringRef name, const SourceLoc &loc) const;
  Value *newValue(Value::Kind kind, std::string name, TensorType type,
                  SourceLoc loc);

  std::string name_;
  std::string file_;
  std::vector<std::unique_ptr<Value>> values_;
  std::vector<std::unique_ptr<Node>> nodes_;
  llvm::SmallVector<Value *, 4> inputs_, params_, outputs_;
  llvm::StringMap<Value *> byName_;
  unsigned nextTemp_ = 0;
};

} // namespace kiln

#endif
