#include "Verifier.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

namespace kiln {

namespace {

class Verifier {
public:
  explicit Verifier(const Graph &g) : g_(g), defined_(g.values().size()) {}

  llvm::Error run() {
    if (llvm::Error e = checkValues())
      return e;
    for (Value *v : g_.inputs())
      defined_[v->id()] = true;
    for (Value *v : g_.params())
      defined_[v->id()] = true;
    for (const auto &n : g_.nodes()) {
      if (llvm::Error e = checkNode(*n))
        return e;
      defined_[n->result()->id()] = true;
    }
    if (llvm::Error e = checkNamedDims())
      return e;
    return checkOutputs();
  }

private:
  llvm::Error checkValues() {
    llvm::StringSet<> names;
    for (size_t i = 0; i < g_.values().size(); ++i) {
      const Value &v = *g_.values()[i];
      if (v.id() != i)
        return diag(v.loc(), "value '{}' has id {} at position {}", v.name(),
                    v.id(), i);
      if (v.isLiteral()) {
        if (!v.name().empty() || v.shape().rank() != 0)
          return diag(v.loc(), "literal {} must be unnamed and rank 0",
                      v.literalStr());
        continue;
      }
      if (v.name().empty())
        return diag(v.loc(), "a {} value has no name",
                    v.isInput()   ? "input"
                    : v.isParam() ? "param"
                                  : "result");
      if (!names.insert(v.name()).second)
        return diag(v.loc(), "'{}' is defined twice", v.name());
      if (v.isResult() != (v.def() != nullptr) ||
          (v.def() && v.def()->result() != &v))
        return diag(v.loc(), "'{}' and its defining node disagree", v.name());
      if (!fitsIndexing(v.shape()))
        return diag(v.loc(),
                    "'{}' {} has more than 2^60 elements; Kiln indexes "
                    "tensors with 64-bit integers",
                    v.name(), v.type().str());
    }
    return llvm::Error::success();
  }

  /// Whether the static part of `s` has at most 2^60 elements (so that
  /// element and byte offsets never overflow 64 bits).
  static bool fitsIndexing(const Shape &s) {
    int64_t n = 1;
    for (const Dim &d : s)
      if (d.isStatic() &&
          (__builtin_mul_overflow(n, d.size, &n) || n > (int64_t(1) << 60)))
        return false;
    return true;
  }

  llvm::Error checkNode(const Node &n) {
    const OpInfo &info = n.info();
    if (n.operands().size() != info.operands.size())
      return diag(n.loc(), "{} node '{}' has {} operand slots, expected {}",
                  info.name.str(), n.result()->name(), n.operands().size(),
                  info.operands.size());
    unsigned tensors = 0;
    for (size_t i = 0; i < info.operands.size(); ++i) {
      const OperandSpec &spec = info.operands[i];
      const Value *v = n.operand(i);
      if (!v) {
        if (!spec.optional)
          return diag(n.loc(), "{} node '{}' lacks its operand '{}'",
                      info.name.str(), n.result()->name(), spec.name);
        continue;
      }
      if (v->id() >= defined_.size() || g_.values()[v->id()].get() != v)
        return diag(n.loc(), "{} node '{}' uses a value of another graph",
                    info.name.str(), n.result()->name());
      if (v->isLiteral()) {
        if (!spec.allowsScalar)
          return diag(n.loc(),
                      "{} node '{}': operand '{}' cannot be a "
                      "number",
                      info.name.str(), n.result()->name(), spec.name);
        continue;
      }
      ++tensors;
      if (!defined_[v->id()])
        return diag(n.loc(),
                    "{} node '{}' uses '{}' before it is defined (nodes "
                    "must be in topological order)",
                    info.name.str(), n.result()->name(), v->name());
    }
    if (tensors == 0)
      return diag(n.loc(), "{} node '{}' has no tensor operand",
                  info.name.str(), n.result()->name());
    if (llvm::Error e = checkAttrs(n))
      return e;
    llvm::Expected<TensorType> t = info.infer(n);
    if (!t)
      return t.takeError();
    if (*t != n.result()->type())
      return diag(n.loc(), "'{}' is recorded as {} but {} gives {}",
                  n.result()->name(), n.result()->type().str(), info.name.str(),
                  t->str());
    return llvm::Error::success();
  }

