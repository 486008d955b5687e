#include "IR/Graph.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

#include <cassert>
#include <cmath>

namespace kiln {

std::string Initializer::str() const {
  switch (kind) {
  case Kind::Zeros:
    return "zeros";
  case Kind::Ones:
    return "ones";
  case Kind::Full:
    return fmt::format("full({})", formatFloat(a));
  case Kind::Randn:
    return fmt::format("randn(seed={})", seed);
  case Kind::Uniform:
    return fmt::format("uniform({}, {}, seed={})", formatFloat(a),
                       formatFloat(b), seed);
  }
  return "";
}

std::string Value::literalStr() const {
  if (dtype() == DType::Bool)
    return literal_ != 0 ? "true" : "false";
  if (literalIsInt_)
    return std::to_string(static_cast<int64_t>(literal_));
  return formatFloat(literal_);
}

//===----------------------------------------------------------------------===//
// Node attribute access
//===----------------------------------------------------------------------===//

std::optional<Attr> Node::attr(llvm::StringRef name) const {
  for (const auto &[n, a] : attrs_)
    if (n == name)
      return a;
  if (const AttrSpec *spec = info().findAttr(name))
    return spec->defaultValue;
  return std::nullopt;
}

bool Node::hasAttr(llvm::StringRef name) const {
  return llvm::any_of(attrs_, [&](const auto &p) { return p.first == name; });
}

const SourceLoc &Node::attrLoc(llvm::StringRef name) const {
  for (const auto &[n, l] : attrLocs_)
    if (n == name)
      return l;
  return loc_;
}

int64_t Node::getInt(llvm::StringRef name) const {
  std::optional<Attr> a = attr(name);
  assert(a && a->kind() == AttrKind::Int && "missing int attribute");
  return a->getInt();
}

double Node::getFloat(llvm::StringRef name) const {
  std::optional<Attr> a = attr(name);
  assert(a && a->kind() == AttrKind::Float && "missing float attribute");
  return a->getFloat();
}

bool Node::getBool(llvm::StringRef name) const {
  std::optional<Attr> a = attr(name);
  assert(a && a->kind() == AttrKind::Bool && "missing bool attribute");
  return a->getBool();
}

std::string Node::getString(llvm::StringRef name) const {
  std::optional<Attr> a = attr(name);
  assert(a && a->kind() == AttrKind::String && "missing string attribute");
  return a->getString();
}

llvm::SmallVector<int64_t, 4> Node::getInts(llvm::StringRef name) const {
  std::optional<Attr> a = attr(name);
  assert(a && a->kind() == AttrKind::IntList && "missing int list attribute");
  llvm::ArrayRef<int64_t> v = a->getInts();
  return llvm::SmallVector<int64_t, 4>(v.begin(), v.end());
}

//===----------------------------------------------------------------------===//
// Construction
//===----------------------------------------------------------------------===//

SourceLoc Graph::locate(SourceLoc loc) const {
  if (loc.file.empty())
    loc.file = file_;
  return loc;
}

llvm::Error Graph::checkNewName(llvm::StringRef name,
                                const SourceLoc &loc) const {
  if (name.empty())
    return diag(locate(loc), "a value needs a name");
  if (Value *prev = lookup(name)) {
    std::string where = prev->loc().known()
                            ? fmt::format(" (first defined at {}:{})",
                                          prev->loc().line, prev->loc().col)
                            : "";
    return diag(locate(loc),
                "'{}' is already defined{}; each value is assigned once, "
                "pick another name",
                name.str(), where);
  }
  return llvm::Error::success();
}

Value *Graph::newValue(Value::Kind kind, std::string name, TensorType type,
                       SourceLoc loc) {
  auto v = std::make_unique<Value>();
  v->kind_ = kind;
  v->name_ = std::move(name);
  v->type_ = std::move(type);
  v->loc_ = locate(std::move(loc));
  v->id_ = static_cast<unsigned>(values_.size());
  Value *raw = v.get();
  values_.push_back(std::move(v));
  if (!raw->name_.empty())
    byName_[raw->name_] = raw;
  return raw;
}

static llvm::Error checkType(const TensorType &type, llvm::StringRef what,
                             llvm::StringRef name, const SourceLoc &loc) {
  for (const Dim &d : type.shape)
    if (d.isStatic() && d.size < 0)
      return diag(loc, "{} '{}' has a negative dimension in {}", what.str(),
                  name.str(), type.str());
  return llvm::Error::success();
}

llvm::Expected<Value *> Graph::addInput(llvm::StringRef name, TensorType type,
                                        SourceLoc loc) {
  if (llvm::Error e = checkNewName(name, loc))
    return e;
  if (llvm::Error e = checkType(type, "input", name, locate(loc)))
    return e;
  Value *v = newValue(Value::Kind::Input, name.str(), std::move(type), loc);
  inputs_.push_back(v);
  return v;
}

/// The largest finite value of a floating-point dtype below f64.
static std::optional<double> largestFinite(DType t) {
  switch (t) {
  case DType::F16:
    return 65504.0;
  case DType::BF16:
    return 0x1.fep127;
  case DType::F32:
    return 0x1.fffffep127;
  case DType::F64:
  case DType::I64:
  case DType::Bool:
    return std::nullopt;
  }
  return std::nullopt;
}

/// Refuses what PyTorch's torch.full and uniform_ refuse for the dtype (a
/// finite value beyond its range), and i64 values that an initialiser,
/// held in double, cannot give exactly.
static llvm::Error checkInitValues(const Initializer &init, DType t,
                                   llvm::StringRef name, const SourceLoc &at) {
  llvm::SmallVector<double, 2> values;
  if (init.kind == Initializer::Kind::Full)
    values = {init.a};
  else if (init.kind == Initializer::Kind::Uniform)
    values = {init.a, init.b};
  for (double v : values) {
    if (t == DType::I64 && !(std::abs(v) <= kMaxExactInteger))
      return diag(at,
                  "parameter '{}' is i64, but {} is beyond +-(2^53 - 1), the "
                  "integers Kiln keeps exactly; use a smaller value",
                  name.str(), init.str());
    std::optional<double> max = largestFinite(t);
    if (max && std::isfinite(v) && std::abs(v) > *max)
      return diag(at,
                  "parameter '{}' is {}, but {} overflows it (its largest "
                  "finite value is {}; PyTorch refuses it too); use a value "
                  "within range",
                  name.str(), dtypeName(t).str(), init.str(),
                  formatFloat(*max));
  }
  return llvm::Error::success();
}

llvm::Expected<Value *> Graph::addParam(llvm::StringRef name, TensorType type,
                                        std::optional<Initializer> init,
                                        SourceLoc loc) {
  if (llvm::Error e = checkNewName(name, loc))
    return e;
  if (llvm::Error e = checkType(type, "parameter", name, locate(loc)))
    return e;
  if (init &&
      (init->kind == Initializer::Kind::Randn ||
       init->kind == Initializer::Kind::Uniform) &&
      !isFloat(type.dtype))
    return diag(locate(loc),
                "parameter '{}' is {}, but {} fills floating-point tensors "
                "only; use zeros, ones or full(...)",
                name.str(), dtypeName(type.dtype).str(), init->str());
  if (init && init->kind == Initializer::Kind::Uniform &&
      !(init->a < init->b && std::isfinite(init->b - init->a)))
    return diag(locate(loc),
                "uniform(lo, hi, ...) needs finite lo < hi (and hi - lo "
                "finite), got {} and {}",
                formatFloat(init->a), formatFloat(init->b));
  if (init)
    if (llvm::Error e = checkInitValues(*init, type.dtype, name, locate(loc)))
      return e;
  Value *v = newValue(Value::Kind::Param, name.str(), std::move(type), loc);
  v->init_ = init;
  params_.push_back(v);
  return v;
}

Value *Graph::addLiteral(double value, bool isInt) {
  TensorType t{isInt ? DType::I64 : DType::F32, Shape()};
  Value *v = newValue(Value::Kind::Literal, "", t, {});
  v->literal_ = value;
  v->literalIsInt_ = isInt;
  return v;
}

Value *Graph::addBoolLiteral(bool value) {
  Value *v = newValue(Value::Kind::Literal, "", {DType::Bool, Shape()}, {});
  v->literal_ = value ? 1 : 0;
  return v;
}

Value *Graph::addLiteralLike(const Value &lit) {
  assert(lit.isLiteral() && "not a literal");
  return lit.dtype() == DType::Bool
             ? addBoolLiteral(lit.literal() != 0)
             : addLiteral(lit.literal(), lit.literalIsInt());
}

/// Checks a user-written attribute against its spec and converts it to the
/// spec's kind (int -> float, int -> int list).
static llvm::Expected<Attr> coerceAttr(const OpInfo &op, const AttrSpec &spec,
                                       const NamedAttr &given,
                                       const SourceLoc &loc) {
  const Attr &a = given.value;
  auto mismatch = [&]() {
    return diag(loc, "{}: attribute '{}' must be {}, got {}", op.name.str(),
                spec.name, attrKindName(spec.kind).str(), a.str());
  };
  switch (spec.kind) {
  case AttrKind::Int:
  case AttrKind::Bool:
    if (a.kind() != spec.kind)
      return mismatch();
    return a;
  case AttrKind::Float:
    if (a.kind() == AttrKind::Int)
      return Attr::ofFloat(static_cast<double>(a.getInt()));
    if (a.kind() != AttrKind::Float)
      return mismatch();
    return a;
  case AttrKind::String: {
    if (a.kind() != AttrKind::String)
      return mismatch();
    if (spec.choices.empty() ||
        llvm::is_contained(spec.choices, llvm::StringRef(a.getString())))
      return a;
    std::string allowed;
    for (const char *c : spec.choices)
      allowed += fmt::format("{}\"{}\"", allowed.empty() ? "" : ", ", c);
    return diag(loc, "{}: attribute '{}' must be one of {}, got {}",
                op.name.str(), spec.name, allowed, a.str());
  }
  case AttrKind::IntList: {
    Attr::IntList list;
    if (a.kind() == AttrKind::Int)
      list.assign(spec.listLength ? spec.listLength : 1, a.getInt());
    else if (a.kind() == AttrKind::IntList)
      list.assign(a.getInts().begin(), a.getInts().end());
    else
      return mismatch();
    if (spec.listLength && list.size() != spec.listLength)
      return diag(loc, "{}: attribute '{}' takes {} values, got {}",
                  op.name.str(), spec.name, spec.listLength, a.str());
    return Attr::ofInts(list);
  }
  }
  return mismatch();
}

llvm::Expected<Value *> Graph::addNode(OpKind op,
                                       llvm::ArrayRef<Value *> operands,
                                       llvm::ArrayRef<NamedAttr> attrs,
                                       llvm::StringRef name, SourceLoc loc) {
  const OpInfo &info = getOpInfo(op);
  loc = locate(std::move(loc));
  std::string resultName = name.str();
  if (resultName.empty()) {
    do
      resultName = fmt::format("%{}", nextTemp_++);
    while (lookup(resultName));
  } else if (llvm::Error e = checkNewName(resultName, loc)) {
    return e;
  }

  // Operands: count, presence, ownership, literals only where allowed.
  if (operands.size() > info.operands.size())
    return diag(loc, "{} takes at most {} operand{}, got {}", info.name.str(),
                info.operands.size(), info.operands.size() == 1 ? "" : "s",
                operands.size());
  auto node = std::make_unique<Node>();
  node->op_ = op;
  node->loc_ = loc;
  node->operands_.assign(operands.begin(), operands.end());
  node->operands_.resize(info.operands.size(), nullptr);
  unsigned tensorOperands = 0, presentOperands = 0;
  for (size_t i = 0; i < info.operands.size(); ++i) {
    const OperandSpec &spec = info.operands[i];
    Value *v = node->operands_[i];
    if (!v) {
      if (!spec.optional)
        return diag(loc, "{} is missing its operand '{}'", info.name.str(),
                    spec.name);
      continue;
    }
    ++presentOperands;
    if (!owns(v))
      return diag(loc, "{}: operand '{}' belongs to another graph",
                  info.name.str(), spec.name);
    if (v->isLiteral() && !spec.allowsScalar)
      return diag(loc, "{}: operand '{}' must be a tensor, not the number {}",
                  info.name.str(), spec.name, v->literalStr());
    if (!v->isLiteral())
      ++tensorOperands;
  }
  if (presentOperands && tensorOperands == 0)
    return diag(loc,
                "{} needs at least one tensor operand; it was given only "
                "numbers",
                info.name.str());

  // Attributes: known, not repeated, right kind; stored in schema order.
  llvm::StringSet<> seen;
  for (const NamedAttr &na : attrs) {
    SourceLoc aloc = na.loc.known() ? locate(na.loc) : loc;
    const AttrSpec *spec = info.findAttr(na.name);
    if (!spec) {
      std::string known;
      for (const AttrSpec &s : info.attrs)
        known += fmt::format("{}{}", known.empty() ? "" : ", ", s.name);
      return diag(aloc, "{} has no attribute '{}'{}", info.name.str(), na.name,
                  known.empty() ? std::string("; it takes none")
                                : fmt::format(" (it takes: {})", known));
    }
    if (!seen.insert(spec->name).second)
      return diag(aloc, "{}: attribute '{}' is given twice", info.name.str(),
                  spec->name);
    llvm::Expected<Attr> value = coerceAttr(info, *spec, na, aloc);
    if (!value)
      return value.takeError();
    node->attrs_.emplace_back(spec->name, std::move(*value));
    if (na.loc.known())
      node->attrLocs_.emplace_back(spec->name, aloc);
  }
  for (const AttrSpec &spec : info.attrs)
    if (spec.required && !seen.contains(spec.name))
      return diag(loc, "{} needs the attribute '{}' ({})", info.name.str(),
                  spec.name, attrKindName(spec.kind).str());
  llvm::sort(node->attrs_, [&](const auto &x, const auto &y) {
    auto pos = [&](const std::string &n) {
      return info.findAttr(n) - info.attrs.data();
    };
    return pos(x.first) < pos(y.first);
  });

  llvm::Expected<TensorType> type = info.infer(*node);
  if (!type)
    return type.takeError();
  Value *result =
      newValue(Value::Kind::Result, std::move(resultName), *type, loc);
  result->def_ = node.get();
  node->result_ = result;
  nodes_.push_back(std::move(node));
  return result;
}

llvm::Error Graph::addOutput(Value *v, SourceLoc loc) {
  if (!v)
    return diag(locate(loc), "a graph output must be a value, not null (a "
                             "failed lookup?)");
  if (!owns(v))
    return diag(locate(loc), "output '{}' belongs to another graph", v->name());
  if (v->isLiteral())
    return diag(locate(loc),
                "a graph output must be a tensor, not the "
                "number {}",
                v->literalStr());
  if (llvm::is_contained(outputs_, v))
    return diag(locate(loc), "'{}' is returned twice", v->name());
  outputs_.push_back(v);
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Queries
//===----------------------------------------------------------------------===//

bool Graph::owns(const Value *v) const {
  return v && v->id() < values_.size() && values_[v->id()].get() == v;
}

Value *Graph::lookup(llvm::StringRef name) const {
  auto it = byName_.find(name);
  return it == byName_.end() ? nullptr : it->second;
}

std::vector<llvm::SmallVector<Node *, 2>> Graph::users() const {
  std::vector<llvm::SmallVector<Node *, 2>> out(values_.size());
  for (const auto &n : nodes_)
    for (Value *v : n->operands())
      if (v && !llvm::is_contained(out[v->id()], n.get()))
        out[v->id()].push_back(n.get());
  return out;
}

llvm::SmallVector<std::string, 4> Graph::symbols() const {
  llvm::SmallVector<std::string, 4> out;
  for (Value *v : inputs_)
    for (const Dim &d : v->shape())
      if (!d.isStatic() && !llvm::is_contained(out, d.symbol))
        out.push_back(d.symbol);
  return out;
}

//===----------------------------------------------------------------------===//
// Unchecked rewriting
//===----------------------------------------------------------------------===//

void Graph::setOperand(Node &node, unsigned i, Value *v) {
  if (node.operands_.size() <= i)
    node.operands_.resize(i + 1, nullptr);
  node.operands_[i] = v;
}

void Graph::setAttr(Node &node, llvm::StringRef name, Attr value) {
  for (auto &[n, a] : node.attrs_)
    if (n == name) {
      a = std::move(value);
      return;
    }
  node.attrs_.emplace_back(name.str(), std::move(value));
}

void Graph::setType(Value &v, TensorType type) { v.type_ = std::move(type); }

void Graph::moveNode(size_t from, size_t to) {
  assert(from < nodes_.size() && to < nodes_.size());
  std::unique_ptr<Node> n = std::move(nodes_[from]);
  nodes_.erase(nodes_.begin() + from);
  nodes_.insert(nodes_.begin() + to, std::move(n));
}

} // namespace kiln
