//===- ParserExpr.cpp - Calls, operands, numbers and attributes -----------===//
#include "ParserImpl.h"

#include <cmath>
#include <cstdlib>

namespace kiln {

/// Calls nest at most this deep; deeper nesting is surely a mistake and
/// would only exhaust the stack.
static constexpr unsigned kMaxCallDepth = 200;
/// Integer operands become doubles; beyond 2^53 they would change value.
static constexpr int64_t kMaxIntOperand = int64_t(1) << 53;

llvm::Error Parser::checkSize(const Token &t, int64_t v,
                              llvm::StringRef what) const {
  if (v <= kMaxDimSize && v >= -kMaxDimSize)
    return llvm::Error::success();
  if (what == "dim")
    return diag(loc(t), "dim {} is too large; a dim is at most {}", v,
                kMaxDimSize);
  return diag(loc(t), "{} {} is out of range; it must lie within -{} to {}",
              what.str(), v, kMaxDimSize, kMaxDimSize);
}

struct Parser::CallState {
  const OpInfo &info;
  const Token &opTok;
  llvm::SmallVector<Value *, 3> operands;
  llvm::SmallVector<NamedAttr, 4> attrs;
  unsigned positional = 0;
  const Token *firstKeyword = nullptr;
};

static std::string operandList(const OpInfo &info) {
  std::string out;
  for (const OperandSpec &s : info.operands)
    out += fmt::format("{}{}", out.empty() ? "" : ", ", s.name);
  return out;
}

//===----------------------------------------------------------------------===//
// Numbers and attribute values
//===----------------------------------------------------------------------===//

llvm::Expected<Parser::Number> Parser::parseNumber() {
  bool negative = consumeIf(TokKind::Minus);
  const Token &t = tok();
  if (t.is(TokKind::Int)) {
    take();
    int64_t v = 0;
    if (t.text.getAsInteger(10, v))
      return diag(loc(t), "integer {} is too large; the largest is {}",
                  t.text.str(), INT64_MAX);
    return Number{true, negative ? -v : v, 0};
  }
  if (!t.is(TokKind::Float))
    return expected(negative ? "a number after '-'" : "a number");
  take();
  double v = 0;
  if (t.text == "inf")
    v = INFINITY;
  else if (t.text == "nan")
    v = NAN;
  else
    v = std::strtod(t.text.str().c_str(), nullptr);
  if (std::isinf(v) && t.text != "inf")
    return diag(loc(t), "float {} is out of range; write inf for infinity",
                t.text.str());
  return Number{false, 0, negative ? -v : v};
}

llvm::Expected<int64_t> Parser::parseInt(bool allowMinus) {
  if (!allowMinus && !tok().is(TokKind::Int))
    return expected("a non-negative integer");
  const Token &first = tok();
  llvm::Expected<Number> n = parseNumber();
  if (!n)
    return n.takeError();
  if (!n->isInt)
    return diag(loc(first), "expected an integer, got the float {}",
                formatFloat(n->f));
  return n->i;
}

llvm::Expected<Attr> Parser::parseIntList() {
  const Token &open = take(); // '['
  Attr::IntList list;
  while (!consumeIf(TokKind::RBracket)) {
    const Token &first = tok();
    llvm::Expected<int64_t> v = parseInt(/*allowMinus=*/true);
    if (!v)
      return v.takeError();
    if (llvm::Error e = checkSize(first, *v, "integer attribute"))
      return e;
    list.push_back(*v);
    if (consumeIf(TokKind::Comma) || tok().is(TokKind::RBracket))
      continue;
    return diag(loc(tok()),
                "expected ',' or ']' in the list opened at {}:{}, got {}",
                open.line, open.col, tok().describe());
  }
  return Attr::ofInts(list);
}

llvm::Expected<Attr> Parser::parseAttrValue() {
  const Token &t = tok();
  if (t.isName("true") || t.isName("false")) {
    take();
    return Attr::ofBool(t.text == "true");
  }
  if (t.is(TokKind::String)) {
    take();
    return Attr::ofString(t.str);
  }
  if (t.is(TokKind::LBracket))
    return parseIntList();
  if (!t.is(TokKind::Int) && !t.is(TokKind::Float) && !t.is(TokKind::Minus))
    return expected("an attribute value (a number, true, false, a string "
                    "or a list such as [1, 2])");
  llvm::Expected<Number> n = parseNumber();
  if (!n)
    return n.takeError();
  if (!n->isInt)
    return Attr::ofFloat(n->f);
  if (llvm::Error e = checkSize(t, n->i, "integer attribute"))
    return e;
  return Attr::ofInt(n->i);
}

//===----------------------------------------------------------------------===//
// Operands
//===----------------------------------------------------------------------===//

llvm::Expected<Value *> Parser::parseExpr(llvm::StringRef name) {
  const Token &t = tok();
  if (t.is(TokKind::Name) && peek().is(TokKind::LParen))
    return parseCall(name);
  if (t.isName("true") || t.isName("false")) {
    take();
    return graph_->addBoolLiteral(t.text == "true");
  }
  if (t.is(TokKind::Name))
    return parseValueRef();
  if (t.is(TokKind::Int) || t.is(TokKind::Float) || t.is(TokKind::Minus))
    return parseLiteral();
  return expected("an operand (a value name, an op call, a number, true or "
                  "false)");
}

const Token *Parser::laterDefinition(llvm::StringRef name) const {
  // A definition is NAME followed by '=' or ':' where a statement starts;
  // keyword arguments (bias=b) follow '(' or ',' instead.
  for (size_t i = pos_; i + 1 < toks_.size(); ++i) {
    const Token &t = toks_[i];
    if (!t.is(TokKind::Name) || t.text != name)
      continue;
    bool assigned =
        toks_[i + 1].is(TokKind::Equal) || toks_[i + 1].is(TokKind::Colon);
    bool statementStart =
        !toks_[i - 1].is(TokKind::LParen) && !toks_[i - 1].is(TokKind::Comma);
    if (assigned && statementStart)
      return &t;
  }
  return nullptr;
}

llvm::Expected<Value *> Parser::parseValueRef() {
  const Token &t = take();
  if (isReservedWord(t.text))
    return diag(loc(t), "'{}' is a reserved word, not a value", t.text.str());
  if (Value *v = graph_->lookup(t.text))
    return v;
  if (const Token *def = laterDefinition(t.text))
    return diag(loc(t),
                "'{}' is used here but only defined later, at {}:{}; "
                "statements run in order, so move its definition up",
                t.text.str(), def->line, def->col);
  std::vector<std::string> names;
  for (const auto &v : graph_->values())
    if (!v->name().empty())
      names.push_back(v->name());
  std::string guess = closestMatch(t.text, names);
  if (!guess.empty())
    return diag(loc(t), "use of undefined value '{}'; did you mean '{}'?",
                t.text.str(), guess);
  return diag(loc(t),
              "use of undefined value '{}'; define it (or add it as a graph "
              "input) before it is used",
              t.text.str());
}

llvm::Expected<Value *> Parser::parseLiteral() {
  const Token &first = tok();
  llvm::Expected<Number> n = parseNumber();
  if (!n)
    return n.takeError();
  if (!n->isInt)
    return graph_->addLiteral(n->f, /*isInt=*/false);
  if (n->i > kMaxIntOperand || n->i < -kMaxIntOperand)
    return diag(loc(first),
                "integer operand {} is too large; number operands lie within "
                "+-2^53",
                n->i);
  return graph_->addLiteral(static_cast<double>(n->i), /*isInt=*/true);
}

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

llvm::Error Parser::unknownOp(const Token &t) const {
  if (graph_->lookup(t.text))
    return diag(loc(t), "'{}' is a value, not an op; it cannot be called",
                t.text.str());
  std::vector<std::string> names;
  for (const OpInfo &info : allOps()) {
    names.push_back(info.name.str());
    for (const char *alias : info.aliases)
      names.push_back(alias);
  }
  std::string guess = closestMatch(t.text, names);
  if (!guess.empty())
    return diag(loc(t), "unknown op '{}'; did you mean '{}'?", t.text.str(),
                guess);
  return diag(loc(t), "unknown op '{}'; docs/ops.md lists the ops",
              t.text.str());
}

llvm::Expected<Value *> Parser::parseCall(llvm::StringRef name) {
  const Token &opTok = take();
  const OpInfo *info = lookupOp(opTok.text);
  if (!info)
    return unknownOp(opTok);
  take(); // '('
  if (depth_ >= kMaxCallDepth)
    return diag(loc(opTok),
                "calls nest more than {} deep; name some intermediate values",
                kMaxCallDepth);
  ++depth_;
  CallState call{*info, opTok, {}, {}, 0, nullptr};
  call.operands.resize(info->operands.size(), nullptr);
  while (!consumeIf(TokKind::RParen)) {
    if (llvm::Error e = parseArg(call))
      return e;
    if (consumeIf(TokKind::Comma) || tok().is(TokKind::RParen))
      continue;
    return diag(loc(tok()),
                "expected ')' to close the call to '{}' opened at {}:{}, got "
                "{}",
                opTok.text.str(), opTok.line, opTok.col, tok().describe());
  }
  --depth_;
  return graph_->addNode(info->kind, call.operands, call.attrs, name,
                         loc(opTok));
}

llvm::Error Parser::parseArg(CallState &call) {
  if (tok().is(TokKind::Name) && peek().is(TokKind::Equal))
    return parseKeywordArg(call);
  return parsePositionalArg(call);
}

llvm::Error Parser::parsePositionalArg(CallState &call) {
  const Token &t = tok();
  const OpInfo &info = call.info;
  if (call.firstKeyword)
    return diag(loc(t),
                "positional operand after the keyword argument '{}'; put "
                "positional operands first",
                call.firstKeyword->text.str());
  if (call.positional >= info.operands.size())
    return diag(loc(t),
                "{} takes at most {} operand{} ({}); this is one too "
                "many",
                info.name.str(), info.operands.size(),
                info.operands.size() == 1 ? "" : "s", operandList(info));
  llvm::Expected<Value *> v = parseExpr();
  if (!v)
    return v.takeError();
  call.operands[call.positional++] = *v;
  return llvm::Error::success();
}

llvm::Error Parser::parseKeywordArg(CallState &call) {
  const OpInfo &info = call.info;
  const Token &key = take();
  take(); // '='
  if (!call.firstKeyword)
    call.firstKeyword = &key;
  int index = info.findOperand(key.text);
  if (index >= 0) {
    if (call.operands[index])
      return diag(loc(key), "operand '{}' of {} is given twice{}",
                  key.text.str(), info.name.str(),
                  unsigned(index) < call.positional
                      ? fmt::format(" (it is positional operand {})", index + 1)
                      : "");
    llvm::Expected<Value *> v = parseExpr();
    if (!v)
      return v.takeError();
    call.operands[index] = *v;
    return llvm::Error::success();
  }
  const Token &vt = tok();
  if (vt.is(TokKind::Name) && !vt.isName("true") && !vt.isName("false")) {
    if (const AttrSpec *spec = info.findAttr(key.text)) {
      if (spec->kind == AttrKind::String)
        return diag(loc(vt),
                    "attribute '{}' of {} is a string; write it in quotes: "
                    "\"{}\"",
                    key.text.str(), info.name.str(), vt.text.str());
      return diag(loc(vt), "attribute '{}' of {} must be {}, not the name '{}'",
                  key.text.str(), info.name.str(),
                  attrKindName(spec->kind).str(), vt.text.str());
    }
    return diag(loc(key), "'{}' is not an operand of {} (operands: {})",
                key.text.str(), info.name.str(), operandList(info));
  }
  llvm::Expected<Attr> value = parseAttrValue();
  if (!value)
    return value.takeError();
  call.attrs.push_back(NamedAttr{key.text.str(), *value, loc(key)});
  return llvm::Error::success();
}

} // namespace kiln
