#include "Specialize.h"

#include "llvm/ADT/StringExtras.h"

namespace kiln {

llvm::Expected<DimBindings>
bindDims(const Graph &g,
         llvm::ArrayRef<llvm::SmallVector<int64_t, 6>> inputShapes) {
  if (inputShapes.size() != g.inputs().size())
    return userError("graph '{}' takes {} input{}, got {}", g.name(),
                     g.inputs().size(), g.inputs().size() == 1 ? "" : "s",
                     inputShapes.size());
  DimBindings b;
  std::map<std::string, std::string> boundBy;
  for (size_t i = 0; i < inputShapes.size(); ++i) {
    const Value &in = *g.inputs()[i];
    llvm::ArrayRef<int64_t> actual = inputShapes[i];
    std::string actualStr = Shape::fromSizes(actual).str();
    if (actual.size() != in.shape().rank())
      return userError("input '{}' has shape {} (rank {}), but the graph "
                       "declares {} (rank {})",
                       in.name(), actualStr, actual.size(), in.shape().str(),
                       in.shape().rank());
    for (size_t d = 0; d < actual.size(); ++d) {
      const Dim &decl = in.shape()[d];
      if (actual[d] < 0)
        return userError("input '{}' has a negative size in {}", in.name(),
                         actualStr);
      if (actual[d] > kMaxDimSize)
        return userError("input '{}' has shape {}: a dim may be at most "
                         "2^31 - 1",
                         in.name(), actualStr);
      if (decl.isStatic()) {
        if (decl.size != actual[d])
          return userError("input '{}' has shape {}, but the graph declares "
                           "{}: dim {} must be {}",
                           in.name(), actualStr, in.shape().str(), d,
                           decl.size);
        continue;
      }
      auto [it, inserted] = b.emplace(decl.symbol, actual[d]);
      if (inserted) {
        boundBy[decl.symbol] = in.name();
      } else if (it->second != actual[d]) {
        return userError("named dim '{}' is {} in input '{}' but {} in "
                         "input '{}' {}; every use of a name must have the "
                         "same size",
                         decl.symbol, it->second, boundBy[decl.symbol],
                         actual[d], in.name(), actualStr);
      }
    }
  }
  return b;
}

llvm::Expected<DimBindings> parseBindings(llvm::ArrayRef<std::string> specs) {
  DimBindings b;
  for (const std::string &s : specs) {
    auto [name, value] = llvm::StringRef(s).split('=');
    int64_t size = 0;
    if (name.empty() || value.empty() || value.getAsInteger(10, size) ||
        size < 0)
      return userError("bad binding '{}': write NAME=SIZE, e.g. N=1024", s);
    if (size > kMaxDimSize)
      return userError("bad binding '{}': a dim may be at most 2^31 - 1", s);
    if (!b.emplace(name.str(), size).second)
      return userError("named dim '{}' is bound twice", name.str());
  }
  return b;
}

static llvm::Expected<TensorType>
substitute(const TensorType &t, const DimBindings &b, const Value &owner) {
  TensorType out{t.dtype, Shape()};
  for (const Dim &d : t.shape) {
    if (d.isStatic()) {
      out.shape.push_back(d);
      continue;
    }
    auto it = b.find(d.symbol);
    if (it == b.end())
      return diag(owner.loc(),
                  "named dim '{}' of '{}' {} is not bound; bind it with an "
                  "input of that shape (or --bind {}=SIZE)",
                  d.symbol, owner.name(), t.str(), d.symbol);
    out.shape.push_back(Dim(it->second));
  }
  return out;
}

llvm::Expected<std::unique_ptr<Graph>> specialize(const Graph &g,
                                                  const DimBindings &b) {
  // A binding of a name the graph does not use is most likely a typo.
  llvm::SmallVector<std::string, 4> names;
  for (llvm::ArrayRef<Value *> vs : {g.inputs(), g.params()})
    for (const Value *v : vs)
      for (const Dim &d : v->shape())
        if (!d.isStatic() && !llvm::is_contained(names, d.symbol))
          names.push_back(d.symbol);
  for (const auto &[name, size] : b)
    if (!llvm::is_contained(names, name))
      return userError("'{}' is bound to {}, but graph '{}' has no named dim "
                       "'{}' ({})",
                       name, size, g.name(), name,
                       names.empty()
                           ? "it has none"
                           : "its named dims: " + llvm::join(names, ", "));
  auto out = std::make_unique<Graph>(g.name(), g.file());
  std::vector<Value *> map(g.values().size(), nullptr);
  for (Value *in : g.inputs()) {
    llvm::Expected<TensorType> t = substitute(in->type(), b, *in);
    if (!t)
      return t.takeError();
    llvm::Expected<Value *> v = out->addInput(in->name(), *t, in->loc());
    if (!v)
      return v.takeError();
    map[in->id()] = *v;
  }
  for (Value *p : g.params()) {
    llvm::Expected<TensorType> t = substitute(p->type(), b, *p);
    if (!t)
      return t.takeError();
    llvm::Expected<Value *> v =
        out->addParam(p->name(), *t, p->init(), p->loc());
    if (!v)
      return v.takeError();
    map[p->id()] = *v;
  }
  for (const auto &n : g.nodes()) {
    llvm::SmallVector<Value *, 3> operands;
    for (Value *v : n->operands()) {
      if (v && v->isLiteral())
        map[v->id()] = out->addLiteralLike(*v);
      operands.push_back(v ? map[v->id()] : nullptr);
    }
    llvm::SmallVector<NamedAttr, 4> attrs;
    for (const auto &[name, a] : n->attrs())
      attrs.push_back({name, a, n->attrLoc(name)});
    llvm::Expected<Value *> r =
        out->addNode(n->op(), operands, attrs, n->result()->name(), n->loc());
    if (!r)
      return r.takeError();
    map[n->result()->id()] = *r;
  }
  for (Value *v : g.outputs())
    if (llvm::Error e = out->addOutput(map[v->id()], v->loc()))
      return e;
  return out;
}

std::string bindingsStr(const DimBindings &b) {
  std::string out;
  for (const auto &[name, size] : b)
    out += fmt::format("{}{}={}", out.empty() ? "" : ", ", name, size);
  return out;
}

} // namespace kiln
