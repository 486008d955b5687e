//===- Parser.cpp - The graph, its inputs, params and statements ----------===//
#include "Parser.h"
#include "FileUtil.h"
#include "ParserImpl.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MemoryBuffer.h"

namespace kiln {

bool isReservedWord(llvm::StringRef name) {
  static const llvm::StringRef words[] = {"graph", "param", "return", "true",
                                          "false", "inf",   "nan"};
  return llvm::is_contained(words, name);
}

std::string closestMatch(llvm::StringRef name,
                         llvm::ArrayRef<std::string> candidates) {
  unsigned limit = std::max<unsigned>(1, name.size() / 3);
  std::string best;
  unsigned bestDist = limit + 1;
  for (const std::string &c : candidates) {
    unsigned d = name.edit_distance(c, /*AllowReplacements=*/true, limit);
    if (d < bestDist && d < name.size()) {
      bestDist = d;
      best = c;
    }
  }
  return best;
}

llvm::Error Parser::expected(llvm::StringRef what) const {
  return diag(loc(tok()), "expected {}, got {}", what.str(), tok().describe());
}

llvm::Expected<const Token *> Parser::expect(TokKind k, llvm::StringRef what) {
  if (!tok().is(k))
    return expected(what);
  return &take();
}

llvm::Expected<const Token *> Parser::expectValueName(llvm::StringRef what) {
  if (tok().is(TokKind::Name) && isReservedWord(tok().text))
    return diag(loc(tok()),
                "'{}' is a reserved word and cannot name a value; pick "
                "another name",
                tok().text.str());
  return expect(TokKind::Name, what);
}

//===----------------------------------------------------------------------===//
// Graph header and inputs
//===----------------------------------------------------------------------===//

llvm::Expected<std::unique_ptr<Graph>> Parser::parseFile() {
  if (tok().is(TokKind::Eof))
    return diag(SourceLoc{file_, 0, 0},
                "the file holds no graph; write 'graph NAME(INPUTS) {{ ... "
                "}}'");
  if (llvm::Error e = parseHeader())
    return e;
  llvm::Expected<const Token *> open =
      expect(TokKind::LBrace, "'{' to start the graph's body");
  if (!open)
    return open.takeError();
  if (llvm::Error e = parseBody(**open))
    return e;
  if (!tok().is(TokKind::Eof))
    return diag(loc(tok()),
                "unexpected {} after the graph's closing '}}'; a file holds "
                "one graph",
                tok().describe());
  return std::move(graph_);
}

llvm::Error Parser::parseHeader() {
  if (!tok().isName("graph"))
    return expected("'graph' to start the file");
  take();
  llvm::Expected<const Token *> name = expectValueName("the graph's name");
  if (!name)
    return name.takeError();
  graph_ = std::make_unique<Graph>((*name)->text.str(), file_);
  llvm::Expected<const Token *> open =
      expect(TokKind::LParen, "'(' and the graph's inputs");
  if (!open)
    return open.takeError();
  if (consumeIf(TokKind::RParen))
    return llvm::Error::success();
  while (true) {
    if (llvm::Error e = parseInput())
      return e;
    if (consumeIf(TokKind::RParen))
      return llvm::Error::success();
    if (consumeIf(TokKind::Comma)) {
      if (consumeIf(TokKind::RParen))
        return llvm::Error::success();
      continue;
    }
    return diag(loc(tok()),
                "expected ')' to close the inputs of graph '{}' opened at "
                "{}:{}, got {}",
                graph_->name(), (*open)->line, (*open)->col, tok().describe());
  }
}

llvm::Expected<std::pair<const Token *, TensorType>>
Parser::parseTypedName(llvm::StringRef expectedName, llvm::StringRef role) {
  llvm::Expected<const Token *> name = expectValueName(expectedName);
  if (!name)
    return name.takeError();
  std::string what = fmt::format("':' and a type after {} '{}'", role.str(),
                                 (*name)->text.str());
  if (llvm::Expected<const Token *> colon = expect(TokKind::Colon, what);
      !colon)
    return colon.takeError();
  llvm::Expected<TensorType> type = parseType();
  if (!type)
    return type.takeError();
  return std::make_pair(*name, *type);
}

llvm::Error Parser::parseInput() {
  auto typed = parseTypedName("an input name", "input");
  if (!typed)
    return typed.takeError();
  auto [name, type] = *typed;
  return graph_->addInput(name->text, type, loc(*name)).takeError();
}

llvm::Expected<TensorType> Parser::parseType() {
  if (!tok().is(TokKind::Name))
    return expected("a type such as f32[N, 8]");
  const Token &dtypeTok = take();
  std::optional<DType> dtype = parseDType(dtypeTok.text);
  if (!dtype)
    return diag(loc(dtypeTok),
                "unknown dtype '{}'; expected one of f32, f16, bf16, f64, "
                "i64, bool",
                dtypeTok.text.str());
  TensorType type{*dtype, Shape()};
  std::string what = fmt::format("'[' and the dims after '{}' (write {}[] "
                                 "for a scalar)",
                                 dtypeTok.text.str(), dtypeTok.text.str());
  if (llvm::Expected<const Token *> open = expect(TokKind::LBracket, what);
      !open)
    return open.takeError();
  while (!consumeIf(TokKind::RBracket)) {
    llvm::Expected<Dim> dim = parseDim();
    if (!dim)
      return dim.takeError();
    type.shape.push_back(*dim);
    if (!consumeIf(TokKind::Comma) && !tok().is(TokKind::RBracket))
      return expected("',' or ']' after a dim");
  }
  return type;
}

llvm::Expected<Dim> Parser::parseDim() {
  if (tok().is(TokKind::Int)) {
    const Token &t = tok();
    llvm::Expected<int64_t> size = parseInt(/*allowMinus=*/false);
    if (!size)
      return size.takeError();
    if (llvm::Error e = checkSize(t, *size, "dim"))
      return e;
    return Dim(*size);
  }
  if (tok().is(TokKind::Name) && !isReservedWord(tok().text))
    return Dim::named(take().text);
  return expected("a dim (an integer, or a name such as N)");
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

llvm::Error Parser::parseBody(const Token &openBrace) {
  while (!tok().is(TokKind::RBrace)) {
    if (tok().is(TokKind::Eof))
      return diag(loc(tok()),
                  "expected '}}' to close graph '{}' opened at {}:{}, got "
                  "end of file",
                  graph_->name(), openBrace.line, openBrace.col);
    if (returned_)
      return diag(loc(tok()), "statement after 'return'; 'return' must be "
                              "the graph's last statement");
    if (llvm::Error e = parseStatement())
      return e;
  }
  if (!returned_)
    return diag(loc(tok()),
                "graph '{}' has no 'return'; end it with 'return' and the "
                "values it computes",
                graph_->name());
  take();
  return llvm::Error::success();
}

llvm::Error Parser::parseStatement() {
  llvm::Error err = llvm::Error::success();
  if (tok().isName("param"))
    err = parseParam();
  else if (tok().isName("return"))
    err = parseReturn();
  else if (tok().is(TokKind::Name))
    err = parseAssign();
  else
    err = expected("a statement (param, an assignment or return)");
  if (err)
    return err;
  consumeIf(TokKind::Semi);
  return llvm::Error::success();
}

llvm::Error Parser::parseParam() {
  take(); // 'param'
  auto typed = parseTypedName("a parameter name after 'param'", "parameter");
  if (!typed)
    return typed.takeError();
  auto [name, type] = *typed;
  std::optional<Initializer> init;
  if (consumeIf(TokKind::Equal)) {
    llvm::Expected<Initializer> parsed = parseInit();
    if (!parsed)
      return parsed.takeError();
    init = *parsed;
  }
  return graph_->addParam(name->text, type, init, loc(*name)).takeError();
}

llvm::Error Parser::parseAssign() {
  llvm::Expected<const Token *> name = expectValueName("a value name");
  if (!name)
    return name.takeError();
  std::optional<TensorType> declared;
  const Token *typeTok = nullptr;
  if (consumeIf(TokKind::Colon)) {
    typeTok = &tok();
    llvm::Expected<TensorType> type = parseType();
    if (!type)
      return type.takeError();
    declared = *type;
  }
  std::string what = fmt::format("'=' after '{}'", (*name)->text.str());
  if (llvm::Expected<const Token *> eq = expect(TokKind::Equal, what); !eq)
    return eq.takeError();
  if (!tok().is(TokKind::Name) || !peek().is(TokKind::LParen))
    return diag(loc(tok()),
                "expected an op call such as relu(x) after '{} =', got {}; "
                "a value cannot be renamed or set to a number",
                (*name)->text.str(), tok().describe());
  llvm::StringRef opText = tok().text;
  llvm::Expected<Value *> v = parseCall((*name)->text);
  if (!v)
    return v.takeError();
  if (declared && *declared != (*v)->type())
    return diag(loc(*typeTok), "'{}' is declared {} but {} gives {}",
                (*name)->text.str(), declared->str(), opText.str(),
                (*v)->type().str());
  return llvm::Error::success();
}

llvm::Error Parser::parseReturn() {
  take(); // 'return'
  do {
    SourceLoc at = loc(tok());
    llvm::Expected<Value *> v = parseExpr();
    if (!v)
      return v.takeError();
    if (llvm::Error e = graph_->addOutput(*v, at))
      return e;
  } while (consumeIf(TokKind::Comma));
  returned_ = true;
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

llvm::Expected<std::unique_ptr<Graph>> parseGraph(llvm::StringRef text,
                                                  llvm::StringRef fileName) {
  llvm::Expected<std::vector<Token>> tokens = lex(text, fileName);
  if (!tokens)
    return tokens.takeError();
  return Parser(std::move(*tokens), fileName).parseFile();
}

/// A .kg file is text: a NUL byte means it is not one (/dev/zero, a binary
/// file given by mistake). The error is located at the byte.
static llvm::Error checkNoNul(llvm::StringRef path, llvm::StringRef text,
                              size_t from) {
  size_t at = text.find('\0', from);
  if (at == llvm::StringRef::npos)
    return llvm::Error::success();
  llvm::StringRef before = text.take_front(at);
  unsigned line = 1 + before.count('\n');
  size_t lineStart = before.rfind('\n') + 1; // npos + 1 is 0
  return diag(SourceLoc{path.str(), line, unsigned(at - lineStart + 1)},
              "a NUL byte: a .kg file is text (is this a binary file?)");
}

llvm::Expected<std::unique_ptr<Graph>> parseGraphFile(llvm::StringRef path) {
  // 64 MiB is far more than any graph needs. A pipe or device is read until
  // its first NUL byte.
  size_t checked = 0;
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer = readWholeFile(
      path,
      [&](llvm::StringRef prefix) -> llvm::Expected<StreamExtent> {
        if (llvm::Error e = checkNoNul(path, prefix, checked))
          return e;
        checked = prefix.size();
        return StreamExtent{prefix.size() + (64 << 10), false};
      },
      uint64_t(64) << 20);
  if (!buffer)
    return buffer.takeError();
  if (llvm::Error e = checkNoNul(path, (*buffer)->getBuffer(), 0))
    return e;
  return parseGraph((*buffer)->getBuffer(), path);
}

} // namespace kiln