  llvm::Error checkAttrs(const Node &n) {
    const OpInfo &info = n.info();
    llvm::StringSet<> seen;
    for (const auto &[name, attr] : n.attrs()) {
      const AttrSpec *spec = info.findAttr(name);
      if (!spec || name != spec->name)
        return diag(n.loc(), "{} has no attribute '{}'", info.name.str(), name);
      if (!seen.insert(name).second)
        return diag(n.loc(), "{}: attribute '{}' appears twice",
                    info.name.str(), name);
      if (attr.kind() != spec->kind)
        return diag(n.loc(), "{}: attribute '{}' must be {}, not {}",
                    info.name.str(), name, attrKindName(spec->kind).str(),
                    attrKindName(attr.kind()).str());
      if (spec->kind == AttrKind::IntList && spec->listLength &&
          attr.getInts().size() != spec->listLength)
        return diag(n.loc(), "{}: attribute '{}' must have {} values",
                    info.name.str(), name, spec->listLength);
      if (spec->kind == AttrKind::String && !spec->choices.empty() &&
          !llvm::is_contained(spec->choices, llvm::StringRef(attr.getString())))
        return diag(n.loc(), "{}: attribute '{}' has the invalid value {}",
                    info.name.str(), name, attr.str());
    }
    for (const AttrSpec &spec : info.attrs)
      if (spec.required && !seen.contains(spec.name))
        return diag(n.loc(), "{} lacks the required attribute '{}'",
                    info.name.str(), spec.name);
    return llvm::Error::success();
  }

  llvm::Error checkNamedDims() {
    llvm::SmallVector<std::string, 4> bound = g_.symbols();
    for (Value *p : g_.params())
      for (const Dim &d : p->shape())
        if (!d.isStatic() && !llvm::is_contained(bound, d.symbol))
          return diag(p->loc(),
                      "parameter '{}' uses the named dim '{}', which no "
                      "input has, so nothing could bind it; use a fixed "
                      "size or add it to an input's shape",
                      p->name(), d.symbol);
    return llvm::Error::success();
  }

  llvm::Error checkOutputs() {
    if (g_.outputs().empty())
      return diag(g_.locate({}), "graph '{}' returns nothing", g_.name());
    llvm::SmallVector<const Value *, 4> seen;
    for (const Value *v : g_.outputs()) {
      if (v->isLiteral())
        return diag(g_.locate({}), "graph '{}' returns a number", g_.name());
      if (llvm::is_contained(seen, v))
        return diag(v->loc(), "'{}' is returned twice", v->name());
      seen.push_back(v);
    }
    return llvm::Error::success();
  }

  const Graph &g_;
  std::vector<bool> defined_;
};

} // namespace

llvm::Error verifyGraph(const Graph &g) { return Verifier(g).run(); }

std::vector<std::string> unusedValueWarnings(const Graph &g) {
  std::vector<llvm::SmallVector<Node *, 2>> users = g.users();
  std::vector<std::string> out;
  for (const auto &v : g.values()) {
    if (v->isLiteral() || !users[v->id()].empty() ||
        llvm::is_contained(g.outputs(), v.get()))
      continue;
    std::string where = g.locate(v->loc()).str();
    const char *kind = v->isInput()   ? "input"
                       : v->isParam() ? "parameter"
                                      : "value";
    out.push_back(fmt::format(
        "{}{}warning: {} '{}' is never used: no op reads it and the graph "
        "does not return it",
        where, where.empty() ? "" : ": ", kind, v->name()));
  }
  return out;
}

} // namespace kiln
