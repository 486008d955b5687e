//===- ParserInit.cpp - Parameter initialisers ----------------------------===//
#include "ParserImpl.h"

#include "llvm/ADT/STLExtras.h"

namespace kiln {

static const char *const kInitForms =
    "zeros, ones, full(v), randn(seed=s) or uniform(lo, hi, seed=s)";

llvm::Expected<uint64_t> Parser::parseSeed() {
  if (tok().isName("seed") && peek().is(TokKind::Equal)) {
    take();
    take();
  } else if (!tok().is(TokKind::Int)) {
    return expected("a seed such as seed=1");
  }
  llvm::Expected<int64_t> seed = parseInt(/*allowMinus=*/false);
  if (!seed)
    return seed.takeError();
  return static_cast<uint64_t>(*seed);
}

llvm::Expected<double> Parser::parseFloatArg() {
  llvm::Expected<Number> n = parseNumber();
  if (!n)
    return n.takeError();
  return n->isInt ? static_cast<double>(n->i) : n->f;
}

llvm::Error Parser::parseInitArgs(Initializer &init) {
  using Kind = Initializer::Kind;
  auto arg = [&](double &out) -> llvm::Error {
    llvm::Expected<double> v = parseFloatArg();
    if (!v)
      return v.takeError();
    out = *v;
    return expect(TokKind::Comma, "',' and the next argument").takeError();
  };
  if (init.kind == Kind::Full) {
    llvm::Expected<double> v = parseFloatArg();
    if (!v)
      return v.takeError();
    init.a = *v;
    return llvm::Error::success();
  }
  if (init.kind == Kind::Uniform) {
    if (llvm::Error e = arg(init.a))
      return e;
    if (llvm::Error e = arg(init.b))
      return e;
  }
  llvm::Expected<uint64_t> seed = parseSeed();
  if (!seed)
    return seed.takeError();
  init.seed = *seed;
  return llvm::Error::success();
}

llvm::Expected<Initializer> Parser::parseInit() {
  using Kind = Initializer::Kind;
  if (!tok().is(TokKind::Name))
    return expected(fmt::format("an initialiser ({})", kInitForms));
  const Token &t = take();
  Initializer init;
  // In Initializer::Kind order.
  static const std::vector<std::string> names = {"zeros", "ones", "full",
                                                 "randn", "uniform"};
  auto it = llvm::find(names, t.text);
  if (it == names.end()) {
    std::string guess = closestMatch(t.text, names);
    return diag(loc(t), "unknown initialiser '{}'; expected {}{}", t.text.str(),
                kInitForms,
                guess.empty() ? ""
                              : fmt::format(" (did you mean '{}'?)", guess));
  }
  init.kind = static_cast<Kind>(it - names.begin());
  if (init.kind == Kind::Zeros || init.kind == Kind::Ones)
    return init;
  std::string open = fmt::format("'(' after '{}'", t.text.str());
  if (llvm::Error e = expect(TokKind::LParen, open).takeError())
    return e;
  if (llvm::Error e = parseInitArgs(init))
    return e;
  std::string close = fmt::format("')' to close '{}('", t.text.str());
  if (llvm::Error e = expect(TokKind::RParen, close).takeError())
    return e;
  return init;
}

} // namespace kiln
